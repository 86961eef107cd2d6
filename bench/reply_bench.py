"""A model that answers 10 MB: the cost of a 30-call stability run (6 questions x 5 rounds)
against the fault server in `--mode big` (its own process).

Prints one JSON line: the CLI process's peak RSS (MB, from wait4), wall seconds, the
database's size after the run and the size of the `--json` report.

    .venv/bin/python bench/reply_bench.py [--reply-mb 10] [--root DIR]

`--root` runs another checkout's evalcore (e.g. `git archive <commit> | tar -x -C DIR`)
with this venv, for before/after figures; the fault server always comes from this one.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = [(f"Tom has {a} apples and buys {b} more. How many apples now?", a + b)
             for a, b in [(3, 4), (10, 5), (7, 8), (20, 22), (1, 1), (9, 30)]]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_up(url: str) -> None:
    for _ in range(100):
        try:
            urllib.request.urlopen(url, timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"fault server did not start at {url}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reply-mb", type=float, default=10.0)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to run")
    args = parser.parse_args()
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "tests.fakes.fault_server", "--port",
                               str(port), "--mode", "big", "--big-bytes",
                               str(int(args.reply_mb * 1024 * 1024))], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_up(f"http://127.0.0.1:{port}/health")
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp) / "home"
            home.mkdir()
            (home / "models.toml").write_text(
                f'[models.big]\nkind = "openai"\nbase_url = "http://127.0.0.1:{port}/v1"\n'
                'model = "big"\nconcurrency = 6\ntimeout = 60\n', encoding="utf-8")
            data = Path(tmp) / "apples.csv"
            data.write_text("question,answer\n" + "".join(f'"{q}",{a}\n' for q, a in QUESTIONS),
                            encoding="utf-8")
            env = {k: v for k, v in os.environ.items() if not k.startswith("EVALCORE_")}
            env["EVALCORE_HOME"] = str(home)
            mapping = json.dumps({"question": "question", "reference": "answer",
                                  "task_type": "math", "language": "en"})
            subprocess.run([sys.executable, "-m", "evalcore", "datasets", "import", str(data),
                            "--mapping", mapping], cwd=args.root, env=env, check=True,
                           capture_output=True)
            report = Path(tmp) / "report.json"
            started = time.perf_counter()
            proc = subprocess.Popen([sys.executable, "-m", "evalcore", "stability", "--dataset",
                                     "apples", "--model", "big", "--rounds", "5", "--json",
                                     str(report)], cwd=args.root, env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - started
            db_mb = sum(p.stat().st_size for p in home.glob("evalcore.db*")) / 1e6
            result = {"scenario": f"30 calls, {args.reply_mb:g} MB replies",
                      "exit_code": os.waitstatus_to_exitcode(status),
                      "wall_s": round(wall, 2),
                      "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
                      "database_mb": round(db_mb, 1),
                      "json_report_mb": round(report.stat().st_size / 1e6, 2)
                      if report.exists() else None}
    finally:
        server.terminate()
        server.wait(10)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
