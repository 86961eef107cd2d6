"""Page speed as a person feels it: time to first paint and to each page's main heading,
for every page: cold, first and warm visits.

    .venv/bin/python bench/page_bench.py                # median of 3, all pages
    .venv/bin/python bench/page_bench.py --repeat 1 --pages results stability

- cold: the app's very first visit after `streamlit run` starts (a fresh process, this
  page first);
- first: the page's first visit in a process that has served one visit of Home
  `--settle` seconds before (default 8: the app's warm-up runs after its first page;
  evalcore/warmup.py): what a visitor who does not open the app first meets;
- warm: the page's next visit (a new tab, same process).

Each cold measure starts `streamlit run streamlit_app.py` afresh on a free loopback port
(as tests/e2e do) over one EVALCORE_HOME whose database the bench fills first (a
restart of an installed app with a dataset and --runs finished runs); pages open in Debian's chromium
(Playwright, /usr/bin/chromium; never `playwright install`). `paint` is the browser's first
contentful paint; `heading` is the moment the page's `st.title` is visible (target: under
2 s, issue 21). The table gives medians of --repeat.
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
sys.path.insert(0, str(ROOT))
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
PLAIN = False
"""--plain: start bare `streamlit run` (no warm-up before the first visitor)."""
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
    """The app as `make run` starts it (scripts/serve_app.py: `streamlit run` with the
    warm-up started first; PLAIN: bare `streamlit run`) on a free loopback port; yields
    its URL once healthy."""
    port = free_port()
    env = dict(os.environ, EVALCORE_HOME=str(home), PYTHONPATH=str(ROOT))
    env.pop("EVALCORE_DB_URL", None)
    env.pop("EVALCORE_MODELS", None)
    log = home.parent / f"streamlit-{port}.log"
    launch = (["-m", "streamlit", "run", "streamlit_app.py"] if PLAIN
              else ["scripts/serve_app.py"])
    cmd = [sys.executable, *launch,
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


def visit(context, url: str, heading: str) -> dict[str, float | None]:
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


def measure_cold(context, home: Path, path: str) -> dict[str, dict]:
    """One fresh app: the cold visit of `path`, then a warm one."""
    with app(home) as url:
        cold = visit(context, f"{url}/{path}", PAGES[path])
        warm = visit(context, f"{url}/{path}", PAGES[path])
    return {"cold": cold, "warm": warm}


def measure_first(context, home: Path, paths: list[str], settle: float
                  ) -> dict[str, dict]:
    """One fresh app visited at Home, `settle` seconds, then each page's first visit."""
    with app(home) as url:
        visit(context, f"{url}/", PAGES[""])
        time.sleep(settle)
        return {path: visit(context, f"{url}/{path}", PAGES[path]) for path in paths}


def prepare(home: Path, runs: int) -> None:
    """The database an installed app restarts with: schema at head, one small dataset and
    `runs` finished stability runs (50 questions x 5 rounds, verdicts from a fixed seed),
    so Stability and Results draw tables and charts as they do for a team."""
    import random

    from evalcore.config import settings_from_env
    from evalcore.store.db import make_engine
    from tests.fakes.stored_runs import seed_dataset, seed_run

    engine = make_engine(settings_from_env({"EVALCORE_HOME": str(home)}).db_url)
    dataset = seed_dataset(engine, "sample", [f"What is {i} plus {i}?" for i in range(50)])
    rng = random.Random(0)
    for k in range(runs):
        seed_run(engine, dataset, {i: [int(rng.random() < 0.6 + 0.1 * k) for _ in range(5)]
                                   for i in range(50)}, rounds=5, model=f"model-{k}")
    engine.dispose()


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(statistics.median(known), 2) if known else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="fresh starts per page (median)")
    parser.add_argument("--pages", nargs="*", default=list(PAGES),
                        help="url paths ('' is Home); default every page")
    parser.add_argument("--settle", type=float, default=8.0,
                        help="seconds between Home's visit and the pages' first visits")
    parser.add_argument("--runs", type=int, default=3, help="finished runs in the database")
    parser.add_argument("--first-only", action="store_true",
                        help="only the 'first' visits (one fresh process per repeat)")
    parser.add_argument("--json", help="also write every measure here")
    parser.add_argument("--plain", action="store_true",
                        help="bare `streamlit run`, not scripts/serve_app.py (as make run)")
    args = parser.parse_args()
    global PLAIN
    PLAIN = args.plain
    unknown = set(args.pages) - set(PAGES)
    if unknown:
        parser.error(f"unknown page(s) {sorted(unknown)}; known: {sorted(PAGES)}")
    from playwright.sync_api import sync_playwright

    rows: dict[str, list[dict]] = {path: [] for path in args.pages}
    with tempfile.TemporaryDirectory(prefix="page-bench-") as tmp, sync_playwright() as pw:
        home = Path(tmp) / "home"
        prepare(home, args.runs)
        context = pw.chromium.launch_persistent_context(
            str(Path(tmp) / "profile"), executable_path=CHROMIUM, headless=True,
            args=CHROMIUM_ARGS, viewport={"width": 1280, "height": 860})
        try:
            for _ in range(args.repeat):  # round-robin: the machine's load hits every page
                for path in args.pages:
                    rows[path].append(
                        {"cold": {"paint": None, "heading": None},
                         "warm": {"paint": None, "heading": None}} if args.first_only
                        else measure_cold(context, home, path))
                firsts = measure_first(context, home, args.pages, args.settle)
                for path in args.pages:
                    rows[path][-1]["first"] = firsts[path]
                    print(json.dumps({"page": path or "home", **rows[path][-1]}), flush=True)
        finally:
            context.close()
    visits = ("cold", "first", "warm")
    print(f"\nmedian of {args.repeat}, seconds to first paint / to the main heading "
          f"(target: heading < {TARGET_S:g} s)")
    print(f"{'page':<12}" + "".join(f"{v + ' paint':>13}{v + ' heading':>15}" for v in visits))
    for path, runs in rows.items():
        cells = [_median([r[v][key] for r in runs]) for v in visits
                 for key in ("paint", "heading")]
        print(f"{path or 'home':<12}" + "".join(
            f"{c if c is not None else '-':>{13 if k % 2 == 0 else 15}}"
            for k, c in enumerate(cells)))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
