"""The run options --option-order / --templates on the robustness and fairness commands:
the flags each kind declares, one-line errors before anything is created, the cost said
and the pass queued with --detach, and an open suite with nothing to reorder."""
from __future__ import annotations

import json

import pytest

from evalcore import cli
from tests.cli.test_cli_fairness import add_model, run  # noqa: F401  (fixture)
from tests.fakes.fault_server import FaultConfig, FaultServer


def _help(command: str, capsys) -> str:  # noqa: ANN001
    with pytest.raises(SystemExit):
        cli.main([command, "--help"])
    return capsys.readouterr().out


def test_each_command_offers_the_options_its_kind_declares(capsys):
    robustness = _help("robustness", capsys)
    assert "--option-order ORDER" in robustness and "--templates LIST" in robustness
    assert "clean items only" in robustness and "--variant-seed" in robustness
    fairness = _help("fairness", capsys)
    assert "--option-order ORDER" in fairness and "--templates LIST" not in fairness
    assert "bias score stays the original order" in " ".join(fairness.split())


def test_a_bad_setting_is_one_line_before_anything_is_created(run, engine):  # noqa: F811
    from evalcore.store import queries

    code, _, err = run("robustness", "--attack-set", "1", "--model", "m",
                       "--option-order", "spiral")
    assert code == 2 and err.startswith("error: option order 'spiral' is not circular")
    code, _, err = run("robustness", "--attack-set", "1", "--model", "m", "--templates", "few")
    assert code == 2 and "--templates needs 2 to 6 templates" in err
    code, _, err = run("fairness", "--suite", "s", "--model", "m", "--option-order", "shuffle:0")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert queries.list_runs(engine) == []


def test_detach_says_the_cost_and_queues_the_pass(run, settings, engine,  # noqa: F811
                                                  shared_datasets):
    from evalcore.dataset import import_dataset
    from evalcore.store.jobs import list_jobs

    head = b"".join((shared_datasets / "bbq" / "Age.sample.jsonl").read_bytes()
                    .splitlines(keepends=True)[:5])
    import_dataset(engine, head, filename="age.jsonl", name="age", format="bbq")
    with FaultServer(FaultConfig(responder=lambda p, s: "0")) as server:
        add_model(settings, server, "fake")
        code, out, err = run("fairness", "--suite", "age", "--model", "fake",
                             "--option-order", "shuffle:2", "--detach")
    assert code == 0, err
    assert "option order and templates: 10 extra model calls (10 for option orders" in err
    run_id = json.loads(out)["run_id"]  # stdout stays the run's JSON
    job = list_jobs(engine, kind="variants")[0]
    assert (job.run_id, job.params["option_order"], job.status) == (run_id, "shuffle:2",
                                                                    "queued")


def test_an_open_suite_has_nothing_to_reorder(run, settings, engine):  # noqa: F811
    from evalcore.store.jobs import list_jobs

    with FaultServer(FaultConfig(responder=lambda p, s: "评分：8/10。推荐录用。")) as server:
        add_model(settings, server, "fake")
        code, out, err = run("fairness", "--generate", "occupations", "--lang", "zh",
                             "--model", "fake", "--limit", "2", "--option-order", "circular")
    assert code == 0, err
    assert "0 extra model calls" in out and "nothing extra is asked" in out
    assert list_jobs(engine, kind="variants") == []


def test_stability_detach_keeps_stdout_the_runs_json(run, settings, engine):  # noqa: F811
    from evalcore.dataset import import_dataset

    body = json.dumps({"question": "Which is a mammal?", "choices": ["Shark", "Whale"],
                       "answer": "1"}) + "\n"
    import_dataset(engine, body.encode(), filename="mc.jsonl", name="mc",
                   mapping={"question": "question", "reference": "answer",
                            "choices": "choices", "task_type": "choice", "language": "en"})
    with FaultServer(FaultConfig(responder=lambda p, s: "1")) as server:
        add_model(settings, server, "fake")
        code, out, err = run("stability", "--dataset", "mc", "--model", "fake",
                             "--option-order", "circular", "--detach")
    assert code == 0, err
    assert json.loads(out) == {"run_id": 1}  # was the cost line, then the JSON
    assert "1 extra model calls (1 for option orders" in err


def test_an_option_a_kind_does_not_take_is_not_read_as_a_longer_one(run, engine, capsys):  # noqa: F811
    """argparse would read `fairness --templates X` as `--templates-dir X` (abbreviation)."""
    from evalcore.store import queries

    with pytest.raises(SystemExit) as exit_:
        run("fairness", "--suite", "s", "--model", "m", "--templates", "zero,few")
    assert exit_.value.code == 2
    assert "unrecognized arguments: --templates zero,few" in capsys.readouterr().err
    assert queries.list_runs(engine) == []
