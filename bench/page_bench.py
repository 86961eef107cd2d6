"""Page speed as a person feels it: time to first paint and to each page's main heading,
cold (the first visit after the app starts) and warm (the next visit), for every page.

    .venv/bin/python bench/page_bench.py                # median of 3, all pages
    .venv/bin/python bench/page_bench.py --repeat 1 --pages results stability
    .venv/bin/python bench/page_bench.py --settle 5     # the first visitor comes 5 s after start

Each cold measure starts `streamlit run streamlit_app.py` afresh (a free loopback port,
a fresh EVALCORE_HOME, as tests/e2e do), waits for its health endpoint and `--settle`
seconds, then opens the page in Debian's chromium (Playwright, /usr/bin/chromium; never
`playwright install`); the warm measure opens it again in a new tab of the same server.
`paint` is the browser's first contentful paint; `heading` is the moment the page's
`st.title` is visible (target: under 2 s, issue 21). The table gives medians of --repeat.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
PAGES = {  # url path -> the page's main heading (its page_setup title)
    "": "evalcore", "datasets": "Datasets", "models": "Models", "stability": "Stability",
    "attacks": "Attacks", "robustness": "Robustness", "fairness": "Fairness",
    "results": "Results",
}
TARGET_S = 2.0
START_TIMEOUT_S = 120
PAINT_JS = """() => {
  const p = performance.getEntriesByName('first-contentful-paint')[0];
  return p ? p.startTime / 1000 : null;
}"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def app(home: Path) -> Iterator[str]:
    """`streamlit run streamlit_app.py` on a free loopback port; yields its URL once healthy."""
    port = free_port()
    env = dict(os.environ, EVALCORE_HOME=str(home), PYTHONPATH=str(ROOT))
    env.pop("EVALCORE_DB_URL", None)
    env.pop("EVALCORE_MODELS", None)
    log = home.parent / f"streamlit-{port}.log"
    cmd = [sys.executable, "-m", "streamlit", "run", "streamlit_app.py",
           "--server.port", str(port), "--server.address", "127.0.0.1",
           "--server.headless", "true", "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none", "--server.runOnSave", "false"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not start:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def visit(context, url: str, heading: str) -> dict[str, float | None]:  # noqa: ANN001
    """Open `url` in a new tab; seconds to first paint and to the main heading."""
    page = context.new_page()
    page.set_default_timeout(120_000)
    try:
        started = time.perf_counter()
        page.goto(url, wait_until="commit")
        page.get_by_role("heading", name=heading, exact=True).first.wait_for()
        seen = time.perf_counter() - started
        paint = page.evaluate(PAINT_JS)
        return {"paint": None if paint is None else round(paint, 3), "heading": round(seen, 3)}
    finally:
        page.close()


def measure(context, path: str, settle: float) -> dict[str, dict]:  # noqa: ANN001
    """One fresh app: the cold visit of `path`, then a warm one."""
    with tempfile.TemporaryDirectory(prefix="page-bench-") as tmp, \
            app(Path(tmp) / "home") as url:
        time.sleep(settle)
        cold = visit(context, f"{url}/{path}", PAGES[path])
        warm = visit(context, f"{url}/{path}", PAGES[path])
    return {"cold": cold, "warm": warm}


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(statistics.median(known), 2) if known else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="fresh starts per page (median)")
    parser.add_argument("--pages", nargs="*", default=list(PAGES),
                        help="url paths ('' is Home); default every page")
    parser.add_argument("--settle", type=float, default=0.0,
                        help="seconds between the app's health and the first visit")
    parser.add_argument("--json", help="also write every measure here")
    args = parser.parse_args()
    unknown = set(args.pages) - set(PAGES)
    if unknown:
        parser.error(f"unknown page(s) {sorted(unknown)}; known: {sorted(PAGES)}")
    from playwright.sync_api import sync_playwright

    rows: dict[str, list[dict]] = {path: [] for path in args.pages}
    with tempfile.TemporaryDirectory(prefix="page-bench-profile-") as profile, \
            sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 860})
        try:
            for _ in range(args.repeat):  # round-robin: the machine's load hits every page
                for path in args.pages:
                    rows[path].append(measure(context, path, args.settle))
                    print(json.dumps({"page": path or "home", **rows[path][-1]}), flush=True)
        finally:
            context.close()
    print(f"\nmedian of {args.repeat}, seconds (target: heading < {TARGET_S:g} s)")
    print(f"{'page':<12}{'cold paint':>11}{'cold heading':>14}{'warm paint':>12}"
          f"{'warm heading':>14}  ok")
    for path, runs in rows.items():
        cells = [_median([r[visit_][key] for r in runs])
                 for visit_ in ("cold", "warm") for key in ("paint", "heading")]
        ok = all(c is not None and c < TARGET_S for c in (cells[1], cells[3]))
        print(f"{path or 'home':<12}" + "".join(f"{c if c is not None else '-':>{w}}" for c, w in
                                                zip(cells, (11, 14, 12, 14))) + f"  {ok}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
