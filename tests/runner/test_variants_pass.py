"""Option order (CircularEval) and prompt templates as run options of a stability run:
a planted model that picks slot A on half the items and fails under one template is
read correctly, the cost is stated first, every variant is a stored call, none twice."""
from __future__ import annotations

import json
import re

import pytest

from evalcore.cli import main
from tests.runner.conftest import add_model, server  # noqa: F401  (fixtures)

pytestmark = pytest.mark.integration

ITEMS = [  # (question, options, right option) ; items 0 and 1 are answered by slot
    ("Which planet is closest to the Sun?", ["Mercury", "Venus", "Mars", "Earth"], 0),
    ("What do bees collect from flowers?", ["Sand", "Salt", "Nectar", "Leaves"], 2),
    ("Which gas do plants take in?", ["Oxygen", "Carbon dioxide", "Helium", "Neon"], 1),
    ("Which is a mammal?", ["Shark", "Trout", "Eagle", "Whale"], 3),
]
SLOT_PICKERS = {0, 1}
BAD = "BAD TEMPLATE"


def planted(prompt: str, schema) -> str:  # noqa: ANN001
    """Slot A on items 0-1, the right option on items 2-3, a wrong one under BAD."""
    for idx, (question, options, right) in enumerate(ITEMS):
        at = prompt.rfind(question)
        if at < 0:
            continue
        shown = dict((text.strip(), int(i)) for i, text in
                     re.findall(r"choice (\d+): ([^\n]+)", prompt[at:]))
        if BAD in prompt:
            wrong = next(t for t in options if t != options[right])
            return f"The answer is choice {shown[wrong]}."
        if idx in SLOT_PICKERS:
            return "The answer is choice 0."
        return f"The answer is choice {shown[options[right]]}."
    return "I do not know."


def test_planted_slot_picker_and_bad_template_are_read_correctly(settings, engine, server,
                                                                 tmp_path, capsys):
    from scipy.stats import chisquare
    from statsmodels.stats.contingency_tables import mcnemar

    from evalcore.dataset import import_dataset
    from evalcore.store import queries

    body = "".join(json.dumps({"question": q, "choices": o, "answer": str(r)}) + "\n"
                   for q, o, r in ITEMS)
    import_dataset(engine, body.encode(), filename="mc.jsonl", name="mc",
                   mapping={"question": "question", "reference": "answer",
                            "choices": "choices", "task_type": "choice", "language": "en"})
    bad = tmp_path / "bad.txt"
    bad.write_text(BAD + "\n{question}\n{choices}\nAnswer with the choice number.\n", "utf-8")
    server.reconfigure(responder=planted)
    add_model(settings, server, concurrency=2)
    out = tmp_path / "s.json"
    assert main(["stability", "--dataset", "mc", "--model", "fake", "--rounds", "2",
                 "--option-order", "circular", "--templates", f"zero,few,{bad}",
                 "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    # 4 items x 3 rotations besides the original + 4 items x 3 templates, said first
    assert "option order and templates: 24 extra model calls (12 for option orders, " \
           "12 for templates; 0 stored already)" in printed
    assert printed.index("24 extra model calls") < printed.index("circular accuracy")
    summary = json.loads(out.read_text("utf-8"))["summary"]

    assert summary["plain_accuracy"] == 0.75  # slot A is right for item 0 in its own order
    assert summary["circular_accuracy"] == 0.5 and summary["circular_items"] == 4
    low, high = summary["circular_ci"]
    assert low < 0.5 < high
    # 16 orders asked: slot A chosen 8 times by the slot pickers + 2 by the others
    assert summary["position_bias"]["choice 0"] == {"chosen": 10 / 16, "right": 0.25}
    assert summary["position_bias"]["choice 1"] == {"chosen": 2 / 16, "right": 0.25}
    assert summary["position_bias_p"] == pytest.approx(chisquare([10, 2, 2, 2]).pvalue)
    assert summary["position_bias_p"] < 0.01 and summary["position_bias_orders"] == 16
    assert [(f["item_idx"], f["slot"]) for f in summary["slot_followers"]] == [(0, "choice 0"),
                                                                                 (1, "choice 0")]

    assert summary["template_accuracy"] == {"bad": 0.0, "few": 0.75, "zero": 0.75}
    assert summary["worst_template"] == "bad" and summary["template_spread"] == 0.75
    test = summary["template_mcnemar"]
    assert (test["b"], test["c"]) == (3, 0)
    assert test["p"] == pytest.approx(mcnemar([[1, 3], [0, 0]], exact=True).pvalue)
    assert "circular accuracy" in printed and "worst bad" in printed
    # the plain run's figures are the run's own rounds, not the variants
    report = json.loads(out.read_text("utf-8"))
    assert report["distribution"]["total_questions"] == 4
    assert summary["mean"] == 0.75

    run_id = report["run_id"]
    stages = [c.stage for c in queries.run_calls(engine, run_id) if c.stage.startswith("variant:")]
    assert len(stages) == 24 and len(set(stages)) == 6  # 3 orders + 3 templates, per item
    from evalcore.runner.variants import create_variants_job, template_params
    from evalcore.prompt.variants import parse_templates
    from evalcore.runner.start import run_job_here

    server.reset_stats()  # the same pass again: every variant is stored, nothing resent
    job = create_variants_job(engine, run_id, option_order="circular",
                              templates=template_params(parse_templates(f"zero,few,{bad}")))
    assert run_job_here(engine, job) == "done" and server.stats.requests == 0


def test_bad_variant_settings_are_one_line_errors(settings, engine, capsys):
    assert main(["stability", "--dataset", "x", "--model", "m", "--option-order", "spiral"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: option order 'spiral' is not circular or shuffle:N")
    assert main(["stability", "--dataset", "x", "--model", "m", "--templates", "zero"]) == 2
    assert "--templates needs 2 to 6 templates" in capsys.readouterr().err
