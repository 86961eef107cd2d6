"""Every state-changing public function refuses a role below its permission, before doing
anything; allowed actions are attributed to the actor and land in the audit log."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Callable

import pytest

from evalcore import actions
from evalcore.auth import ROLES, PermissionDenied, audit, local_actor
from evalcore.auth.roles import role_needed
from tests.auth.conftest import team_actor
from tests.perturb.attack_set_helpers import fake_engine, write_math_csv  # noqa: F401


def _params() -> dict[str, Any]:
    """A stability run's form, as `actions.create_run` takes it."""
    return {"dataset": "ds", "model": "local"}


def _model():  # type: ignore[no-untyped-def]
    from evalcore.providers.base import ModelConfig

    return ModelConfig(name="m", kind="openai", base_url="http://127.0.0.1:9", model="x")


def _sync(coro_fn: Callable[..., Any]) -> Callable[..., Any]:
    return lambda *a, **k: asyncio.run(coro_fn(*a, **k))


# (function, permission, arguments after (actor, engine)); `p` is the models path.
CALLS: list[tuple[str, str, Callable[[Path], tuple[tuple, dict]]]] = [
    ("import_dataset", "import", lambda p: ((b"q,a\n1,2\n",), {"filename": "x.csv"})),
    ("store_parsed", "import", lambda p: ((None,), {})),
    ("save_suite", "import", lambda p: ((None,), {})),
    ("delete_dataset", "delete", lambda p: (("ds",), {})),
    ("delete_dataset_and_runs", "delete", lambda p: (("ds",), {})),
    ("create_run", "run", lambda p: (("stability", _params(), p), {})),
    ("create_run", "run", lambda p: (("robustness", {"attack_set_ids": [1], "model": "local",
                                                     "rounds": 1}, p), {"submit_key": "k"})),
    ("create_run", "run", lambda p: (("fairness", {"suite": "s", "model": "local"}, p), {})),
    ("cancel_run", "run", lambda p: ((1,), {})),
    ("resume_run", "run", lambda p: ((1,), {})),
    ("set_budget", "run", lambda p: ((1, 5.0), {})),
    ("retry_failed", "run", lambda p: ((1,), {})),
    ("delete_run", "delete", lambda p: ((1,), {})),
    ("queue_rejudge", "run", lambda p: ((1, "local", p), {})),
    ("queue_judge_analysis", "run", lambda p: ((1, "local", p), {})),
    ("queue_meaning_judge", "run", lambda p: ((1, "local", p), {})),
    ("queue_variants", "run", lambda p: ((1,), {"option_order": "circular", "templates": []})),
    ("cancel_job", "run", lambda p: ((1,), {})),
    ("requeue_job", "run", lambda p: ((1,), {})),
    ("start_demo", "run", lambda p: ((p,), {})),
    ("queue_attack", "attack", lambda p: ((), {"dataset": "ds", "level": "char"})),
    ("queue_attack_import", "import", lambda p: ((b"",), {"filename": "a.csv"})),
    ("delete_attack_set", "delete", lambda p: ((1,), {})),
    ("set_review", "review", lambda p: ((1, "approved"), {})),
    ("edit_attack_item", "review", lambda p: ((1, "text"), {})),
    ("approve_unflagged", "review", lambda p: ((1,), {})),
    ("create_review_queue", "review", lambda p: ((), {"attack_set_id": 1})),
    ("review_next", "review", lambda p: ((1,), {})),
    ("review_submit", "review", lambda p: ((1, 1, "approve"), {})),
    ("review_skip", "review", lambda p: ((1, 1), {})),
    ("review_undo", "review", lambda p: ((1,), {})),
    ("review_adjudicate", "review", lambda p: ((1, 1, "approve"), {})),
    ("review_stats", "read", lambda p: ((1,), {})),
    ("add_model", "models", lambda p: ((p, _model()), {})),
    ("update_model", "models", lambda p: ((p, "local"), {"concurrency": 3})),
    ("remove_model", "models", lambda p: ((p, "local"), {})),
    ("import_models", "models", lambda p: ((p, p), {})),
    ("add_user", "users", lambda p: (("x@example.com", "viewer"), {})),
    ("set_role", "users", lambda p: (("x@example.com", "admin"), {})),
    ("test_model", "test_model", lambda p: ((_model(),), {})),
    ("require_read", "audit", lambda p: (("audit list",), {})),
    ("start_worker", "work", lambda p: (("worker-1",), {})),
]
ASYNC: set[str] = set()


