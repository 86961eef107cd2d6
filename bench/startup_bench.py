"""Start-up as a user feels it: `python -m evalcore --help` and a worker's readiness.

- help: wall and CPU seconds (user + system, from wait4) of `python -m evalcore --help`
  (target: under 0.15 s);
- worker: wall seconds from the exec of `python -m evalcore worker` to its first
  heartbeat row (the time the worker itself writes in it), against a database already
  created; and the worker's CPU seconds then, read from /proc when the row is seen
  (target: under 1 s).

Medians of `--repeat` processes, alternated; one JSON line. The machine's load shows in
the wall figures, far less in the CPU ones.

    .venv/bin/python bench/startup_bench.py --repeat 7
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TICKS = os.sysconf("SC_CLK_TCK")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALCORE_")}
    env.update(EVALCORE_HOME=str(home), PYTHONPATH=str(ROOT))
    return env


def help_once(env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one `--help` process."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "evalcore", "--help"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 0, proc.returncode
    return wall, usage.ru_utime + usage.ru_stime


def _cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def worker_once(env: dict[str, str], db: Path) -> tuple[float, float]:
    """(wall to the first heartbeat, CPU then) of one `worker` process."""
    started = datetime.now(UTC)
    proc = subprocess.Popen([sys.executable, "-m", "evalcore", "worker", "--name", "bench"],
                            cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with sqlite3.connect(db) as conn:
                row = conn.execute("SELECT heartbeat_at FROM worker WHERE name = 'bench'"
                                   ).fetchone()
            if row:
                cpu = _cpu_of(proc.pid)
                beat = datetime.fromisoformat(row[0])
                beat = beat if beat.tzinfo else beat.replace(tzinfo=UTC)
                return (beat - started).total_seconds(), cpu
            time.sleep(0.005)
        raise TimeoutError("no heartbeat within 60 s")
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        env = _env(home)
        subprocess.run([sys.executable, "-m", "evalcore", "datasets", "list"], cwd=ROOT,
                       env=env, check=True, capture_output=True)  # the database, migrated
        db = home / "evalcore.db"
        helps, workers = [], []
        for _ in range(args.repeat):
            helps.append(help_once(env))
            workers.append(worker_once(env, db))

    def median(pairs: list[tuple[float, float]], i: int) -> float:
        return round(statistics.median(p[i] for p in pairs), 3)

    print(json.dumps({
        "repeat": args.repeat, "load": round(os.getloadavg()[0], 1),
        "help_wall_s": median(helps, 0), "help_cpu_s": median(helps, 1),
        "worker_ready_wall_s": median(workers, 0), "worker_ready_cpu_s": median(workers, 1),
    }))


if __name__ == "__main__":
    main()
