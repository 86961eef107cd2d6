"""The floor under a stability run's start-up (issue 22): exec to first request for processes
that do only what storing a call needs, beside `python -m evalcore stability`, same machine,
same minute.

Each variant is a child process run against the fault server (tests/fakes); just before it
sends its first request it reads its own CPU seconds (resource.getrusage), sends it, and
exits once it is answered. The server stamps the request's arrival (wall from exec). The
variants run alternately, `--repeat` rounds; medians (and the spread) are printed.

  bare      python, asyncio, aiohttp: a session and one POST (bench/bare_client.py's start)
  core      + SQLAlchemy Core and SQLite: read the dataset's 100 items, commit a run, its
            items and its job in one transaction, claim the job; the three tables are
            declared here as Core `Table`s (what a Core-only run path would load)
  tables    the same statements over evalcore's own tables (`evalcore.store.tables`, the one
            definition of the schema: SQLModel classes, so SQLModel, pydantic and the ORM)
  evalcore  `python -m evalcore stability` on the same dataset (100 questions x 10 rounds)

    .venv/bin/python bench/startup_floor.py --repeat 7
    git archive e68ebc7 | tar -x -C /tmp/old   # an older tree, measured alternately as
    .venv/bin/python bench/startup_floor.py --only evalcore --baseline /tmp/old   # `baseline`

The garbage collector is off in every variant, as `python -m evalcore` pauses it while it
loads. evalcore's bytecode is compiled first (see bench/stability_bench.py).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from stability_bench import PY, Server, compile_bytecode, prepare  # noqa: E402

FIRST = """
def _cpu():
    import resource
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

async def _post(session, url):
    cpu = _cpu()
    body = {"model": "fake", "messages": [{"role": "user", "content": "What is 1 plus 1?"}]}
    async with session.post(url + "/chat/completions", json=body) as resp:
        await resp.read()
    print(json.dumps({"cpu_s": cpu}), flush=True)
"""

BARE = """
import gc; gc.disable()
import asyncio, json, sys
import aiohttp
""" + FIRST + """
async def main(url):
    async with aiohttp.ClientSession() as session:
        await _post(session, url)
asyncio.run(main(sys.argv[1]))
"""

STORE = """
import gc; gc.disable()
import asyncio, json, sys
from datetime import datetime, timezone
import aiohttp
TABLES
""" + FIRST + """
def store(path):
    engine = create_engine("sqlite:///" + path)
    with engine.begin() as conn:
        items = conn.execute(select(item.c.id).where(item.c.dataset_id == 1)).scalars().all()
        run_id = conn.execute(insert(run).values(
            kind="stability", status="queued", name="", dataset_id=1, model="fake",
            judge="rules", rounds=10, config={"rounds": 10}, created_by="bench",
            created_at=datetime.now(timezone.utc))).inserted_primary_key[0]
        conn.execute(insert(run_item), [{"run_id": run_id, "item_id": i, "position": n,
                                         "prompt": f"Question {i}"} for n, i in enumerate(items)])
        job_id = conn.execute(insert(job).values(
            kind="run", run_id=run_id, status="queued", params={}, result={},
            created_at=datetime.now(timezone.utc))).inserted_primary_key[0]
    with engine.begin() as conn:
        conn.execute(update(job).where(job.c.id == job_id).values(
            status="running", owner="bench", attempts=1, token=1))

async def main(url, path):
    store(path)
    async with aiohttp.ClientSession() as session:
        await _post(session, url)
asyncio.run(main(sys.argv[1], sys.argv[2]))
"""

CORE_TABLES = """
from sqlalchemy import (JSON, Column, DateTime, Integer, MetaData, String, Table, create_engine,
                        insert, select, update)
md = MetaData()
item = Table("floor_item", md, Column("id", Integer, primary_key=True),
             Column("dataset_id", Integer), Column("question", String))
run = Table("floor_run", md, Column("id", Integer, primary_key=True), Column("kind", String),
            Column("status", String), Column("name", String), Column("dataset_id", Integer),
            Column("model", String), Column("judge", String), Column("rounds", Integer),
            Column("config", JSON), Column("created_by", String), Column("created_at", DateTime))
run_item = Table("floor_run_item", md, Column("run_id", Integer, primary_key=True),
                 Column("position", Integer, primary_key=True), Column("item_id", Integer),
                 Column("prompt", String))
job = Table("floor_job", md, Column("id", Integer, primary_key=True), Column("kind", String),
            Column("run_id", Integer), Column("status", String), Column("params", JSON), Column("result", JSON),
            Column("owner", String), Column("attempts", Integer), Column("token", Integer),
            Column("created_at", DateTime))