def test_the_table_covers_every_public_function_of_actions() -> None:
    import inspect

    public = {name for name, fn in inspect.getmembers(actions, inspect.isfunction)
              if not name.startswith("_") and fn.__module__.startswith(actions.__name__ + ".")}
    assert public == {name for name, _, _ in CALLS}


@pytest.mark.parametrize("name,permission,args", CALLS, ids=[c[0] for c in CALLS])
def test_roles_below_the_permission_are_refused_and_nothing_happens(
        name: str, permission: str, args: Any, engine, settings) -> None:
    fn = getattr(actions, name)
    fn = _sync(fn) if name in ASYNC else fn
    positional, keywords = args(settings.models_path)
    below = ROLES[:ROLES.index(role_needed(permission))]
    assert below or permission in ("read", "export")
    for role in below:
        with pytest.raises(PermissionDenied, match=f"role {role_needed(permission)} or higher"):
            fn(team_actor(role), engine, *positional, **keywords)
    # Nothing happened, but each refused attempt is on record.
    events = audit.list_events(engine)
    assert sorted(e.actor for e in events) == sorted(f"{role}@example.com" for role in below)
    assert {(e.action, e.detail["permission"]) for e in events} <= {
        (f"denied.{name}", permission), (f"denied.{_inner(name)}", permission)}
    assert not settings.models_path.exists()


def _inner(name: str) -> str:
    """The name a refused attempt is recorded under (the action's own check)."""
    return {"queue_attack": "generate_attack_set", "queue_rejudge": "rejudge",
            "queue_attack_import": "import_attack_set",
            "queue_judge_analysis": "judge_analysis", "queue_meaning_judge": "meaning_judge",
            "queue_variants": "variants",
            "require_read": "read.audit_list"}.get(name, name)


def test_evaluator_imports_and_starts_runs_as_themself(engine, settings, tmp_path: Path) -> None:
    from evalcore.dataset import get_dataset
    from evalcore.store import queries

    alice = team_actor("evaluator", "alice@x.com")
    ds = actions.import_dataset(alice, engine, write_math_csv(tmp_path / "m.csv"), name="sums",
                                format="math23k")
    assert ds.created_by == "alice@x.com"
    assert get_dataset(engine, "sums").created_by == "alice@x.com"
    params = {**_params(), "dataset": "sums", "created_by": "typed name"}
    run_id = actions.create_run(alice, engine, "stability", params, settings.models_path)
    assert queries.get_run(engine, run_id).created_by == "alice@x.com"
    actions.cancel_run(alice, engine, run_id)
    with pytest.raises(PermissionDenied):
        actions.delete_dataset(alice, engine, "sums")
    events = [(e.actor, e.action, e.object_id) for e in audit.list_events(engine)]
    assert events == [("alice@x.com", "denied.delete_dataset", "sums"),
                      ("alice@x.com", "run.cancel", str(run_id)),
                      ("alice@x.com", "run.start", str(run_id)),
                      ("alice@x.com", "dataset.import", str(ds.id))]
    other = actions.import_dataset(alice, engine,
                                   write_math_csv(tmp_path / "o.csv", rows=[("x?", 1)]),
                                   name="other", format="math23k")
    actions.delete_dataset(team_actor("admin", "root@x.com"), engine, "other")
    last = audit.list_events(engine, limit=1)[0]
    assert (last.actor, last.action, last.object_id) == ("root@x.com", "dataset.delete",
                                                         str(other.id))


