"""Reads of a run with a million calls, each timed as a whole process (start-up
included), CPU seconds (user + system of the child, `os.wait4`) and wall, medians of 3;
`ok` compares CPU with the target (wall depends on what else the machine runs).

    .venv/bin/python bench/million_reads.py                     # 10,000 questions x 100 rounds
    .venv/bin/python bench/million_reads.py --questions 1000    # 100,000 calls, a quicker look
    .venv/bin/python bench/million_reads.py --home /tmp/m1 --keep   # reuse a built store
    .venv/bin/python bench/million_reads.py --postgres   # a fresh PostgreSQL 15 cluster

Builds two finished stability runs (the same dataset, two models) straight in a fresh
SQLite store, calls inserted in bulk (not run), then times `runs show`, `runs show
--json`, `compare A B`, `leaderboard`, `trend` and `report` (the trust report HTML). The
first read of a finished run counts its calls and stores its summary
(`store/run_summary.py`); the figures are the reads after that ("warm"), and the first
one is printed too ("cold"). One JSON line per measure; target < 2 s each.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PY = str(ROOT / ".venv" / "bin" / "python")


def _emit(**row: object) -> None:
    print(json.dumps(row, ensure_ascii=False), flush=True)


def build(questions: int, rounds: int,
          skills: tuple[float, ...] = (0.6, 0.7)) -> tuple[int, ...]:
    """One finished stability run of `questions` x `rounds` answer calls per skill (the share
    of right answers; two by default); (dataset, run ids...)."""
    from sqlalchemy import insert

    from evalcore.config import load_settings
    from evalcore.dataset import load_items
    from evalcore.store import queries
    from evalcore.store.db import get_engine
    from evalcore.store.tables import Call, RunItem
    CALL = Call.__table__
    RUN_ITEM = RunItem.__table__
    from tests.fakes.stored_runs import seed_dataset

    engine = get_engine(load_settings().db_url)
    ds = seed_dataset(engine, "million", [f"What is {i} + {i}?" for i in range(questions)],
                      [str(2 * i) for i in range(questions)])
    item_ids = [int(i.id) for i in load_items(engine, ds)]
    now = datetime.now(UTC)
    runs = []
    for k, skill in enumerate(skills):
        model = f"m{k}"
        spec = {"kind": "stability", "dataset": "million", "model": model, "rounds": rounds,
                "judge": "rules"}
        run = queries.create_run(
            engine, kind="stability", dataset_id=ds, model=model, status="done",
            rounds=rounds, total=questions * rounds, done=questions * rounds,
            started_at=now, finished_at=now,
            config={"spec": spec, "item_ids": item_ids,
                    "models": {model: {"name": model, "price_in": 1.0, "price_out": 2.0}}})
        rng = random.Random(k)
        with engine.begin() as conn:
            conn.execute(insert(RUN_ITEM), [
                {"run_id": run.id, "position": p, "item_id": item,
                 "prompt": f"Answer with a number. What is {p} + {p}?"}
                for p, item in enumerate(item_ids)])
        batch: list[dict] = []
        for p, item in enumerate(item_ids):
            for r in range(rounds):
                right = rng.random() < skill
                value = 2 * p if right else 2 * p + 1
                batch.append({"run_id": run.id, "item_id": item, "round": r + 1,
                              "stage": "answer", "model": model, "prompt": "",
                              "answer": f"The answer is {value}.", "extracted": str(value),
                              "correct": right, "score": float(right), "latency_ms": 5.0,
                              "prompt_tokens": 20, "completion_tokens": 6, "attempts": 1,
                              "created_at": now})
            if len(batch) >= 50_000:
                with engine.begin() as conn:
                    conn.execute(insert(CALL), batch)
                batch = []
        if batch:
            with engine.begin() as conn:
                conn.execute(insert(CALL), batch)
        runs.append(int(run.id))
    engine.dispose()
    return (ds, *runs)


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, exit code) of one whole `python -m evalcore` process."""
    started = time.perf_counter()
    proc = subprocess.Popen([PY, "-m", "evalcore", *args], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        sys.stderr.write(proc.stderr.read().decode()[-2000:] if proc.stderr else "")
    return usage.ru_utime + usage.ru_stime, wall, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--home", default="", help="store directory (default: a new one)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated measure names")
    parser.add_argument("--postgres", action="store_true",
                        help="store in a temporary PostgreSQL cluster (built each time)")
    args = parser.parse_args()
    if args.postgres:
        from tests.fakes.postgres import create_database, temporary_cluster

        with temporary_cluster() as base:
            os.environ["EVALCORE_DB_URL"] = create_database(base, "million")
            measure(args)
    else:
        os.environ.pop("EVALCORE_DB_URL", None)
        measure(args)


def measure(args: argparse.Namespace) -> None:
    """Build the two runs (unless the store holds them) and time each read."""
    home = Path(args.home or f"/tmp/million_reads_{args.questions}x{args.rounds}")
    os.environ["EVALCORE_HOME"] = str(home)
    ids_file = home / ("bench_ids_pg.json" if args.postgres else "bench_ids.json")
    if ids_file.exists() and not args.postgres:
        ds, a, b = json.loads(ids_file.read_text())
    else:
        home.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        ds, a, b = build(args.questions, args.rounds)
        ids_file.write_text(json.dumps([ds, a, b]))
        _emit(measure="build", calls=2 * args.questions * args.rounds,
              seconds=round(time.perf_counter() - started, 1))
    if not args.postgres:
        db = home / "evalcore.db"
        _emit(measure="database", mb=round(db.stat().st_size / 1e6, 1),
              calls=2 * args.questions * args.rounds)
    env = {**os.environ, "EVALCORE_HOME": str(home)}
    measures = {
        "runs show": ["runs", "show", str(a)],
        "runs show --json": ["runs", "show", "--json", str(a)],
        "compare A B": ["compare", str(a), str(b)],
        "leaderboard": ["leaderboard", "--dataset", "million"],
        "trend": ["trend", "--dataset", "million", "--metric", "accuracy"],
        "report": ["report", "--model", "m0", "--html", str(home / "report.html")],
    }
    only = {m.strip() for m in args.only.split(",") if m.strip()}
    for name, cli in measures.items():
        if only and name not in only:
            continue
        cold = timed(cli, env)
        runs = [timed(cli, env) for _ in range(args.repeat)]
        _emit(measure=name, db="postgres" if args.postgres else "sqlite", calls_per_run=args.questions * args.rounds,
              cpu_s=round(statistics.median(r[0] for r in runs), 2),
              wall_s=round(statistics.median(r[1] for r in runs), 2),
              cold_cpu_s=round(cold[0], 2), exit=max(r[2] for r in runs + [cold]),
              target_s=2.0, ok=statistics.median(r[0] for r in runs) < 2.0)


if __name__ == "__main__":
    main()
