"""One transaction per action (issue #22 item 3): every action of `evalcore.actions`
commits once, and an action crashed at any of its writes leaves nothing stored - the
run, its items, its job, its audit event and its submission key together, an import and
its audit event together, a delete and its audit event together - on SQLite and
PostgreSQL. One real SIGKILL of a process in the middle of starting a run, too.

The fault hook (`tests.fakes.faults`) fails the 1st write, then the 2nd, ... until the
action gets through without reaching the fault; each failed attempt must leave every
table as it was, and the attempt that succeeds must commit exactly once."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

from evalcore import actions
from evalcore.auth import Actor
from tests.auth.conftest import team_actor
from tests.fakes.faults import Crash, Faults, changed_tables, snapshot
from tests.fakes.stored_runs import end_run
from tests.perturb.attack_set_helpers import fake_engine, write_math_csv  # noqa: F401


@dataclass
class Env:
    engine: Any
    tmp: Path
    models: Path
    url: str
    admin: Actor


def _spec(**fields: Any) -> Any:
    from evalcore.runner.plan import RunSpec

    return RunSpec(**{"kind": "stability", "dataset": "sums", "model": "local", **fields})


def _dataset(env: Env, name: str = "sums") -> None:
    from evalcore.dataset import import_dataset

    import_dataset(env.engine, write_math_csv(env.tmp / f"{name}.csv"), name=name,
                   format="math23k")


def _run(env: Env, **spec: Any) -> int:
    from evalcore.runner.start import store_run

    return store_run(env.engine, _spec(**spec), env.models)


def _finished_run(env: Env, failed_calls: int = 1) -> int:
    """A run that ended 'failed' with `failed_calls` failed answers and one good one."""
    from evalcore.store import queries, run_items

    run_id = _run(env)
    items = run_items.run_item_ids(env.engine, run_id)
    calls = [{"run_id": run_id, "item_id": items[0], "round": 0, "stage": "answer",
              "answer": "4", "model": "local"}]
    calls += [{"run_id": run_id, "item_id": i, "round": 0, "stage": "answer",
               "error": "timeout", "model": "local"} for i in items[1:1 + failed_calls]]
    queries.record_calls(env.engine, calls, count_progress=True)
    end_run(env.engine, run_id, "failed", error="too many errors")
    return run_id


def _attack_set(env: Env) -> int:
    from evalcore.perturb.generate import make_attack_set

    return int(make_attack_set(env.engine, dataset="sums", level="word").id)


def _attack_items(env: Env, set_id: int) -> list[Any]:
    from evalcore.perturb.review import list_attack_items

    return list_attack_items(env.engine, set_id)


def _models_db(env: Env) -> Any:
    from evalcore.model_store import ModelsInDatabase

    return ModelsInDatabase(env.url)


def _model(name: str = "m") -> Any:
    from evalcore.providers.base import ModelConfig

    return ModelConfig(name=name, kind="openai", base_url="http://127.0.0.1:9", model="x")


# ---------------------------------------------------------------- the actions, set up

Setup = Callable[[Env], Callable[[], Any]]


def s_import_dataset(env: Env) -> Callable[[], Any]:
    path = write_math_csv(env.tmp / "new.csv")
    return lambda: actions.import_dataset(env.admin, env.engine, path, name="new",
                                          format="math23k")


def s_store_parsed(env: Env) -> Callable[[], Any]:
    from evalcore.dataset import parse_dataset

    parsed = parse_dataset(write_math_csv(env.tmp / "p.csv"), format="math23k")
    return lambda: actions.store_parsed(env.admin, env.engine, parsed, name="parsed")


def _params(**fields: Any) -> dict[str, Any]:
    return {"dataset": "sums", "model": "local", **fields}


def s_create_run(env: Env) -> Callable[[], Any]:
    _dataset(env)
    return lambda: actions.create_run(env.admin, env.engine, "stability", _params(),
                                      env.models, submit_key="form:1")


def s_create_run__unkeyed(env: Env) -> Callable[[], Any]:
    _dataset(env)
    return lambda: actions.create_run(env.admin, env.engine, "stability", _params(rounds=2),
                                      env.models)


def s_start_demo(env: Env) -> Callable[[], Any]:
    return lambda: actions.start_demo(env.admin, env.engine, env.models)


def s_create_run__robustness(env: Env) -> Callable[[], Any]:
    from evalcore.perturb.review import approve_unflagged

    _dataset(env)
    set_id = _attack_set(env)
    approve_unflagged(env.engine, set_id, reviewer="rev")
    return lambda: actions.create_run(env.admin, env.engine, "robustness",
                                      {"attack_set_ids": [set_id], "model": "local",
                                       "rounds": 1}, env.models, submit_key="form:r")


def s_cancel_run(env: Env) -> Callable[[], Any]:
    _dataset(env)
    run_id = _run(env)
    return lambda: actions.cancel_run(env.admin, env.engine, run_id)


def s_resume_run(env: Env) -> Callable[[], Any]:
    from evalcore.runner.start import cancel_run

    _dataset(env)
    run_id = _run(env)
    cancel_run(env.engine, run_id)
    return lambda: actions.resume_run(env.admin, env.engine, run_id)


def s_set_budget(env: Env) -> Callable[[], Any]:
    _dataset(env)
    run_id = _run(env, budget=1.0)
    return lambda: actions.set_budget(env.admin, env.engine, run_id, 2.5)


def s_retry_failed(env: Env) -> Callable[[], Any]:
    _dataset(env)
    run_id = _finished_run(env, failed_calls=2)
    return lambda: actions.retry_failed(env.admin, env.engine, run_id)


def s_delete_run(env: Env) -> Callable[[], Any]:
    _dataset(env)
    run_id = _finished_run(env)
    return lambda: actions.delete_run(env.admin, env.engine, run_id)


def s_delete_dataset(env: Env) -> Callable[[], Any]:
    _dataset(env)
    return lambda: actions.delete_dataset(env.admin, env.engine, "sums")


def s_delete_dataset_and_runs(env: Env) -> Callable[[], Any]:
    _dataset(env)
    _finished_run(env)
    _run(env)
    return lambda: actions.delete_dataset_and_runs(env.admin, env.engine, "sums")


def s_queue_rejudge(env: Env) -> Callable[[], Any]:
    _dataset(env)
    run_id = _finished_run(env)
    return lambda: actions.queue_rejudge(env.admin, env.engine, run_id, "local", env.models)


def s_queue_meaning_judge(env: Env) -> Callable[[], Any]:
    _dataset(env)
    run_id = _finished_run(env)
    return lambda: actions.queue_meaning_judge(env.admin, env.engine, run_id, "local",
                                               env.models)


def s_queue_variants(env: Env) -> Callable[[], Any]:
    _dataset(env)
    run_id = _finished_run(env)
    return lambda: actions.queue_variants(env.admin, env.engine, run_id, option_order=None,
                                          templates=[{"name": "zero", "text": None, "style": "zero"},
                                                     {"name": "few", "text": None, "style": "few"}])


def s_queue_judge_analysis(env: Env) -> Callable[[], Any]:
    _dataset(env)
    run_id = _finished_run(env)
    return lambda: actions.queue_judge_analysis(env.admin, env.engine, run_id, "local",
                                                env.models)


def s_cancel_job(env: Env) -> Callable[[], Any]:
    from evalcore.store import jobs

    _dataset(env)
    job = jobs.run_job(env.engine, _run(env))
    return lambda: actions.cancel_job(env.admin, env.engine, int(job.id))


def s_requeue_job(env: Env) -> Callable[[], Any]:
    from evalcore.store import jobs

    _dataset(env)
    job = jobs.run_job(env.engine, _finished_run(env))
    return lambda: actions.requeue_job(env.admin, env.engine, int(job.id))


def s_queue_attack(env: Env) -> Callable[[], Any]:
    _dataset(env)
    return lambda: actions.queue_attack(env.admin, env.engine, dataset="sums", level="char",
                                        submit_key="form:a")


def s_queue_attack_import(env: Env) -> Callable[[], Any]:
    from tests.runner.test_attack_import_job import NAME, _bytes

    return lambda: actions.queue_attack_import(env.admin, env.engine, _bytes(), filename=NAME,
                                               similarity=False, submit_key="form:i")


def s_delete_attack_set(env: Env) -> Callable[[], Any]:
    _dataset(env)
    set_id = _attack_set(env)
    return lambda: actions.delete_attack_set(env.admin, env.engine, set_id)


def s_set_review(env: Env) -> Callable[[], Any]:
    _dataset(env)
    item = _attack_items(env, _attack_set(env))[0]
    return lambda: actions.set_review(env.admin, env.engine, int(item.id), "approved")


def s_edit_attack_item(env: Env) -> Callable[[], Any]:
    _dataset(env)
    item = _attack_items(env, _attack_set(env))[0]
    return lambda: actions.edit_attack_item(env.admin, env.engine, int(item.id),
                                            item.attacked + " now", approve=True)


def s_approve_unflagged(env: Env) -> Callable[[], Any]:
    _dataset(env)
    set_id = _attack_set(env)
    return lambda: actions.approve_unflagged(env.admin, env.engine, set_id)


def s_add_model(env: Env) -> Callable[[], Any]:
    return lambda: actions.add_model(env.admin, env.engine, _models_db(env), _model())


def s_update_model(env: Env) -> Callable[[], Any]:
    from evalcore.providers.registry import add_model

    add_model(_models_db(env), _model())
    return lambda: actions.update_model(env.admin, env.engine, _models_db(env), "m",
                                        concurrency=3)


def s_remove_model(env: Env) -> Callable[[], Any]:
    from evalcore.providers.registry import add_model

    add_model(_models_db(env), _model())
    return lambda: actions.remove_model(env.admin, env.engine, _models_db(env), "m")


def s_import_models(env: Env) -> Callable[[], Any]:
    toml = env.tmp / "models.toml"
    toml.write_text('[models.a]\nkind = "openai"\nbase_url = "http://127.0.0.1:9"\n'
                    'model = "x"\n\n[models.b]\nkind = "openai"\n'
                    'base_url = "http://127.0.0.1:9"\nmodel = "y"\n', encoding="utf-8")
    return lambda: actions.import_models(env.admin, env.engine, _models_db(env), toml)


def s_add_user(env: Env) -> Callable[[], Any]:
    return lambda: actions.add_user(env.admin, env.engine, "new@x.com", "viewer")


def s_set_role(env: Env) -> Callable[[], Any]:
    from evalcore.auth.users import add_user

    add_user(env.engine, "new@x.com", "viewer")
    return lambda: actions.set_role(env.admin, env.engine, "new@x.com", "reviewer")


def _schedule(env: Env) -> int:
    from evalcore.store.schedules import add_schedule

    _dataset(env)
    return int(add_schedule(env.engine, kind="stability", params=_params(rounds=1),
                            every_s=3600, cron=None, gate={}, channels=[]).id)


def s_add_schedule(env: Env) -> Callable[[], Any]:
    from evalcore.monitor import actions as monitor

    _dataset(env)
    return lambda: monitor.add_schedule(env.admin, env.engine, "stability", _params(rounds=1),
                                        models_path=env.models, every_s=3600)


def s_pause_schedule(env: Env) -> Callable[[], Any]:
    from evalcore.monitor import actions as monitor

    schedule_id = _schedule(env)
    return lambda: monitor.pause_schedule(env.admin, env.engine, schedule_id)


def s_edit_schedule(env: Env) -> Callable[[], Any]:
    from evalcore.monitor import actions as monitor

    schedule_id = _schedule(env)
    return lambda: monitor.edit_schedule(env.admin, env.engine, schedule_id, every_s=7200)


def s_delete_schedule(env: Env) -> Callable[[], Any]:
    from evalcore.monitor import actions as monitor

    schedule_id = _schedule(env)
    return lambda: monitor.delete_schedule(env.admin, env.engine, schedule_id)


def s_set_baseline(env: Env) -> Callable[[], Any]:
    from evalcore.monitor import actions as monitor

    _dataset(env)
    run_id = _run(env)
    end_run(env.engine, run_id, "done")
    return lambda: monitor.set_baseline(env.admin, env.engine, run_id)


def _review_queue(env: Env, double: float = 0.0) -> int:
    from tests.fakes.review_sets import seed_attack_set

    set_id, _ = seed_attack_set(env.engine, 3)
    return actions.create_review_queue(env.admin, env.engine, attack_set_id=set_id,
                                       double_share=double)


def s_create_review_queue(env: Env) -> Callable[[], Any]:
    from tests.fakes.review_sets import seed_attack_set

    set_id, _ = seed_attack_set(env.engine, 3)
    return lambda: actions.create_review_queue(env.admin, env.engine, attack_set_id=set_id)


def s_review_next(env: Env) -> Callable[[], Any]:
    queue = _review_queue(env)
    return lambda: actions.review_next(env.admin, env.engine, queue)


def s_review_submit(env: Env) -> Callable[[], Any]:
    queue = _review_queue(env)
    item = actions.review_next(env.admin, env.engine, queue)["item_id"]
    return lambda: actions.review_submit(env.admin, env.engine, queue, item, "reject",
                                         question="edited")


def s_review_skip(env: Env) -> Callable[[], Any]:
    queue = _review_queue(env)
    item = actions.review_next(env.admin, env.engine, queue)["item_id"]
    return lambda: actions.review_skip(env.admin, env.engine, queue, item)


def s_review_undo(env: Env) -> Callable[[], Any]:
    queue = _review_queue(env)
    item = actions.review_next(env.admin, env.engine, queue)["item_id"]
    actions.review_submit(env.admin, env.engine, queue, item, "approve")
    return lambda: actions.review_undo(env.admin, env.engine, queue)


def s_review_adjudicate(env: Env) -> Callable[[], Any]:
    queue = _review_queue(env)
    item = actions.review_next(env.admin, env.engine, queue)["item_id"]
    actions.review_submit(env.admin, env.engine, queue, item, "approve")
    return lambda: actions.review_adjudicate(env.admin, env.engine, queue, item, "reject")


SETUPS: list[Setup] = [
    s_import_dataset, s_store_parsed, s_create_run, s_create_run__unkeyed, s_start_demo,
    s_create_run__robustness, s_cancel_run, s_resume_run, s_set_budget, s_retry_failed,
    s_delete_run,
    s_delete_dataset, s_delete_dataset_and_runs, s_queue_rejudge, s_queue_judge_analysis,
    s_queue_meaning_judge, s_queue_variants, s_add_schedule, s_pause_schedule,
    s_edit_schedule, s_delete_schedule, s_set_baseline,
    s_cancel_job, s_requeue_job, s_queue_attack, s_queue_attack_import, s_delete_attack_set,
    s_set_review, s_edit_attack_item, s_approve_unflagged, s_add_model, s_update_model,
    s_remove_model, s_import_models, s_add_user, s_set_role,
    s_create_review_queue, s_review_next, s_review_submit, s_review_skip, s_review_undo,
    s_review_adjudicate,
]


@pytest.fixture()
def env(store, store_url: str, tmp_path: Path, fake_engine) -> Env:  # noqa: F811
    return Env(engine=store, tmp=tmp_path, models=tmp_path / "no-models.toml", url=store_url,
               admin=team_actor("admin", "root@x.com"))


def _is_crash(exc: BaseException | None) -> bool:
    """The injected fault, raised as it is or wrapped by SQLAlchemy or the action."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, Crash):
            return True
        exc, seen = exc.__cause__ or exc.__context__ or getattr(exc, "orig", None), seen + 1
    return False


