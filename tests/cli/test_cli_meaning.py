"""`stability --meaning-judge MODEL`: the cost printed first, the judge's groups in the JSON."""
from __future__ import annotations

import itertools
import json

import pytest

from evalcore.cli import main
from tests.runner.conftest import add_model, server  # noqa: F401  (fixtures)
from tests.runner.test_meaning_judge import same_if_same_name

pytestmark = pytest.mark.integration


def test_meaning_judge_flag_states_the_cost_then_groups_by_the_judge(settings, engine, server,
                                                                    tmp_path, capsys):
    from evalcore.dataset import import_dataset

    body = json.dumps({"question": "What is the capital of France?", "answer": "Paris"}) + "\n"
    import_dataset(engine, body.encode(), filename="cap.jsonl", name="cap",
                   mapping={"question": "question", "reference": "answer", "task_type": "open",
                            "language": "en"})
    replies = itertools.cycle(["Paris is the capital of France.", "It's Paris.",
                               "Lyon is the capital of France.", "The capital is Paris."])

    def respond(prompt: str, schema) -> str:  # noqa: ANN001
        return same_if_same_name(prompt, schema) if "ANSWER 1:" in prompt else next(replies)

    server.reconfigure(responder=respond)
    add_model(settings, server, concurrency=1)
    add_model(settings, server, name="judge", concurrency=1)
    out = tmp_path / "s.json"
    assert main(["stability", "--dataset", "cap", "--model", "fake", "--rounds", "4",
                 "--meaning-judge", "judge", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    # 4 distinct answers: 3 calls if all were one meaning, 6 if all differed
    assert 'asking judge "same meaning?" costs 3 to 6 judge calls' in printed
    assert printed.index("costs 3 to 6") < printed.index("semantic entropy")
    report = json.loads(out.read_text("utf-8"))
    groups = report["stability_results"]["0"]["answer_groups"]
    assert sorted(g["count"] for g in groups) == [1, 3]  # Paris x3, Lyon x1
    assert report["summary"]["meaning_judge"]["pairs_not_judged"] == 0
    assert "judged by judge" in printed


def test_meaning_judge_and_offline_grouping_exclude_each_other(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["stability", "--dataset", "d", "--model", "m", "--group-by-meaning",
              "--meaning-judge", "j"])
    assert stop.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
