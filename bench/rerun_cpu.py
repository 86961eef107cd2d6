"""The app server's CPU per script rerun: a browser moves through every page by its sidebar
links (each move is a rerun of the new page's script), with Streamlit's garbage
collection after each run on and off (`runner.postScriptGC`, off in .streamlit/config.toml).

    .venv/bin/python bench/rerun_cpu.py                 # 3 tours of the pages, repeat 3
    .venv/bin/python bench/rerun_cpu.py --tours 5 --repeat 5

The server is `scripts/serve_app.py` (as `make run` starts it, warm-up included) over one
EVALCORE_HOME filled as bench/page_bench.py fills it; the CPU is the server process's
user + system time from /proc, read before and after the tours, once its warm-up is over.
The two settings alternate; medians of --repeat.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from page_bench import CHROMIUM, CHROMIUM_ARGS, PAGES, free_port, prepare

_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def tour_cpu(browser, home: Path, gc_after_run: bool, tours: int) -> dict[str, float]:
    """Start the app, wait for its warm-up, then `tours` times through every page."""
    import urllib.request

    port = free_port()
    env = dict(os.environ, EVALCORE_HOME=str(home), PYTHONPATH=str(ROOT))
    env.pop("EVALCORE_DB_URL", None)
    cmd = [sys.executable, "scripts/serve_app.py", "--server.port", str(port),
           "--server.address", "127.0.0.1", "--server.headless", "true",
           "--server.fileWatcherType", "none",
           "--runner.postScriptGC", "true" if gc_after_run else "false"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                    break
            except OSError:
                time.sleep(0.2)
        page = browser.new_page()
        page.set_default_timeout(120_000)
        page.goto(url)
        page.get_by_role("heading", name=PAGES[""], exact=True).first.wait_for()
        time.sleep(10)  # the warm-up imports every page's modules after the first visit
        before, moves = cpu_s(proc.pid), 0
        for _ in range(tours):
            for path, heading in [*list(PAGES.items())[1:], ("", PAGES[""])]:
                page.locator(f'[data-testid="stSidebarNav"] a[href$="/{path}"]').click()
                page.get_by_role("heading", name=heading, exact=True).first.wait_for()
                page.wait_for_timeout(300)
                page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden")
                moves += 1
        used = cpu_s(proc.pid) - before
        page.close()
        return {"cpu_s": round(used, 2), "moves": moves, "per_move_s": round(used / moves, 3)}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tours", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3, help="finished runs in the database")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        home = Path(tmp) / "home"
        prepare(home, args.runs)
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=CHROMIUM_ARGS)
        rows: dict[bool, list[dict]] = {True: [], False: []}
        for _ in range(args.repeat):
            for gc_after_run in (True, False):
                rows[gc_after_run].append(tour_cpu(browser, home, gc_after_run, args.tours))
        browser.close()
    for gc_after_run, found in rows.items():
        print(json.dumps({"postScriptGC": gc_after_run, "moves": found[0]["moves"],
                          "cpu_s": statistics.median(r["cpu_s"] for r in found),
                          "per_move_s": statistics.median(r["per_move_s"] for r in found),
                          "load": round(os.getloadavg()[0], 1)}), flush=True)


if __name__ == "__main__":
    main()
