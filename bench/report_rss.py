"""Peak memory of a stability run's end-of-run report, at 100,000 and 1,000,000 calls.

    .venv/bin/python bench/report_rss.py                         # 1,000 and 10,000 questions x 100
    .venv/bin/python bench/report_rss.py --questions 1000 --repeat 3
    .venv/bin/python bench/report_rss.py --questions 1000 --tracemalloc   # what the peak holds

After its last call a stability run computes its report from the stored calls and stores
it (`report_figures`: the outcome counts, `stability_report(..., with_rounds=False)`, then
`store.run_summary` writes both): the run's peak memory (the calls themselves are written
and let go as they come). This builds a finished run straight in a fresh SQLite store
(calls inserted in bulk, as `million_reads.py` does), then, in a fresh process, deletes
what an earlier measure stored and runs `report_figures` as the run's end does, `repeat`
times, and prints the process's peak RSS (`ru_maxrss` from `os.wait4`), the median, and
the RSS after start-up (imports and the engine: what a run of any size pays). One JSON
line per measure. `bench/run_rss.py` measures a whole run, asked against the fault server.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PY = str(ROOT / ".venv" / "bin" / "python")

CHILD = """
import resource, sys, json
from sqlalchemy import delete
from evalcore.config import load_settings
from evalcore.store.db import get_engine
from evalcore.store.tables import RunSummary
from evalcore.report.stability_summary import report_figures
engine = get_engine(load_settings().db_url)
TABLE = RunSummary.__table__
with engine.begin() as conn:  # what the run's end computes: nothing stored yet
    conn.execute(delete(TABLE).where(TABLE.c.run_id == int(sys.argv[1])))
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if sys.argv[2] == "trace":
    import tracemalloc
    tracemalloc.start(8)
report = report_figures(engine, int(sys.argv[1]))
if sys.argv[2] == "trace":
    current, peak = tracemalloc.get_traced_memory()
    snap = tracemalloc.take_snapshot()
    print(json.dumps({"traced_peak_mb": round(peak / 1e6, 1),
                      "traced_now_mb": round(current / 1e6, 1)}), file=sys.stderr)
    for stat in snap.statistics("lineno")[:12]:
        print(stat, file=sys.stderr)
print(json.dumps({"startup_kb": base, "questions": len(report["stability_results"])}))
"""


def _emit(**row: object) -> None:
    print(json.dumps(row, ensure_ascii=False), flush=True)


def store(questions: int, rounds: int) -> tuple[Path, int]:
    """A store holding one finished run of `questions` x `rounds` calls (built once)."""
    home = Path(f"/tmp/report_rss_{questions}x{rounds}")
    ids = home / "bench_ids.json"
    if not ids.exists():
        home.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        out = subprocess.run([PY, "-c", (
            "import sys, json; sys.path.insert(0, 'bench'); from million_reads import build; "
            f"print(json.dumps(build({questions}, {rounds}, skills=(0.6,))))")],
            env={**os.environ, "EVALCORE_HOME": str(home)}, cwd=ROOT, check=True,
            capture_output=True, text=True).stdout
        ids.write_text(out)
        _emit(measure="build", calls=questions * rounds,
              seconds=round(time.perf_counter() - started, 1))
    return home, int(json.loads(ids.read_text())[1])


def peak(home: Path, run_id: int, trace: bool, code: Path = ROOT) -> tuple[float, float]:
    """(peak RSS MB, RSS MB after start-up) of one process computing the report with the
    evalcore in `code` (another checkout's, for a before and after)."""
    env = {**os.environ, "EVALCORE_HOME": str(home)}
    env.pop("EVALCORE_DB_URL", None)
    proc = subprocess.Popen([PY, "-c", CHILD, str(run_id), "trace" if trace else "-"],
                            env=env, cwd=code, stdout=subprocess.PIPE,
                            stderr=None if trace else subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        sys.stderr.write(proc.stderr.read().decode()[-2000:] if proc.stderr else "")
        raise SystemExit("the report failed")
    child = json.loads(proc.stdout.read() if proc.stdout else "{}")
    return usage.ru_maxrss / 1024, child["startup_kb"] / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", default="1000,10000",
                        help="comma-separated question counts")
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--code", type=Path, default=ROOT,
                        help="a checkout whose evalcore computes the report (default: this one)")
    parser.add_argument("--tracemalloc", action="store_true",
                        help="once, with the top allocations at the end (slower)")
    args = parser.parse_args()
    medians = {}
    for questions in [int(q) for q in args.questions.split(",")]:
        home, run_id = store(questions, args.rounds)
        runs = [peak(home, run_id, args.tracemalloc, args.code)
                for _ in range(1 if args.tracemalloc else args.repeat)]
        medians[questions] = statistics.median(r[0] for r in runs)
        _emit(measure="end-of-run report peak RSS", calls=questions * args.rounds,
              load=round(os.getloadavg()[0], 1),
              peak_mb=[round(r[0], 1) for r in runs], median_mb=round(medians[questions], 1),
              startup_mb=round(statistics.median(r[1] for r in runs), 1))
    if len(medians) > 1:
        small, big = min(medians), max(medians)
        ratio = medians[big] / medians[small]
        _emit(measure="ratio", calls=[small * args.rounds, big * args.rounds],
              ratio=round(ratio, 2), target=1.5, ok=ratio <= 1.5)


if __name__ == "__main__":
    main()
