"""Peak RSS of a whole stability run, asked against the fault server (1 ms a call, C=100).

    .venv/bin/python bench/run_rss.py --questions 1000        # 100,000 calls
    .venv/bin/python bench/run_rss.py --questions 10000       # 1,000,000 calls (long)

`python -m evalcore stability --dataset bench --model fake --rounds N` in a fresh store,
the process's peak RSS read by `os.wait4` (`ru_maxrss`, what GNU time's %M shows): the
asking and the end-of-run report together, where `bench/report_rss.py` measures the
report alone. One JSON line per run.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from stability_bench import Server, prepare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("-c", "--concurrency", type=int, default=100)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="run_rss_"))
    server = Server(latency=0.001)
    try:
        prepare(home, args.questions, server.port, args.concurrency)
        env = {**os.environ, "EVALCORE_HOME": str(home), "PYTHONPATH": str(ROOT)}
        env.pop("EVALCORE_DB_URL", None)
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "evalcore", "stability", "--dataset",
                                 "bench", "--model", "fake", "--rounds", str(args.rounds)],
                                cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        print(json.dumps({"calls": args.questions * args.rounds,
                          "exit": os.waitstatus_to_exitcode(status),
                          "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
                          "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
                          "wall_s": round(time.perf_counter() - started, 1),
                          "load": os.getloadavg()[0], "home": str(home)}), flush=True)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
