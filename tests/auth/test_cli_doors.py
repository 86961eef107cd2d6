"""Same rules in every door: what the app refuses a role, the CLI refuses too (issue 23)."""
from __future__ import annotations

import json

import pytest

from evalcore.auth import audit
from evalcore.cli import main


@pytest.fixture()
def team(settings, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("EVALCORE_AUTH", "header")
    monkeypatch.setenv("EVALCORE_ADMINS", "root@x.com")
    monkeypatch.setenv("EVALCORE_USER", "root@x.com")
    assert main(["users", "add", "view@x.com", "--role", "viewer"]) == 0
    assert main(["users", "add", "eval@x.com", "--role", "evaluator"]) == 0
    assert main(["users", "add", "svc-worker", "--role", "worker"]) == 0
    return settings


@pytest.mark.parametrize("door", [["audit", "list"], ["users", "list"]])
@pytest.mark.parametrize("who", ["view@x.com", "eval@x.com", "svc-worker"])
def test_admin_only_reads_are_refused_to_other_roles(team, capsys, monkeypatch, door: list[str],
                                                     who: str) -> None:
    monkeypatch.setenv("EVALCORE_USER", who)
    capsys.readouterr()
    assert main([*door, "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: ") and "role admin or higher" in err
    assert "view@x.com" not in out  # nothing of the list leaked
    monkeypatch.setenv("EVALCORE_USER", "root@x.com")
    assert main([*door, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)


def test_models_test_is_an_evaluator_action_on_record(team, capsys, monkeypatch, engine) -> None:
    assert main(["models", "add", "paid", "--kind", "openai", "--model", "x", "--base-url",
                 "http://127.0.0.1:9/v1", "--timeout", "1", "--deadline", "2"]) == 0
    monkeypatch.setenv("EVALCORE_USER", "view@x.com")
    capsys.readouterr()
    assert main(["models", "test", "paid"]) == 2
    assert "may not send a test call to a model" in capsys.readouterr().err
    monkeypatch.setenv("EVALCORE_USER", "eval@x.com")
    assert main(["models", "test", "paid"]) == 1  # sent (port 9 refuses): a failed test
    tests = [e for e in audit.list_events(engine) if e.action.endswith("model.test")]
    assert [(e.actor, e.action, e.object_id, e.detail["ok"]) for e in tests] == [
        ("eval@x.com", "model.test", "paid", False)]
    denied = [e for e in audit.list_events(engine) if e.action == "denied.test_model"]
    assert [e.actor for e in denied] == ["view@x.com"]


@pytest.mark.parametrize("who", ["view@x.com", "eval@x.com"])
def test_only_the_worker_role_or_an_admin_runs_a_worker(team, capsys, monkeypatch, engine,
                                                       who: str) -> None:
    monkeypatch.setenv("EVALCORE_USER", who)
    capsys.readouterr()
    assert main(["worker", "--once"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "may not run a worker" in err
    assert "users set-role " + who + " worker" in err
    for allowed in ("svc-worker", "root@x.com"):
        monkeypatch.setenv("EVALCORE_USER", allowed)
        assert main(["worker", "--once", "--name", f"w-{allowed}"]) == 0
    starts = [(e.actor, e.object_id) for e in audit.list_events(engine)
              if e.action == "worker.start"]
    assert sorted(starts) == [("root@x.com", "w-root@x.com"), ("svc-worker", "w-svc-worker")]


@pytest.mark.parametrize(("kind", "state", "stopped"), [
    ("local", "stopped", True),    # the test loaded a copy here: it goes again
    ("local", "running", False),   # this process had it already (an embedded worker)
    ("openai", "stopped", False),  # nothing local was touched
])
def test_a_model_test_leaves_no_local_copy_behind(engine, monkeypatch, kind, state, stopped):
    """Issue 21: runs use the workers' embedded model; a test call from the app must not
    leave a second copy loaded in the app process that nobody uses."""
    from types import SimpleNamespace

    from evalcore import actions
    from evalcore.auth.identity import local_actor
    from evalcore.providers import local
    from evalcore.providers.base import ModelConfig

    calls: list[str] = []
    monkeypatch.setattr(local, "local_state", lambda: {"state": state})
    monkeypatch.setattr(local, "stop_local", lambda: calls.append("stop"))
    config = ModelConfig(name="m", kind=kind, base_url="http://127.0.0.1:9/v1", model="x")
    reply = SimpleNamespace(ok=True, latency_ms=5.0)
    assert actions.test_model(local_actor(), engine, config, send=lambda c: reply) is reply
    assert calls == (["stop"] if stopped else [])


def test_a_runs_budget_is_an_evaluator_action_on_record(team, capsys, monkeypatch, engine,
                                                        tmp_path) -> None:
    """`runs resume --budget` changes what a run may spend: a viewer is refused before
    anything changes; an evaluator's change is on record with the new limit."""
    from evalcore.dataset import import_dataset
    from evalcore.runner.plan import RunSpec
    from evalcore.runner.start import cancel_run, store_run
    from evalcore.store import queries
    from tests.perturb.attack_set_helpers import write_math_csv

    import_dataset(engine, write_math_csv(tmp_path / "sums.csv"), name="sums", format="math23k")
    run_id = store_run(engine, RunSpec(kind="stability", dataset="sums", model="local",
                                        budget=1.0), team.models_path)
    cancel_run(engine, run_id)

    def budget() -> float:
        return queries.get_run(engine, run_id).config["spec"]["budget"]

    monkeypatch.setenv("EVALCORE_USER", "view@x.com")
    capsys.readouterr()
    assert main(["runs", "resume", str(run_id), "--budget", "9", "--detach"]) == 2
    assert "role evaluator or higher" in capsys.readouterr().err
    assert budget() == 1.0
    monkeypatch.setenv("EVALCORE_USER", "eval@x.com")
    assert main(["runs", "resume", str(run_id), "--budget", "9", "--detach"]) == 0
    assert budget() == 9.0
    events = [(e.actor, e.action, e.detail.get("budget")) for e in audit.list_events(engine)
              if e.action.endswith("set_budget")]
    assert sorted(events, key=str) == sorted([("view@x.com", "denied.set_budget", None),
                                              ("eval@x.com", "run.set_budget", 9.0)], key=str)
