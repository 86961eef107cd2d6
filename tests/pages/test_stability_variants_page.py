"""The Stability page shows circular accuracy, position bias and the per-template table
of a run asked under other option orders and templates, and states the extra calls of
asking before its button (AppTest, stored run)."""
from __future__ import annotations

import re

from tests.pages.helpers import shown, values
from tests.pages.test_stability_page import open_page
from tests.pages.test_stability_repeats_page import planted_run


def _plant_variants(engine, run_id: int, templates=(("zero", True), ("mine", False))) -> None:
    """Every rotation of each item answered 'choice 0'; templates zero (all right) and
    mine (all wrong) unless `templates` says otherwise."""
    from evalcore.prompt.variants import orders
    from evalcore.runner.variants import TEMPLATE_STAGE, order_stage
    from evalcore.store import queries, run_items

    rows = []
    for item_id, q in run_items.run_questions(engine, run_id).items():
        for order in orders(len(q.choices), "circular")[1:]:
            rows.append({"stage": order_stage(order), "item_id": item_id, "answer": "choice 0",
                         "extracted": "0", "correct": order[0] == int(q.reference)})
        for name, right in templates:
            rows.append({"stage": TEMPLATE_STAGE + name, "item_id": item_id,
                         "answer": "x", "extracted": None, "correct": right})
    queries.record_calls(engine, [{"run_id": run_id, "round": 1, "model": "fake", "prompt": "",
                                   "score": None, "reason": "", "error": None, **r}
                                  for r in rows])


def test_option_order_and_template_figures_are_drawn(page_env, engine):
    from evalcore.report.variants import variant_figures

    run_id = planted_run(engine, rejudge=False)
    _plant_variants(engine, run_id)
    figures = variant_figures(engine, run_id)
    at = open_page()
    assert not at.exception, [e.value for e in at.exception]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Circular accuracy"] == f"{figures['circular_accuracy']:.1%}"
    assert metrics["Plain accuracy"] == f"{figures['plain_accuracy']:.1%}"
    bias = next(df.value for df in at.dataframe if "chosen" in df.value.columns)
    # slots named as the prompt names the options (one labelling with the answer groups)
    assert list(bias["slot"]) == ["choice 0", "choice 1", "choice 2", "choice 3"]
    templates = next(df.value for df in at.dataframe if "template" in df.value.columns)
    assert dict(zip(templates["template"], templates["accuracy"])) == {"mine": 0.0, "zero": 1.0}
    captions = shown(" ".join(values(at, "caption")))
    assert "Circular accuracy (CircularEval): an item counts right only if" in captions
    assert "Spread 100.0%; worst mine" in captions


def test_the_form_states_the_extra_calls_before_asking(page_env, engine):
    planted_run(engine, rejudge=False)  # 3 choice items of 4 options, nothing varied yet
    at = open_page()
    at.radio(key="stability.option_order").set_value("circular").run()
    assert not at.exception, [e.value for e in at.exception]
    captions = shown(" ".join(values(at, "caption")))
    assert "option order and templates: 9 extra model calls (9 for option orders, 0 for " \
           "templates; 0 stored already)" in captions
    at.multiselect(key="stability.templates_pick").set_value(["zero"]).run()
    assert "pick at least 2 templates" in " ".join(e.value for e in at.error)
    at.multiselect(key="stability.templates_pick").set_value(["zero", "few"]).run()
    assert "15 extra model calls (9 for option orders, 6 for templates" in \
        shown(" ".join(values(at, "caption")))
    assert at.button(key="stability.variants_ask")


def test_no_ask_button_when_nothing_would_be_asked(page_env, engine):
    """Walked on the local model: circular order on a sentiment run (no choice items), or
    templates already stored, showed "0 extra model calls" and an Ask button that queued
    a job doing nothing. Now the page says why and offers no button."""
    from tests.fakes.stored_runs import seed_dataset, seed_run

    ds = seed_dataset(engine, "sums", [f"What is {i} plus {i}?" for i in range(3)])
    seed_run(engine, ds, {0: [1], 1: [0], 2: [1]}, 1)  # open maths items: nothing to reorder
    at = open_page()
    at.radio(key="stability.option_order").set_value("circular").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "0 extra model calls" in shown(" ".join(values(at, "caption")))
    assert "option orders reorder choice items" in " ".join(values(at, "info"))
    assert not [b for b in at.button if b.key == "stability.variants_ask"]


def test_stored_variants_leave_nothing_to_ask(page_env, engine):
    run_id = planted_run(engine, rejudge=False)
    _plant_variants(engine, run_id)  # every rotation stored
    at = open_page()
    at.radio(key="stability.option_order").set_value("circular").run()
    assert "every variant chosen is stored already" in " ".join(values(at, "info"))
    assert not [b for b in at.button if b.key == "stability.variants_ask"]


def test_position_bias_says_how_many_replies_it_rests_on(page_env, engine):
    """On the local model 3 of 16 orders named an option and the page showed p = 1 with
    bare shares: now the caption says over how many orders, and shares read as percents."""
    run_id = planted_run(engine, rejudge=False)
    _plant_variants(engine, run_id)
    at = open_page()
    captions = shown(" ".join(values(at, "caption")))
    assert re.search(r"Over the \d+ of 12 orders asked whose reply named an option", captions), captions[-600:]
    bias = next(df for df in at.dataframe if "chosen" in df.value.columns)
    templates = next(df for df in at.dataframe if "template" in df.value.columns)
    for table, columns in ((bias, ("chosen", "right")), (templates, ("accuracy", "low"))):
        config = table.proto.columns  # the column_config JSON Streamlit sends
        assert all(f'"{c}"' in config and '"percent"' in config for c in columns), config


def test_no_template_is_worst_when_they_tie(page_env, engine):
    """First-day walk: zero and few both at 0%, and "few" was marked worst."""
    run_id = planted_run(engine, rejudge=False)
    _plant_variants(engine, run_id, templates=(("zero", False), ("few", False)))
    at = open_page()
    assert not at.exception, [e.value for e in at.exception]
    templates = next(df.value for df in at.dataframe if "template" in df.value.columns)
    assert set(templates["worst"]) == {""}
    captions = shown(" ".join(values(at, "caption")))
    assert "Spread 0.0%; no worst template (lowest accuracy tied)" in captions
    assert "McNemar zero" not in captions and "McNemar few" not in captions