def test_single_user_mode_records_one_identity(engine, settings, tmp_path: Path,
                                               monkeypatch) -> None:
    """The dataset, the run and the audit log name the same local user (were "local",
    "page", "app" on different rows)."""
    from evalcore.dataset import get_dataset
    from evalcore.store import queries

    monkeypatch.setenv("EVALCORE_USER", "dana")
    actions.import_dataset(local_actor(), engine, write_math_csv(tmp_path / "m.csv"), name="s",
                           format="math23k")
    run_id = actions.create_run(local_actor(), engine, "stability", {**_params(), "dataset": "s"},
                                settings.models_path)
    assert queries.get_run(engine, run_id).created_by == "dana"
    assert get_dataset(engine, "s").created_by == "dana"
    assert {e.actor for e in audit.list_events(engine)} == {"dana"}


def test_team_reviewer_identity_replaces_the_typed_reviewer(
        engine, settings, tmp_path: Path, fake_engine) -> None:  # noqa: F811
    from evalcore.perturb.review import list_attack_items, review_log

    alice = team_actor("evaluator", "alice@x.com")
    carol = team_actor("reviewer", "carol@x.com")
    actions.import_dataset(alice, engine, write_math_csv(tmp_path / "m.csv"), name="maths",
                           format="math23k")
    from evalcore.perturb.sets import get_attack_set
    from evalcore.runner.start import run_job_here
    from evalcore.store.jobs import get_job

    job_id = actions.queue_attack(alice, engine, dataset="maths", level="word",
                                  created_by="someone")
    assert get_job(engine, job_id).created_by == "alice@x.com"
    assert run_job_here(engine, job_id) == "done"  # a worker generates the set
    attack_set = get_attack_set(engine, get_job(engine, job_id).result["attack_set_id"])
    assert attack_set.created_by == "alice@x.com"
    item = list_attack_items(engine, int(attack_set.id))[0]
    with pytest.raises(PermissionDenied, match="role reviewer or higher"):
        actions.set_review(alice, engine, int(item.id), "approved")
    actions.set_review(carol, engine, int(item.id), "approved", reviewer="mallory")
    assert actions.approve_unflagged(carol, engine, int(attack_set.id)) >= 1
    assert {e["reviewer"] for e in review_log(engine, int(attack_set.id))} == {"carol@x.com"}
    assert [e.action for e in audit.list_events(engine, actor="carol@x.com")] == [
        "review.approve_unflagged", "review.approved"]


def test_role_change_is_audited_with_before_and_after(engine) -> None:
    root = team_actor("admin", "root@x.com")
    actions.add_user(root, engine, "bob@x.com", "viewer")
    actions.set_role(root, engine, "bob@x.com", "evaluator")
    last = audit.list_events(engine, limit=1)[0]
    assert (last.action, last.object_id, last.detail["previous"], last.detail["role"]) == (
        "user.set_role", "bob@x.com", "viewer", "evaluator")


def test_delete_dataset_and_runs_deletes_each_run_audited_then_the_dataset(engine) -> None:
    """The Datasets page's way out of "used by 2 runs, delete those runs first"."""
    from evalcore.dataset import import_dataset, list_datasets
    from evalcore.errors import DatasetError
    from evalcore.store import queries

    admin = team_actor("admin")
    dataset = import_dataset(engine, b"q,a\n1+1?,2\n", filename="tiny.csv")
    runs = [queries.create_run(engine, kind="eval", dataset_id=dataset.id, status="done").id
            for _ in range(2)]
    with pytest.raises(DatasetError, match="used by 2 run"):
        actions.delete_dataset(admin, engine, "tiny")
    gone, deleted = actions.delete_dataset_and_runs(admin, engine, "tiny")
    assert (gone.name, deleted) == ("tiny", runs)
    assert list_datasets(engine) == [] and queries.list_runs(engine) == []
    newest_first = [(e.action, e.object_id) for e in audit.list_events(engine)
                    if e.actor == admin.label and not e.action.startswith("denied.")]
    assert newest_first == [("dataset.delete", str(dataset.id)),
                            *(("run.delete", str(r)) for r in reversed(runs))]
