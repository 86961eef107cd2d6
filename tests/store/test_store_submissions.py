"""One submission, one run: the same idempotency key never creates a second run or job
(store.submissions.once, evalcore.actions' start functions), on SQLite and PostgreSQL,
also when the two calls come at once from two threads."""
from __future__ import annotations

import threading
import time

import pytest

from evalcore.store import queries
from evalcore.store.submissions import once


def _maker(engine, made: list[int], pause: float = 0.0):  # type: ignore[no-untyped-def]
    def make(conn) -> int:  # type: ignore[no-untyped-def]  # in once's transaction
        time.sleep(pause)
        run_id = int(queries.create_run(conn, kind="stability", rounds=1, config={}).id)
        made.append(run_id)
        return run_id
    return make


def test_the_same_key_returns_the_first_run_and_creates_no_second(store) -> None:
    made: list[int] = []
    first = once(store, "s1:stability:0", "run", _maker(store, made))
    assert once(store, "s1:stability:0", "run", _maker(store, made)) == first
    other = once(store, "s1:stability:1", "run", _maker(store, made))
    assert other != first and made == [first, other]
    assert once(store, None, "run", _maker(store, made)) not in (first, other)  # no key
    assert len(queries.list_runs(store)) == 3


def test_two_calls_at_once_with_one_key_make_one_run(store) -> None:
    made: list[int] = []
    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.append(
        once(store, "dbl", "run", _maker(store, made, pause=0.3)))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(made) == 1 and results == [made[0], made[0]]


def test_a_failed_creation_frees_its_key(store) -> None:
    def fail(conn) -> int:  # type: ignore[no-untyped-def]
        raise RuntimeError("model missing")

    with pytest.raises(RuntimeError):
        once(store, "k", "run", fail)
    made: list[int] = []
    assert once(store, "k", "run", _maker(store, made)) == made[0]


def test_start_actions_with_one_key_start_one_run_and_queue_one_attack(engine, settings,
                                                                       tmp_path) -> None:
    from evalcore import actions
    from evalcore.auth import audit, local_actor
    from evalcore.store import jobs
    from tests.auth.conftest import team_actor
    from tests.perturb.attack_set_helpers import write_math_csv

    alice = team_actor("evaluator", "alice@x.com")
    actions.import_dataset(alice, engine, write_math_csv(tmp_path / "m.csv"), name="sums",
                           format="math23k")
    params = {"dataset": "sums", "model": "local"}
    first = actions.create_run(alice, engine, "stability", params, settings.models_path,
                               submit_key="a:0")
    again = actions.create_run(alice, engine, "stability", params, settings.models_path,
                               submit_key="a:0")
    assert again == first and [r.id for r in queries.list_runs(engine)] == [first]
    assert [e.action for e in audit.list_events(engine)].count("run.start") == 1
    job = actions.queue_attack(local_actor(), engine, dataset="sums", level="char",
                               submit_key="g:0")
    assert actions.queue_attack(local_actor(), engine, dataset="sums", level="char",
                                submit_key="g:0") == job
    assert [j.id for j in jobs.list_jobs(engine, kind="attack")] == [job]