@pytest.mark.parametrize("setup", SETUPS, ids=[s.__name__[2:] for s in SETUPS])
def test_an_action_crashed_at_any_write_stores_nothing_and_otherwise_commits_once(
        setup: Setup, env: Env) -> None:
    action = setup(env)
    before = snapshot(env.engine)
    faults = Faults(env.engine)
    try:
        crash_at = 1
        while True:
            faults.arm(crash_at)
            try:
                action()
            except Exception as exc:  # noqa: BLE001 - the fault, maybe wrapped
                assert faults.fired and _is_crash(exc), f"failed without the fault: {exc!r}"
                assert changed_tables(before, snapshot(env.engine)) == [], (
                    f"a crash at write {crash_at} left a part of the action stored")
                crash_at += 1
                continue
            assert not faults.fired
            break
    finally:
        faults.remove()
    writes = crash_at - 1
    assert writes >= 2, "every action here writes at least its change and its audit event"
    assert faults.commits == 1, f"{faults.commits} commits for one action"
    changed = changed_tables(before, snapshot(env.engine))
    assert "audit_event" in changed and len(changed) >= 2, changed


def test_a_second_submission_with_the_key_adds_nothing(env: Env) -> None:
    action = s_create_run(env)
    first = action()
    before = snapshot(env.engine)
    assert action() == first
    assert changed_tables(before, snapshot(env.engine)) == []


