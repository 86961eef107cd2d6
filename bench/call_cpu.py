"""CPU seconds per call: a stability run of evalcore (`python -m evalcore stability`,
every call stored and scored) against a bare aiohttp client (bench/bare_client.py, nothing
stored), the same calls, C in flight, against the fault server in its own process.

    .venv/bin/python bench/call_cpu.py                          # 10,000 and 100,000 calls
    .venv/bin/python bench/call_cpu.py --calls 10000 --repeat 3
    .venv/bin/python bench/call_cpu.py --calls 10000 --profile prof.out   # cProfile, CPU
    .venv/bin/python bench/call_cpu.py --calls 10000 --unstored  # nothing stored or scored
    .venv/bin/python -c "import pstats; pstats.Stats('prof.out').sort_stats('tottime').print_stats(25)"

Whole processes, start-up included: CPU is user + system of the client process alone
(`os.wait4`), the server's own CPU is not counted; peak RSS is the client's. The clients
run alternately, `--repeat` times each; medians. `cpu_ratio` is the median of each
repeat's ratio (evalcore's run against the bare run right after it: the shared machine's
speed drifts over minutes, which a pair taken together mostly cancels; `cpu_ratio_pairs`
lists them), `cpu_ratio_of_medians` the ratio of the two medians. Rounds per question: 100
(10,000 calls = 100 questions x 100 rounds). Target: evalcore <= 1.5x the bare client
on asyncio's default loop (`cpu_ratio`); `cpu_ratio_uvloop` is against the same bare
client on uvloop, the loop evalcore's runs use when it is installed. `load_avg`: the
1-minute load average before and after (the machine is shared).

A third client sits between the two: `evalcore_client_*` is evalcore's model client alone
(bench/client_only.py: the same calls through `ModelClient.chat`, nothing scored or
stored), so the run's extra CPU splits into the client's and the runner's. `--pin` puts
the clients on the first CPU and the server on the last (two cores: they no longer take
turns on one), which narrows the spread between runs.
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
PY = sys.executable

from stability_bench import Server, compile_bytecode, prepare


PIN: list[int] = []
"""With `--pin`: [client CPU, server CPU]."""


def _server(latency: float) -> Server:
    server = Server(latency=latency)
    if PIN:
        os.sched_setaffinity(server.proc.pid, {PIN[1]})
    return server


def _run(args: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """CPU seconds, wall seconds and peak RSS (MB) of one whole process. RSS from GNU
    time (%M): a child's own ru_maxrss starts at its parent's size when it was forked."""
    with tempfile.NamedTemporaryFile("r") as rss:
        started = time.perf_counter()
        pin = ["taskset", "-c", str(PIN[0])] if PIN else []
        proc = subprocess.Popen([*pin, "/usr/bin/time", "-f", "%M", "-o", rss.name, *args],
                                cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)  # time's own CPU is a few ms
        if os.waitstatus_to_exitcode(status):
            raise RuntimeError(f"{args[:4]} failed: {proc.stderr.read().decode()[-1500:]}")
        return {"cpu_s": usage.ru_utime + usage.ru_stime,
                "wall_s": time.perf_counter() - started,
                "rss_mb": int(rss.read().split()[-1]) / 1024}


UNSTORED = (
    "import sys; import evalcore.runner.run as run, evalcore.cli.stability as cli; "
    "missing = [n for m, n in ((run, '_flush'), (run, 'score_answer'), (cli, 'report_figures'), "
    "(cli, '_print_summary')) if not hasattr(m, n)]; "
    "assert not missing, f'--unstored: renamed? {missing}'; "
    "from evalcore.scorers.base import Score; verdict = Score(value=1.0, correct=True, reason='-'); "
    "run._flush = lambda *a: False; run.score_answer = lambda text, question: verdict; "
    "cli.report_figures = lambda *a, **k: {'timing': {}}; cli._print_summary = lambda *a: None; "
    "import evalcore.__main__ as entry; from evalcore.cli import main; "
    "sys.argv[0] = 'evalcore'; entry._exit(main())")
"""`--unstored`: the same command with the store's writes, the scorer and the report
switched off (a measurement only): what start-up, the runner and the client cost alone,
so the rest of the gap is what storing, scoring and reporting each call costs."""


def evalcore_run(calls: int, rounds: int, concurrency: int, latency: float,
                 profile: str = "", unstored: bool = False) -> dict[str, float]:
    questions = calls // rounds
    server = _server(latency)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp)
            prepare(home, questions, server.port, concurrency)
            env = {**os.environ, "EVALCORE_HOME": str(home), "PYTHONPATH": str(ROOT)}
            env.pop("EVALCORE_DB_URL", None)
            # under cProfile timed by CPU (process_time: the shared machine's waits do not
            # count), the CLI's main(); the main thread only (the writer's flushes run in
            # a thread: `--profile` leaves them out)
            code = ("import cProfile, os, time; from evalcore.cli import main; "
                    "p = cProfile.Profile(time.process_time); p.runcall(main); "
                    "p.dump_stats(os.environ['CALL_CPU_PROFILE'])")
            env["CALL_CPU_PROFILE"] = profile
            head = ([PY, "-c", code] if profile else [PY, "-c", UNSTORED] if unstored
                    else [PY, "-m", "evalcore"])
            out = _run(head + ["stability", "--dataset", "bench", "--model", "fake",
                               "--rounds", str(rounds)], env)
            if not unstored:
                out.update(_store_size(home, calls))
    finally:
        server.stop()
    return out


def _store_size(home: Path, calls: int) -> dict[str, float]:
    """The database (file + WAL) in MB, and its bytes per call beyond the reply text."""
    import sqlite3

    files = [home / name for name in ("evalcore.db", "evalcore.db-wal")]
    size = sum(f.stat().st_size for f in files if f.exists())
    with sqlite3.connect(home / "evalcore.db") as conn:
        reply = conn.execute("SELECT avg(length(CAST(answer AS BLOB))) FROM call").fetchone()[0]
    return {"db_mb": size / 1e6, "reply_bytes": float(reply or 0.0),
            "db_bytes_per_call_beyond_reply": size / calls - float(reply or 0.0)}


def bare_run(calls: int, rounds: int, concurrency: int, latency: float,
             loop: str = "asyncio") -> dict[str, float]:
    server = _server(latency)
    try:
        return _run([PY, str(ROOT / "bench" / "bare_client.py"), "--url",
                     f"http://127.0.0.1:{server.port}/v1", "--questions", str(calls // rounds),
                     "--rounds", str(rounds), "--concurrency", str(concurrency),
                     "--loop", loop])
    finally:
        server.stop()


def client_run(calls: int, rounds: int, concurrency: int, latency: float) -> dict[str, float]:
    """evalcore's model client alone (bench/client_only.py): the same calls, none stored."""
    server = _server(latency)
    try:
        return _run([PY, str(ROOT / "bench" / "client_only.py"), "--url",
                     f"http://127.0.0.1:{server.port}/v1", "--questions", str(calls // rounds),
                     "--rounds", str(rounds), "--concurrency", str(concurrency)],
                    {**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("-c", "--concurrency", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.001, help="server latency, s")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-bare", action="store_true", help="evalcore runs only")
    parser.add_argument("--profile", default="", help="one evalcore run under cProfile (CPU)")
    parser.add_argument("--unstored", action="store_true",
                        help="evalcore with nothing stored, scored or reported (see UNSTORED)")
    parser.add_argument("--pin", action="store_true",
                        help="clients on the first CPU, the server on the last")
    args = parser.parse_args()
    if args.pin:
        cpus = sorted(os.sched_getaffinity(0))
        PIN[:] = [cpus[0], cpus[-1]]
    compile_bytecode()
    if args.profile:
        evalcore_run(args.calls[0], args.rounds, args.concurrency, args.latency, args.profile)
        return
    for calls in args.calls:
        load = os.getloadavg()[0]
        ours, client, bare, bare_uv = [], [], [], []
        for _ in range(args.repeat):
            ours.append(evalcore_run(calls, args.rounds, args.concurrency, args.latency,
                                     unstored=args.unstored))
            if not args.skip_bare:
                bare.append(bare_run(calls, args.rounds, args.concurrency, args.latency))
                bare_uv.append(bare_run(calls, args.rounds, args.concurrency, args.latency,
                                        loop="uvloop"))
            client.append(client_run(calls, args.rounds, args.concurrency, args.latency))
        med = {f"{who}_{key}": round(statistics.median(r[key] for r in rows), 3)
               for who, rows in (("evalcore", ours), ("evalcore_client", client), ("bare", bare),
                                 ("bare_uvloop", bare_uv))
               if rows for key in ("cpu_s", "wall_s", "rss_mb")}
        store = {key: round(statistics.median(r[key] for r in ours), 1)
                 for key in ("db_mb", "reply_bytes", "db_bytes_per_call_beyond_reply")
                 if not args.unstored}
        # each repeat's evalcore run against the bare run next to it: the machine's speed
        # drifts over minutes, so a pair taken together is the steadier ratio
        pairs = {name: [round(o["cpu_s"] / b["cpu_s"], 3) for o, b in zip(ours, others)]
                 for name, others in (("cpu_ratio", bare), ("cpu_ratio_uvloop", bare_uv))}
        ratios = {name: round(statistics.median(values), 2) if values else None
                  for name, values in pairs.items()}
        ratios["cpu_ratio_of_medians"] = (round(med["evalcore_cpu_s"] / med["bare_cpu_s"], 2)
                                          if bare else None)
        ratios["cpu_ratio_pairs"] = pairs["cpu_ratio"]
        print(json.dumps({"calls": calls, "C": args.concurrency,
                          "latency_ms": args.latency * 1000, "repeat": args.repeat, **med,
                          **store, **ratios, "target_ratio": 1.5, "pinned": bool(PIN),
                          "unstored": args.unstored,
                          "load_avg": [round(load, 1), round(os.getloadavg()[0], 1)]}),
              flush=True)


if __name__ == "__main__":
    main()
