"""Several threads and a second process write Calls to one database at the same time,
as the app's runner threads and a CLI run do: no "database is locked", every row stored,
and a unit written by two writers at once is stored once."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from sqlalchemy.engine import Engine

from evalcore.store import queries as q
from evalcore.store.tables import Call

REPO_ROOT = Path(__file__).resolve().parents[2]
BATCH = 5  # the runner records in small batches

WRITER = """
import json, sys, time
from pathlib import Path
from evalcore.store.db import make_engine
from evalcore.store.queries import record_calls
from evalcore.store.tables import Call
url, run_id, rounds, items, ready, go = sys.argv[1:7]
run_id = int(run_id)
rounds = [int(r) for r in rounds.split(",")]
items = [int(i) for i in items.split(",")]
engine = make_engine(url)
Path(ready).touch()
deadline = time.time() + 60
while not Path(go).exists() and time.time() < deadline:
    time.sleep(0.01)
new = 0
calls = [Call(run_id=run_id, item_id=i, round=r, answer="process") for r in rounds for i in items]
for start in range(0, len(calls), {batch}):
    batch = calls[start:start + {batch}]
    n = record_calls(engine, batch, count_progress=True)
    new += n
print(json.dumps({{"new": new}}))
""".format(batch=BATCH)


def _start_process(tmp_path: Path, url: str, run_id: int, rounds: list[int],
                   items: list[int]) -> tuple[subprocess.Popen, Path]:
    ready, go = tmp_path / "ready", tmp_path / "go"
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, url, str(run_id), ",".join(map(str, rounds)),
         ",".join(map(str, items)), str(ready), str(go)],
        cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, "writer process did not start"
        time.sleep(0.01)
    return proc, go


def _thread_writer(engine: Engine, run_id: int, rounds: list[int], items: list[int],
                   results: list[int], errors: list[BaseException],
                   gate: threading.Barrier) -> None:
    try:
        gate.wait()
        new = 0
        calls = [Call(run_id=run_id, item_id=i, round=r, answer="thread")
                 for r in rounds for i in items]
        for start in range(0, len(calls), BATCH):
            n = q.record_calls(engine, calls[start:start + BATCH], count_progress=True)
            new += n
        results.append(new)
    except BaseException as exc:  # noqa: BLE001  (reported by the test)
        errors.append(exc)


def _write_concurrently(engine: Engine, url: str, tmp_path: Path, run_id: int,
                        thread_rounds: list[list[int]], process_rounds: list[int],
                        items: list[int]) -> tuple[list[int], int]:
    """Start the process, then the threads, and release all at once."""
    import json

    proc, go = _start_process(tmp_path, url, run_id, process_rounds, items)
    results: list[int] = []
    errors: list[BaseException] = []
    gate = threading.Barrier(len(thread_rounds) + 1)
    threads = [threading.Thread(target=_thread_writer,
                                args=(engine, run_id, rounds, items, results, errors, gate))
               for rounds in thread_rounds]
    for t in threads:
        t.start()
    go.touch()
    gate.wait()
    for t in threads:
        t.join(timeout=120)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert errors == [], errors
    return results, json.loads(out.strip().splitlines()[-1])["new"]


def test_threads_and_a_process_write_distinct_calls(store_url, store, make_items,
                                                    tmp_path: Path) -> None:
    items = make_items(store, 40)
    run = q.create_run(store, kind="stability", rounds=5, total=40 * 5)
    thread_rounds = [[1], [2], [3], [4]]
    results, from_process = _write_concurrently(store, store_url, tmp_path, run.id,
                                                thread_rounds, [5], items)

    assert results == [40] * 4 and from_process == 40
    units = q.done_units(store, run.id)
    assert units == {(i, r, "answer") for i in items for r in range(1, 6)}
    by_round = {c.round: c.answer for c in q.run_calls(store, run.id)}
    assert by_round[5] == "process" and by_round[1] == "thread"
    assert q.get_run(store, run.id).done == 200


def test_concurrent_writers_of_the_same_units_store_each_once(store_url, store, make_items,
                                                             tmp_path: Path) -> None:
    items = make_items(store, 30)
    run = q.create_run(store, kind="stability", rounds=2, total=60)
    results, from_process = _write_concurrently(store, store_url, tmp_path, run.id,
                                                [[1, 2], [1, 2], [2, 1]], [1, 2], items)

    assert sum(results) + from_process == 60  # every unit claimed by exactly one writer
    assert q.count_calls(store, run.id) == 60
    assert len(q.done_units(store, run.id)) == 60
    assert q.get_run(store, run.id).done == 60