def test_crash_tests_cover_every_action_that_changes_something() -> None:
    """A new action needs its crash test (the read doors, worker start and the model test
    only append an audit event: one write, nothing to tear apart)."""
    import inspect

    single = {"require_read", "start_worker", "test_model", "save_suite",
              "review_stats"}  # review_stats reads only
    from evalcore.monitor import actions as monitor

    public = {name for name, fn in inspect.getmembers(actions, inspect.isfunction)
              if not name.startswith("_") and fn.__module__.startswith(actions.__name__ + ".")}
    public |= {name for name, fn in inspect.getmembers(monitor, inspect.isfunction)
               if not name.startswith("_") and fn.__module__ == monitor.__name__
               and name not in ("gate_dict", "test_alert")}  # test_alert: one audit write
    assert public - single == {s.__name__[2:].split("__")[0] for s in SETUPS}


KILLED = textwrap.dedent("""
    import sys
    from evalcore import actions
    from evalcore.store.db import make_engine
    from tests.auth.conftest import team_actor
    from tests.fakes.faults import Faults

    url, models, crash_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
    engine = make_engine(url)
    faults = Faults(engine)
    faults.arm(crash_at, kill=True)
    actions.create_run(team_actor("admin", "root@x.com"), engine, "stability",
                       {"dataset": "sums", "model": "local"}, models, submit_key="form:k")
    print("finished without reaching the fault")
""")


