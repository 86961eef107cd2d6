"""Option order and templates on a robustness run (`robustness --option-order circular
--templates ...`): the pass asks the run's clean items only, the planted slot picker and
bad template are read as on a stability run, the robustness figures are the run's own,
and the cost is said before the run starts."""
from __future__ import annotations

import json
import re

import pytest

from evalcore.cli import main
from tests.perturb.attack_set_helpers import fake_engine  # noqa: F401  (fixture)
from tests.runner.conftest import add_model, server  # noqa: F401  (fixtures)

pytestmark = pytest.mark.integration

ITEMS = [  # (question, options, right option); items 0 and 1 are answered by slot
    ("How many legs does a spider have?", ["8", "6", "4", "10"], 0),
    ("How many days are in a week?", ["5", "6", "7", "8"], 2),
    ("How many sides does a triangle have?", ["4", "3", "5", "6"], 1),
    ("How many wheels does a bicycle have?", ["1", "3", "4", "2"], 3),
]
SLOT_PICKERS = {0, 1}
BAD = "BAD TEMPLATE"


def planted(prompt: str, schema) -> str:  # noqa: ANN001
    """Slot A on items 0-1, the right option on items 2-3 (clean or attacked), a wrong
    one under BAD."""
    for idx, (question, options, right) in enumerate(ITEMS):
        tail = question.removeprefix("How many")
        at = prompt.rfind(tail)
        if at < 0:
            continue
        shown = {text.strip(): int(i)
                 for i, text in re.findall(r"choice (\d+): ([^\n]+)", prompt[at:])}
        if BAD in prompt:
            return f"The answer is choice {shown[options[(right + 1) % 4]]}."
        if idx in SLOT_PICKERS:
            return "The answer is choice 0."
        return f"The answer is choice {shown[options[right]]}."
    return "I do not know."


def test_robustness_run_asks_its_clean_items_again(settings, engine, server, fake_engine,  # noqa: F811,E501
                                                   tmp_path, capsys):
    from evalcore.dataset import import_dataset
    from evalcore.perturb.generate import make_attack_set
    from evalcore.perturb.review import approve_unflagged
    from evalcore.store import queries

    body = "".join(json.dumps({"question": q, "choices": o, "answer": str(r)}) + "\n"
                   for q, o, r in ITEMS)
    dataset = import_dataset(engine, body.encode(), filename="mc.jsonl", name="mc",
                             mapping={"question": "question", "reference": "answer",
                                      "choices": "choices", "task_type": "choice",
                                      "language": "en"})
    attack_set = make_attack_set(engine, dataset=dataset.name, level="word")
    assert approve_unflagged(engine, attack_set.id, reviewer="ann") == 3  # item 2 is flagged
    bad = tmp_path / "bad.txt"
    bad.write_text(BAD + "\n{question}\n{choices}\nAnswer with the choice number.\n", "utf-8")
    server.reconfigure(responder=planted)
    add_model(settings, server, concurrency=2)
    out = tmp_path / "r.json"
    assert main(["robustness", "--attack-set", str(attack_set.id), "--model", "fake",
                 "--option-order", "circular", "--templates", f"zero,{bad}",
                 "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    # 3 clean items x 3 rotations + 3 x 2 templates; the attacked items are not asked
    assert "option order and templates: 15 extra model calls (9 for option orders, 6 for " \
           "templates; 0 stored already)" in printed
    assert printed.index("15 extra model calls") < printed.index("clean accuracy")
    report = json.loads(out.read_text("utf-8"))
    assert report["accuracy_clean_all"] == pytest.approx(2 / 3)  # the run's own rounds
    variants = report["variants"]
    assert variants["plain_accuracy"] == pytest.approx(2 / 3)  # item 0: slot A is right
    assert variants["circular_accuracy"] == pytest.approx(1 / 3)  # only item 3
    assert variants["circular_items"] == 3
    assert variants["position_bias"]["choice 0"] == {"chosen": 9 / 12, "right": 0.25}
    assert [(f["item_idx"], f["slot"]) for f in variants["slot_followers"]] == \
        [(0, "choice 0"), (1, "choice 0")]
    assert variants["template_accuracy"] == {"bad": 0.0, "zero": pytest.approx(2 / 3)}
    assert variants["worst_template"] == "bad"
    assert variants["template_spread"] == pytest.approx(2 / 3)
    assert "circular accuracy" in printed and "worst bad" in printed

    clean = {p[1] for p in queries.get_run(engine, report["run_id"]).config["spec"]["extra"]
             ["pairs"]}
    asked = {c.item_id for c in queries.run_calls(engine, report["run_id"])
             if c.stage.startswith("variant:")}
    assert asked == clean
    from evalcore.kinds import get_kind  # the trust report's figures of the run

    assert get_kind("robustness").more_figures(engine, report["run_id"]) == {
        "circular_accuracy": pytest.approx(1 / 3), "template_spread": pytest.approx(2 / 3)}


def test_a_kind_takes_only_the_options_it_declares():
    from evalcore.errors import RunError
    from evalcore.runner.variants import check_options

    check_options("robustness", "circular", [{"name": "zero"}])
    check_options("fairness", "shuffle:2", [])
    with pytest.raises(RunError, match="run 7 is a fairness run, which takes --option-order, "
                                       "not --templates"):
        check_options("fairness", None, [{"name": "zero"}], "run 7")
