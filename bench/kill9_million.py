"""kill -9 of a 1,000,000-call run's worker, then `runs resume`: nothing stored is lost,
no unit is stored twice, and only the calls in flight at the kill are sent again.

    .venv/bin/python bench/kill9_million.py                        # 10,000 questions x 100 rounds
    .venv/bin/python bench/kill9_million.py --questions 1000       # 100,000 calls, a quicker look

The run is `python -m evalcore stability` (the CLI process is the run's worker) against
the fault server (1 ms a call, C=100), killed with SIGKILL once `--kill-at` of its calls
are stored; `runs resume --force` finishes it (the heartbeat of the dead process is still
fresh). One JSON line: calls stored at the kill, after the resume, units stored twice,
calls lost (stored before the kill and gone after), requests the server saw beyond one
per call (at most the calls in flight at the kill), and `ok`.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
PY = sys.executable

from stability_bench import Server, prepare


def _newest(db: Path) -> int:
    """The newest call's id (the calls stored so far, read without counting them)."""
    if not db.exists():
        return 0
    with sqlite3.connect(db, timeout=30) as conn:
        return conn.execute("SELECT max(id) FROM call").fetchone()[0] or 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("-c", "--concurrency", type=int, default=100)
    parser.add_argument("--kill-at", type=float, default=0.3, help="share of calls stored")
    parser.add_argument("--home", default="", help="store directory (default: a new one)")
    args = parser.parse_args()
    total = args.questions * args.rounds
    home = Path(args.home or tempfile.mkdtemp(prefix="kill9_million_"))
    server = Server(latency=0.001)
    try:
        prepare(home, args.questions, server.port, args.concurrency)
        env = {**os.environ, "EVALCORE_HOME": str(home), "PYTHONPATH": str(ROOT)}
        env.pop("EVALCORE_DB_URL", None)
        db = home / "evalcore.db"
        started = time.perf_counter()
        proc = subprocess.Popen([PY, "-m", "evalcore", "stability", "--dataset", "bench",
                                 "--model", "fake", "--rounds", str(args.rounds)],
                                cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        while proc.poll() is None and _newest(db) < args.kill_at * total:
            time.sleep(0.5)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        with sqlite3.connect(db) as conn:
            run_id, done = conn.execute(
                "SELECT id, done FROM run ORDER BY id DESC LIMIT 1").fetchone()
            kept_ids = {row[0] for row in conn.execute(
                "SELECT id FROM call WHERE run_id = ?", (run_id,))}
        resumed = subprocess.run([PY, "-m", "evalcore", "runs", "resume", str(run_id),
                                  "--force"], cwd=ROOT, env=env, capture_output=True, check=False,
                                 text=True)
        with sqlite3.connect(db) as conn:
            after_ids = {row[0] for row in conn.execute(
                "SELECT id FROM call WHERE run_id = ?", (run_id,))}
            units, distinct = conn.execute(
                "SELECT count(*), count(DISTINCT item_id || ':' || round || ':' || stage) "
                "FROM call WHERE run_id = ? AND stage = 'answer'", (run_id,)).fetchone()
        shown = subprocess.run([PY, "-m", "evalcore", "runs", "show", "--json", str(run_id)],
                               cwd=ROOT, env=env, capture_output=True, text=True, check=True)
        final = json.loads(shown.stdout)  # the run's status is its job's (store/run_state.py)
        final_status, final_done = final["status"], final["done"]
        requests = server.stats()["requests"]
        out = {"calls": total, "killed_at_stored": len(kept_ids), "done_at_kill": done, "resume_exit": resumed.returncode,
               "stored_after": len(after_ids), "answer_units": units,
               "units_stored_twice": units - distinct, "lost": len(kept_ids - after_ids),
               "requests_beyond_one_per_call": requests - total,
               "final_status": final_status, "final_done": final_done,
               "wall_s": round(time.perf_counter() - started, 1)}
        out["ok"] = (out["lost"] == 0 and out["units_stored_twice"] == 0 and units == total
                     and final_status == "done" and done <= len(kept_ids)
                     and 0 <= out["requests_beyond_one_per_call"] <= args.concurrency)
        if resumed.returncode:
            out["resume_stderr"] = resumed.stderr[-500:]
        print(json.dumps(out), flush=True)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