@pytest.mark.parametrize("crash_at", [2, 4])
def test_a_process_killed_while_starting_a_run_leaves_nothing(env: Env, crash_at: int) -> None:
    """SIGKILL in the middle of `create_run` (after the run row, after its items): no
    queued run without a job, no audit event of a run that is not there, and the same
    submission key starts the run afterwards."""
    from evalcore.store import jobs, queries

    _dataset(env)
    before = snapshot(env.engine)
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", KILLED, env.url, str(env.models),
                           str(crash_at)], cwd=root, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == -9, proc.stdout + proc.stderr
    assert changed_tables(before, snapshot(env.engine)) == []
    run_id = actions.create_run(env.admin, env.engine, "stability", _params(), env.models,
                                submit_key="form:k")
    assert jobs.run_job(env.engine, run_id) is not None
    assert [r.id for r in queries.list_runs(env.engine)] == [run_id]


def test_the_models_list_joins_the_transaction_however_its_url_is_spelt(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A SQLite file named by a relative and an absolute path is one database: the model
    list must write in the action's transaction, not wait 30 s for its write lock."""
    from evalcore.model_store import ModelsInDatabase
    from evalcore.store.db import make_engine, transaction

    monkeypatch.chdir(tmp_path)
    engine = make_engine(f"sqlite:///{tmp_path / 'evalcore.db'}")
    try:
        with transaction(engine) as conn:
            assert ModelsInDatabase("sqlite:///evalcore.db").within(conn).bind is conn
            assert ModelsInDatabase("sqlite:///other.db").within(conn).bind is None
    finally:
        engine.dispose()
