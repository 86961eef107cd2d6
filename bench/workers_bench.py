"""Worker throughput and takeover against PostgreSQL and the fault server.

Scenario "scale": R runs x Q questions x N rounds (default 6 x 100 x 10 = 1,000 calls
each) at 200 ms latency, each run with 20 slots of one model whose concurrency is 20 x R,
queued at once and executed by 1, 2 and 3 `python -m evalcore worker --jobs 2`
processes. Ideal wall = waves x ceil(calls / 20) x latency, waves = ceil(R / (2 W)).

Scenario "takeover": the same runs on 3 workers with room to spare (--jobs 3); one worker
is killed with SIGKILL once its runs have stored calls; measured: the delay from the kill
to another worker's claim of each orphaned run (bounded by the lease, EVALCORE_LEASE_S,
default 15 s), whether every run ends done, and how many calls the server saw beyond
the runs' totals (only the calls in flight at the kill may be sent again).

    .venv/bin/python bench/workers_bench.py                 # the README table
    .venv/bin/python bench/workers_bench.py --quick         # 6 x 200 calls
    .venv/bin/python bench/workers_bench.py --only takeover --lease 5
    .venv/bin/python bench/workers_bench.py --only path --repeat 5   # C=50, foreground vs worker
    .venv/bin/python bench/workers_bench.py --only shared --grid 4x3,8x10 --db sqlite   # one model budget

Scenario "path": the stability C=50 run (100 x 10 at 200 ms) executed in the foreground
CLI and by a worker process, compared on the run's own stored span.

Each scenario prints one JSON line. PostgreSQL is a throw-away cluster from Debian's
binaries (tests/fakes/postgres.py), the fault server runs in its own process.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from stability_bench import Server, cli, prepare, run_span  # noqa: E402
from tests.fakes.postgres import create_database, temporary_cluster  # noqa: E402

PY = sys.executable
SLOTS = 20
LATENCY = 0.2


def setup(db_url: str, home: Path, port: int, runs: int, questions: int, rounds: int,
          model_slots: int | None = None) -> list[int]:
    """A dataset per run, one model of concurrency `model_slots` (default SLOTS x runs: room
    for every run's SLOTS); queues the runs."""
    from evalcore.dataset import import_dataset
    from evalcore.providers.base import ModelConfig
    from evalcore.providers.registry import add_model
    from evalcore.runner.plan import RunSpec
    from evalcore.runner.start import store_run
    from evalcore.store.db import make_engine

    home.mkdir(parents=True, exist_ok=True)
    models = home / "models.toml"
    add_model(models, ModelConfig(name="fake", kind="openai", base_url=f"http://127.0.0.1:{port}/v1",
                                  model="fake", concurrency=model_slots or SLOTS * runs, timeout=30,
                                  max_attempts=10, max_retry_wait=600))
    engine = make_engine(db_url)
    ids = []
    for k in range(runs):
        csv = home / f"set{k}.csv"
        csv.write_text("question,answer\n" + "\n".join(
            f'"[set{k}] What is {i} plus {i}?",{2 * i}' for i in range(questions)) + "\n")
        import_dataset(engine, csv, name=f"set{k}", mapping={
            "question": "question", "reference": "answer", "task_type": "math", "language": "en"})
        ids.append(store_run(engine, RunSpec(dataset=f"set{k}", model="fake", rounds=rounds,
                                              concurrency=SLOTS), models))
    engine.dispose()
    return ids


def workers(db_url: str, home: Path, count: int, jobs: int, lease: float) -> list[subprocess.Popen]:
    env = {**os.environ, "EVALCORE_HOME": str(home), "EVALCORE_DB_URL": db_url,
           "EVALCORE_MODELS": str(home / "models.toml"), "PYTHONPATH": str(ROOT),
           "EVALCORE_LEASE_S": str(lease)}
    return [subprocess.Popen([PY, "-m", "evalcore", "worker", "--jobs", str(jobs), "--name",
                              f"w{n}"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL) for n in range(count)]


def stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        p.wait(timeout=60)


def state(db_url: str):  # noqa: ANN201 - the engine, for polling
    from evalcore.store.db import make_engine

    return make_engine(db_url)


def scale(base: str, count: int, runs: int, questions: int, rounds: int) -> dict:
    server = Server(latency=LATENCY)
    db_url = create_database(base, f"scale_{uuid.uuid4().hex[:8]}")
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        run_ids = setup(db_url, home, server.port, runs, questions, rounds)
        engine = state(db_url)
        from evalcore.store import queries

        start = time.perf_counter()
        procs = workers(db_url, home, count, 2, 15.0)
        while not all(queries.get_run(engine, r).status in queries.FINISHED for r in run_ids):
            time.sleep(0.05)
        wall = time.perf_counter() - start
        stop(procs)
        done = [queries.get_run(engine, r) for r in run_ids]
        engine.dispose()
    stats = server.stats()
    server.stop()
    calls = questions * rounds
    waves = math.ceil(runs / (2 * count))
    ideal = waves * math.ceil(calls / SLOTS) * LATENCY
    return {"scenario": "scale", "workers": count, "jobs_per_worker": 2, "runs": runs,
            "calls_per_run": calls, "slots_per_run": SLOTS, "latency_ms": LATENCY * 1000,
            "wall_s": round(wall, 2), "ideal_s": round(ideal, 2),
            "efficiency": round(ideal / wall, 3), "all_done": all(r.status == "done" for r in done),
            "server_requests": stats["requests"], "expected_requests": runs * calls}


def shared(base: str | None, count: int, runs: int, questions: int, rounds: int) -> dict:
    """R runs wanting SLOTS each on ONE model whose concurrency is SLOTS, executed at once by
    `count` workers: the runs share the model's slots, so the ideal wall is every call of
    every run at SLOTS in flight; measured from the first run's start to the last one's end
    (stored), never above the budget (the server's peak). `base` None: one SQLite file."""
    server = Server(latency=LATENCY)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        db_url = (create_database(base, f"shared_{uuid.uuid4().hex[:8]}") if base
                  else f"sqlite:///{home / 'evalcore.db'}")
        run_ids = setup(db_url, home, server.port, runs, questions, rounds, model_slots=SLOTS)
        engine = state(db_url)
        from evalcore.store import queries

        procs = workers(db_url, home, count, math.ceil(runs / count), 15.0)
        while not all(queries.get_run(engine, r).status in queries.FINISHED for r in run_ids):
            time.sleep(0.05)
        stop(procs)
        done = [queries.get_run(engine, r) for r in run_ids]
        engine.dispose()
    stats = server.stats()
    server.stop()
    wall = (max(r.finished_at for r in done) - min(r.started_at for r in done)).total_seconds()
    ideal = math.ceil(runs * questions * rounds / SLOTS) * LATENCY
    return {"scenario": "shared", "db": "postgresql" if base else "sqlite", "workers": count, "runs": runs, "model_slots": SLOTS,
            "calls_per_run": questions * rounds, "latency_ms": LATENCY * 1000,
            "wall_s": round(wall, 2), "ideal_s": round(ideal, 2),
            "efficiency": round(ideal / wall, 3), "peak_in_flight": stats["max_in_flight"],
            "all_done": all(r.status == "done" for r in done),
            "server_requests": stats["requests"], "expected_requests": runs * questions * rounds}


def takeover(base: str, runs: int, questions: int, rounds: int, lease: float) -> dict:
    from evalcore.store import jobs, queries

    server = Server(latency=LATENCY)
    db_url = create_database(base, f"takeover_{uuid.uuid4().hex[:8]}")
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        run_ids = setup(db_url, home, server.port, runs, questions, rounds)
        engine = state(db_url)
        procs = workers(db_url, home, 3, 3, lease)
        victim = None
        while victim is None:
            time.sleep(0.1)
            for job in jobs.list_jobs(engine, status=["running"]):
                if queries.count_calls(engine, job.run_id) >= 50:
                    victim = job
                    break
        held = [j for j in jobs.list_jobs(engine, status=["running"]) if j.owner == victim.owner]
        procs[int(victim.owner[1:])].send_signal(signal.SIGKILL)
        killed = time.perf_counter()
        delays: dict[int, float] = {}
        while len(delays) < len(held):
            for j in held:
                now = jobs.get_job(engine, j.id)
                if j.id not in delays and now.token > j.token:
                    delays[j.id] = round(time.perf_counter() - killed, 2)
            time.sleep(0.05)
        while not all(queries.get_run(engine, r).status in queries.FINISHED for r in run_ids):
            time.sleep(0.1)
        stop([p for p in procs if p.poll() is None])
        done = [queries.get_run(engine, r) for r in run_ids]
        stored = sum(queries.count_calls(engine, r) for r in run_ids)
        engine.dispose()
    stats = server.stats()
    server.stop()
    return {"scenario": "takeover", "workers": 3, "lease_s": lease, "runs": runs,
            "orphaned_runs": len(held), "takeover_delay_s": sorted(delays.values()),
            "all_done": all(r.status == "done" for r in done), "stored_calls": stored,
            "server_requests": stats["requests"],
            "sent_again": stats["requests"] - stored}


def path(questions: int, rounds: int, concurrency: int, repeat: int) -> dict:
    """One stability run (SQLite) executed by the CLI in the foreground vs queued with
    --detach and executed by a `worker --once` process: the run's own span (stored start
    to end) and its efficiency, median of `repeat`."""
    import statistics

    spans: dict[str, list[float]] = {"foreground": [], "worker": []}
    for _ in range(repeat):
        for mode in spans:
            server = Server(latency=LATENCY)
            try:
                with tempfile.TemporaryDirectory() as tmp:
                    home = Path(tmp)
                    prepare(home, questions, server.port, concurrency)
                    args = ("stability", "--dataset", "bench", "--model", "fake", "--rounds",
                            str(rounds))
                    if mode == "foreground":
                        cli(home, *args)
                    else:
                        cli(home, *args, "--detach")
                        cli(home, "worker", "--once")
                    spans[mode].append(run_span(home, 1))
            finally:
                server.stop()
    ideal = math.ceil(questions * rounds / concurrency) * LATENCY
    medians = {mode: statistics.median(v) for mode, v in spans.items()}
    return {"scenario": "path", "C": concurrency, "calls": questions * rounds,
            "ideal_s": ideal, **{f"{m}_run_s": round(v, 3) for m, v in medians.items()},
            **{f"{m}_efficiency": round(ideal / v, 3) for m, v in medians.items()},
            "worker_vs_foreground": round(medians["foreground"] / medians["worker"], 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="6 runs x 200 calls")
    parser.add_argument("--only", choices=("scale", "takeover", "path", "shared"))
    parser.add_argument("--grid", default="1x1,1x3,4x3,2x10,8x10",
                        help="shared: WORKERSxRUNS pairs, comma-separated")
    parser.add_argument("--db", choices=("postgresql", "sqlite"), default="postgresql",
                        help="shared: the database the workers share")
    parser.add_argument("--repeat", type=int, default=3, help="runs per mode (path)")
    parser.add_argument("--lease", type=float, default=15.0, help="lease seconds (takeover)")
    args = parser.parse_args()
    questions, rounds = (20, 10) if args.quick else (100, 10)
    if args.only in (None, "path"):
        print(json.dumps(path(100, 10, 50, args.repeat)), flush=True)
        if args.only == "path":
            return 0
    with temporary_cluster() as base:
        if args.only in (None, "shared"):
            for pair in args.grid.split(","):
                count, runs = (int(x) for x in pair.split("x"))
                db = base if args.db == "postgresql" else None
                print(json.dumps(shared(db, count, runs, questions, rounds)), flush=True)
        if args.only in (None, "scale"):
            for count in (1, 2, 3):
                print(json.dumps(scale(base, count, 6, questions, rounds)), flush=True)
        if args.only in (None, "takeover"):
            print(json.dumps(takeover(base, 6, questions, rounds, args.lease)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