"""

EVALCORE_TABLES = """
from sqlalchemy import create_engine, insert, select, update
from evalcore.store.tables import Item, Job, Run, RunItem
item, run, run_item, job = Item.__table__, Run.__table__, RunItem.__table__, Job.__table__
"""

EVALCORE = """
import gc; gc.disable()
import json, os, resource, runpy, sys
import aiohttp

_request = aiohttp.ClientSession._request

async def first(self, *args, **kwargs):
    r = resource.getrusage(resource.RUSAGE_SELF)
    resp = await _request(self, *args, **kwargs)
    print(json.dumps({"cpu_s": r.ru_utime + r.ru_stime}), flush=True)
    os._exit(0)

aiohttp.ClientSession._request = first
sys.argv = ["evalcore", *sys.argv[1:]]
runpy.run_module("evalcore", run_name="__main__", alter_sys=True)
"""


def setup_core(db: Path) -> None:
    """The Core variant's tables and its 100 items, in the benchmark's database file."""
    namespace: dict = {}
    exec(CORE_TABLES, namespace)  # noqa: S102 - the bench's own table declarations
    engine = namespace["create_engine"](f"sqlite:///{db}")
    namespace["md"].create_all(engine)
    with engine.begin() as conn:
        conn.execute(namespace["insert"](namespace["item"]),
                     [{"dataset_id": 1, "question": f"What is {i} plus {i}?"} for i in range(100)])
    engine.dispose()


def variants(home: Path, url: str, baseline: Path | None = None) -> dict[str, list[str]]:
    db = str(home / "evalcore.db")
    stability = ["stability", "--dataset", "bench", "--model", "fake", "--rounds", "10"]
    return {
        "bare": [PY, "-c", BARE, url],
        "core": [PY, "-c", STORE.replace("TABLES", CORE_TABLES), url, db],
        "tables": [PY, "-c", STORE.replace("TABLES", EVALCORE_TABLES), url, db],
        "evalcore": [PY, "-c", EVALCORE, *stability],
        **({"baseline": [PY, "-c", f"import sys; sys.path.insert(0, {str(baseline)!r})\n"
                         + EVALCORE, *stability]} if baseline else {}),
    }


def once(server: Server, argv: list[str], env: dict) -> dict:
    """One child: wall from its exec to the server's stamp of its first request, its CPU.
    (Each child gets a fresh copy of the database: one that left at its first answer holds
    its model's concurrency slots until their lease ends, and the next run would wait.)"""
    urllib.request.urlopen(urllib.request.Request(
        f"http://127.0.0.1:{server.port}/reset", method="POST"), timeout=5).close()
    exec_at = time.time()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return {"wall_s": server.stats()["first_request_at"] - exec_at,
            "cpu_s": json.loads(done.stdout.strip().splitlines()[-1])["cpu_s"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", nargs="*", help="variants to run (default all)")
    parser.add_argument("--baseline", type=Path,
                        help="another evalcore tree (git archive of an older commit), run as "
                             "variant `baseline` beside `evalcore`")
    args = parser.parse_args()
    compile_bytecode()
    if args.baseline:
        compile_bytecode(args.baseline)
    server = Server(latency=0.0)
    results: dict[str, list[dict]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            template = Path(tmp) / "template"
            prepare(template, 100, server.port, 50)
            setup_core(template / "evalcore.db")
            url = f"http://127.0.0.1:{server.port}/v1"
            names = [k for k in variants(template, url, args.baseline)
                     if not args.only or k in args.only or k == "baseline"]
            for n in range(args.repeat):
                for name in names:
                    home = Path(tmp) / f"{name}{n}"
                    shutil.copytree(template, home)
                    env = {**os.environ, "EVALCORE_HOME": str(home), "PYTHONPATH": str(ROOT)}
                    env.pop("EVALCORE_DB_URL", None)
                    argv = variants(home, url, args.baseline)[name]
                    results.setdefault(name, []).append(once(server, argv, env))
    finally:
        server.stop()
    load = os.getloadavg()
    out = {"repeat": args.repeat, "load_avg_1m": round(load[0], 1)}
    for name, rows in results.items():
        for key in ("wall_s", "cpu_s"):
            values = [r[key] for r in rows]
            out[f"{name}_{key}"] = round(statistics.median(values), 3)
            out[f"{name}_{key}_range"] = [round(min(values), 3), round(max(values), 3)]
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
