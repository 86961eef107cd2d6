"""Stability-run throughput, CPU and memory against the fault server, CLI process measured whole.

Efficiency = ideal / wall, ideal = ceil(M*N / C) * latency, wall measured around the
whole `python -m evalcore stability` process (start-up, import, store, report).
The server runs in its own process so it does not share the CLI's interpreter.

    .venv/bin/python bench/stability_bench.py            # the README table
    .venv/bin/python bench/stability_bench.py --quick    # a smaller smoke run
    .venv/bin/python bench/stability_bench.py --only 1 --repeat 5   # median of 5 runs
    .venv/bin/python bench/stability_bench.py --only 6 --repeat 3   # server admits 40 of C=50
    .venv/bin/python bench/stability_bench.py --only 10 --repeat 3  # its reference: no cap, C=40
    .venv/bin/python bench/stability_bench.py --startup --repeat 5  # start-up budget (issue 22)

`--startup` measures a run's start-up, from the CLI's exec to the first request the server
sees (budget 0.45 s) and the CPU seconds the process spent until it sent it (what the
shared machine's load does not inflate; bench/startup_floor.py puts it beside processes
that only store a run), and the efficiency of 100 questions x 10 rounds at C=50 against a bare
aiohttp client (bench/bare_client.py) measured in the same breath, run for run alternately
(target >= 0.95 of it); and `python -m evalcore --help` (budget 0.15 s). Medians of --repeat.

Scenarios with a server cap answer 429 + Retry-After above the cap (4: cap 10 at C=50,
5: cap 8 at C=10, 6: cap 40 at C=50); their ideal uses min(C, cap) slots, and every call
must end answered (`answered` = calls, `errors` = 0). The model uses the default retry
settings (`max_attempts`, `max_retry_wait`, `rate_limit_wait`), as a user's would.

evalcore's bytecode is compiled first, as `pip install` does for an installed package:
with PYTHONDONTWRITEBYTECODE=1 (set on this project's machine) Python would otherwise
recompile every evalcore module from source in each CLI process (~0.1 s).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """The fault server (tests/fakes) in a child process."""

    def __init__(self, **faults: float) -> None:
        self.port = free_port()
        args = [PY, "-m", "tests.fakes.fault_server", "--port", str(self.port)]
        for key, value in faults.items():
            args += [f"--{key.replace('_', '-')}", str(value)]
        self.proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=1)
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("fault server did not start")

    def stats(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=5) as r:
            return json.load(r)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def cli(home: Path, *args: str) -> int:
    """Run the CLI; returns its peak RSS in KB (GNU time's %M: this process alone)."""
    env = {**os.environ, "EVALCORE_HOME": str(home), "PYTHONPATH": str(ROOT)}
    env.pop("EVALCORE_DB_URL", None)
    rss = home / "rss.txt"
    subprocess.run(["/usr/bin/time", "-f", "%M", "-o", str(rss), PY, "-m", "evalcore", *args],
                   cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    return int(rss.read_text().split()[-1])


def prepare(home: Path, questions: int, port: int, concurrency: int) -> None:
    home.mkdir(parents=True, exist_ok=True)
    csv = home / "bench.csv"
    rows = ["question,answer"] + [f"What is {i} plus {i}?,{2 * i}" for i in range(questions)]
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    mapping = home / "mapping.json"
    mapping.write_text(json.dumps({"question": "question", "reference": "answer",
                                   "task_type": "math", "language": "en"}))
    from evalcore.dataset import import_dataset
    from evalcore.providers.base import ModelConfig
    from evalcore.providers.registry import add_model
    from evalcore.store.db import make_engine

    engine = make_engine(f"sqlite:///{home / 'evalcore.db'}")
    import_dataset(engine, csv, name="bench", mapping=json.loads(mapping.read_text()))
    engine.dispose()
    add_model(home / "models.toml", ModelConfig(
        name="fake", kind="openai", base_url=f"http://127.0.0.1:{port}/v1", model="fake",
        concurrency=concurrency, timeout=30))  # retry settings: the defaults users get


def run_span(home: Path, run_id: int) -> float:
    """Seconds from the run's start to its end as stored (the runner alone, no process start)."""
    import sqlite3
    from datetime import datetime

    # The run's end is its job's (store/run_state.py: the job owns a run's state).
    with sqlite3.connect(home / "evalcore.db") as conn:
        started, finished = conn.execute(
            "SELECT run.started_at, COALESCE((SELECT job.finished_at FROM job WHERE "
            "job.run_id = run.id AND job.kind = 'run' ORDER BY job.id DESC LIMIT 1), "
            "run.finished_at) FROM run WHERE run.id = ?", (run_id,)).fetchone()

    def moment(value: str) -> datetime:
        return datetime.fromisoformat(value).replace(tzinfo=None)

    return (moment(finished) - moment(started)).total_seconds()


def measure(questions: int, rounds: int, concurrency: int, schedule: str,
            latency: float, **faults: float) -> dict:
    """One CLI run; returns wall, CPU, peak RSS, efficiency and the server's counters."""
    server = Server(latency=latency, **faults)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp)
            prepare(home, questions, server.port, concurrency)
            out = home / "out.json"
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            exec_at = time.time()
            start = time.perf_counter()
            rss_kb = cli(home, "stability", "--dataset", "bench", "--model", "fake", "--rounds",
                str(rounds), "--schedule", schedule, "--json", str(out))
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            report = json.loads(out.read_text())
            run_s = run_span(home, report["run_id"])
    finally:
        stats = server.stats()
        server.stop()
    calls = questions * rounds
    cap = int(faults.get("cap") or 0)
    slots = min(concurrency, cap) if cap else concurrency
    ideal = math.ceil(calls / slots) * latency
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return {
        "questions": questions, "rounds": rounds, "C": concurrency, "schedule": schedule,
        "latency_ms": latency * 1000, "faults": faults, "wall_s": round(wall, 2),
        "ideal_s": round(ideal, 2), "efficiency": round(ideal / wall, 3) if ideal else None,
        "run_s": round(run_s, 2), "startup_s": _startup(stats, exec_at),
        "run_efficiency": round(ideal / run_s, 3) if ideal else None,
        "cpu_s": round(cpu, 3),
        "cpu_ms_per_call": round(1000 * cpu / calls, 3),
        "peak_rss_mb": round(rss_kb / 1024, 1),
        "answered": sum(1 for r in report["stability_results"].values()
                        for x in r["rounds"] if x["answer"] is not None),
        "calls": calls, "retries": report["timing"]["retries"],
        "errors": report["timing"]["errors"], "server_requests": stats["requests"],
        "server_max_in_flight": stats["max_in_flight"],
    }


def _startup(stats: dict, exec_at: float) -> float | None:
    """Seconds from the client's exec to the first request the server saw."""
    first = stats.get("first_request_at")
    return None if first is None else round(first - exec_at, 3)


def measure_bare(questions: int, rounds: int, concurrency: int, latency: float) -> dict:
    """The same calls from a bare aiohttp client process (bench/bare_client.py)."""
    server = Server(latency=latency)
    try:
        exec_at = time.time()
        start = time.perf_counter()
        done = subprocess.run(
            [PY, str(ROOT / "bench" / "bare_client.py"), "--url",
             f"http://127.0.0.1:{server.port}/v1", "--questions", str(questions),
             "--rounds", str(rounds), "--concurrency", str(concurrency)],
            cwd=ROOT, check=True, capture_output=True, text=True)
        wall = time.perf_counter() - start
    finally:
        stats = server.stats()
        server.stop()
    ideal = math.ceil(questions * rounds / concurrency) * latency
    return {"wall_s": round(wall, 3), "efficiency": round(ideal / wall, 3),
            "startup_s": _startup(stats, exec_at), "answered": int(done.stdout.split()[-1])}


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def help_seconds() -> tuple[float, float]:
    """Wall and CPU seconds of one `python -m evalcore --help` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([PY, "-m", "evalcore", "--help"], cwd=ROOT, check=True,
                   capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def startup_cpu(questions: int, rounds: int, concurrency: int) -> float:
    """CPU seconds of a `python -m evalcore stability` process from its exec to its first
    request: the process reads its own getrusage as it sends it (bench/startup_floor.py's
    probe) and leaves once it is answered. The machine is shared: CPU is what its load
    does not inflate."""
    from startup_floor import EVALCORE

    server = Server(latency=0.2)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp)
            prepare(home, questions, server.port, concurrency)
            env = {**os.environ, "EVALCORE_HOME": str(home), "PYTHONPATH": str(ROOT)}
            env.pop("EVALCORE_DB_URL", None)
            out = subprocess.run(
                [PY, "-c", EVALCORE, "stability", "--dataset", "bench", "--model", "fake",
                 "--rounds", str(rounds), "--schedule", "question"],
                cwd=ROOT, env=env, check=True, capture_output=True, text=True).stdout
    finally:
        server.stop()
    return json.loads(out.strip().splitlines()[-1])["cpu_s"]


def startup_budget(repeat: int, quick: bool) -> dict:
    """Issue 22: evalcore's start-up and C=50 efficiency against the bare client, run for
    run alternately (the machine's load hits both alike); medians of `repeat`."""
    m, n = (20, 5) if quick else (100, 10)
    size = dict(questions=m, rounds=n, concurrency=50, latency=0.2)
    ours, bare = [], []
    for _ in range(repeat):
        ours.append(measure(schedule="question", **size))
        ours[-1]["startup_cpu_s"] = round(startup_cpu(m, n, 50), 3)
        bare.append(measure_bare(**size))
        print(json.dumps({"evalcore": {k: ours[-1][k] for k in ("startup_s", "startup_cpu_s",
                                                                 "wall_s", "efficiency")},
                          "bare": {k: bare[-1][k] for k in ("startup_s", "wall_s",
                                                             "efficiency")}}), flush=True)
    helps = [help_seconds() for _ in range(max(repeat, 5))]
    med = {f"{who}_{key}": _median([r[key] for r in rows])
           for who, rows in (("evalcore", ours), ("bare", bare))
           for key in ("startup_s", "wall_s", "efficiency")}
    return {"measure": f"start-up, {m} x {n} at C=50, 200 ms, median of {repeat}", **med,
            "efficiency_vs_bare": round(med["evalcore_efficiency"] / med["bare_efficiency"], 3),
            "startup_budget_s": 0.45, "startup_ok": med["evalcore_startup_s"] <= 0.45,
            "help_s": round(_median([w for w, _ in helps]), 3), "help_budget_s": 0.15,
            "help_ok": _median([w for w, _ in helps]) < 0.15,
            "help_cpu_s": round(_median([c for _, c in helps]), 3),
            "evalcore_startup_cpu_s": round(_median([r["startup_cpu_s"] for r in ours]), 3),
            "evalcore_startups_s": [r["startup_s"] for r in ours],
            "evalcore_startup_cpus_s": [r["startup_cpu_s"] for r in ours],
            "load_avg_1m": round(os.getloadavg()[0], 1),
            "bare_startups_s": [r["startup_s"] for r in bare]}


def scenarios(quick: bool) -> list[dict]:
    m, n = (20, 5) if quick else (100, 10)
    runs = []
    for schedule in ("question", "round"):
        for c in (10, 50):
            runs.append(dict(questions=m, rounds=n, concurrency=c, schedule=schedule,
                             latency=0.2))
    runs.append(dict(questions=m, rounds=n, concurrency=50, schedule="question", latency=0.2,
                     cap=10, retry_after=0.2))
    # the provider admits fewer calls than the model's concurrency: 429 + Retry-After above
    for cap, c in ((8, 10), (40, 50)):
        runs.append(dict(questions=m, rounds=n, concurrency=c, schedule="question", latency=0.2,
                         cap=cap, retry_after=0.2))
    runs.append(dict(questions=m, rounds=n, concurrency=10, schedule="question", latency=0.2,
                     error_rate=0.02))
    runs.append(dict(questions=m, rounds=n, concurrency=10, schedule="question", latency=0.0))
    if not quick:
        runs.append(dict(questions=1000, rounds=100, concurrency=50, schedule="question",
                         latency=0.0))
    # reference for the cap-40 case: no cap, C=40 (what the limiter should converge to)
    runs.append(dict(questions=m, rounds=n, concurrency=40, schedule="question", latency=0.2))
    return runs


def compile_bytecode(root: Path = ROOT) -> None:
    """Write evalcore's .pyc files, as an install would (see the module docstring)."""
    subprocess.run([PY, "-m", "compileall", "-q", "evalcore", "tests/fakes"], cwd=root,
                   check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})


def median_run(scenario: dict, repeat: int) -> dict:
    """The run with the median wall of `repeat` runs (all walls kept in `walls_s`)."""
    results = sorted((measure(**scenario) for _ in range(repeat)), key=lambda r: r["wall_s"])
    result = dict(results[len(results) // 2])
    if repeat > 1:
        result["walls_s"] = [r["wall_s"] for r in results]
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    parser.add_argument("--only", type=int, help="run only scenario number K (0-based)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run each scenario R times and report the median wall")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--startup", action="store_true",
                        help="only the start-up budget against the bare client (issue 22)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    compile_bytecode()
    if args.startup:
        print(json.dumps(startup_budget(args.repeat, args.quick)), flush=True)
        return 0
    results = []
    base = measure(questions=1, rounds=1, concurrency=1, schedule="question", latency=0.0)
    print(json.dumps({"baseline_cpu_s": base["cpu_s"], "baseline_wall_s": base["wall_s"]}))
    for k, scenario in enumerate(scenarios(args.quick)):
        if args.only is not None and k != args.only:
            continue
        result = median_run(scenario, args.repeat)
        # CPU of the calls alone: the process's fixed start-up/teardown CPU taken out
        result["cpu_ms_per_call_marginal"] = round(
            1000 * (result["cpu_s"] - base["cpu_s"]) / result["calls"], 3)
        results.append(result)
        print(json.dumps(result), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
