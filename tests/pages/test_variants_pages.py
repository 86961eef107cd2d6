"""The option-order and template part of the Robustness and Fairness pages (AppTest,
stored runs): circular accuracy beside plain accuracy with intervals, position bias,
the per-template table, the BBQ bias score by order beside the run's own, and the
extra calls stated before the "Ask" button."""
from __future__ import annotations

from pathlib import Path

from tests.pages.helpers import run_page, shown, values
from tests.pages.test_robustness_page import finished_run
from tests.report.test_bbq_answers import bbq_run

PAGES = Path(__file__).resolve().parents[2] / "pages"


def _as_choices(engine, run_id: int) -> list[int]:
    """The robustness run's clean items made 3-option choice items (right option 0)."""
    from sqlalchemy import update

    from evalcore.store import queries
    from evalcore.store.tables import Item

    pairs = queries.get_run(engine, run_id).config["spec"]["extra"]["pairs"]
    clean = list(dict.fromkeys(p[1] for p in pairs))
    with engine.begin() as conn:
        conn.execute(update(Item).where(Item.id.in_(clean))
                     .values(task_type="choice", choices=["right", "wrong", "other"],
                             reference="0"))
    return clean


def _plant(engine, run_id: int, items: list[int], templates: bool = True) -> None:
    """Every rotation answered 'choice 0'; templates zero (all right) and mine (all wrong)."""
    from evalcore.prompt.variants import orders
    from evalcore.runner.variants import TEMPLATE_STAGE, order_stage
    from evalcore.store import queries, run_items

    questions = run_items.run_questions(engine, run_id)
    rows = []
    for item_id in items:
        q = questions[item_id]
        for order in orders(len(q.choices), "circular")[1:]:
            rows.append({"stage": order_stage(order), "item_id": item_id, "answer": "choice 0",
                         "extracted": "0", "correct": order[0] == int(q.reference)})
        for name, right in (("zero", True), ("mine", False)) if templates else ():
            rows.append({"stage": TEMPLATE_STAGE + name, "item_id": item_id,
                         "answer": "x", "extracted": None, "correct": right})
    queries.record_calls(engine, [{"run_id": run_id, "round": 1, "model": "fake", "prompt": "",
                                   "score": None, "reason": "", "error": None, **r}
                                  for r in rows])


def test_robustness_page_shows_circular_accuracy_and_templates(page_env, engine, tmp_path):
    from evalcore.report.variants import variant_figures

    run_id = finished_run(engine, page_env, tmp_path)
    _plant(engine, run_id, _as_choices(engine, run_id))
    figures = variant_figures(engine, run_id)
    at = run_page(str(PAGES / "robustness.py"))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Circular accuracy"] == f"{figures['circular_accuracy']:.1%}" == "0.0%"
    assert metrics["Plain accuracy"] == f"{figures['plain_accuracy']:.1%}"
    captions = shown(" ".join(values(at, "caption")))
    low, high = figures["plain_ci"]
    assert f"plain {low:.1%} to {high:.1%} (Wilson 95%) over 4 items, 3 orders each" in captions
    bias = next(df.value for df in at.dataframe if "chosen" in df.value.columns)
    assert list(bias["slot"]) == ["choice 0", "choice 1", "choice 2"] and bias["chosen"][0] > 0.6
    templates = next(df.value for df in at.dataframe if "template" in df.value.columns)
    assert dict(zip(templates["template"], templates["accuracy"])) == {"mine": 0.0, "zero": 1.0}
    assert {"low", "high"} <= set(templates.columns)
    assert "Spread 100.0%; worst mine; McNemar zero vs mine: 4 vs 0 items" in captions


def test_robustness_form_states_the_extra_calls_of_the_clean_items(page_env, engine, tmp_path):
    run_id = finished_run(engine, page_env, tmp_path)
    _as_choices(engine, run_id)
    at = run_page(str(PAGES / "robustness.py"))
    assert "Asks the run's clean items" in " ".join(values(at, "caption"))
    at.radio(key="robustness.option_order").set_value("circular").run()
    at.multiselect(key="robustness.templates_pick").set_value(["zero", "few"]).run()
    assert not at.exception, [e.value for e in at.exception]
    captions = shown(" ".join(values(at, "caption")))
    # 4 clean items x 2 rotations + 4 x 2 templates; the 4 attacked items are not asked
    assert "option order and templates: 16 extra model calls (8 for option orders, 8 for " \
           "templates; 0 stored already)" in captions
    assert at.button(key="robustness.variants_ask")


def test_fairness_page_shows_the_bias_score_by_order_beside_the_runs(page_env, engine,
                                                                      shared_datasets):
    from evalcore.fairness import fairness_report
    from evalcore.store import run_items

    run_id = bbq_run(engine, shared_datasets)
    before = fairness_report(engine, run_id)["bbq"]
    at = run_page(str(PAGES / "fairness.py"))
    at.radio(key="fairness.option_order").set_value("circular").run()
    assert not [m for m in at.multiselect if m.key == "fairness.templates_pick"]
    assert "option order and templates: 24 extra model calls (24 for option orders" in \
        shown(" ".join(values(at, "caption")))  # 12 BBQ items x 2 rotations, before asking
    _plant(engine, run_id, list(run_items.run_questions(engine, run_id)), templates=False)
    report = fairness_report(engine, run_id)
    assert report["bbq"] == before  # the run's bias score: the original order's
    at = run_page(str(PAGES / "fairness.py"))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Bias, ambiguous"] == f"{before['s_amb']:.3f}"
    assert metrics["Circular accuracy"] == f"{report['variants']['circular_accuracy']:.1%}"
    table = next(df.value for df in at.dataframe if "order" in df.value.columns)
    assert list(table["order"]) == ["0,1,2", "1,2,0", "2,0,1"]
    by_order = report["variants"]["bias_score_by_order"]
    assert list(table["s_dis"]) == [by_order[k]["s_dis"] for k in table["order"]]
    assert "Range over the orders: s_amb" in shown(" ".join(values(at, "caption")))


def test_robustness_page_shows_the_attacked_options_diff(page_env, engine, tmp_path):
    """#25: a fragile question whose options a word attack changed shows each changed
    option's diff under the question's (labels and answer key unchanged)."""
    from sqlalchemy import update

    from evalcore.store import queries
    from evalcore.store.tables import Item

    run_id = finished_run(engine, page_env, tmp_path)
    _, clean, attacked, *_ = queries.get_run(engine, run_id).config["spec"]["extra"]["pairs"][0]
    with engine.begin() as conn:  # the first pair drops most: the fragile view's first
        conn.execute(update(Item).where(Item.id == clean)
                     .values(choices=["24元", "我会失败", "他很紧张"]))
        conn.execute(update(Item).where(Item.id == attacked)
                     .values(choices=["24元", "我会失败", "他很焦虑"]))
    at = run_page(str(PAGES / "robustness.py"))
    captions = " ".join(values(at, "caption"))
    assert "Option C (label and answer key unchanged)" in captions
    assert "Option B" not in captions
    markup = " ".join(el.proto.body for el in at.get("html"))
    assert "焦虑" in markup and "紧张" in markup


def test_the_fairness_start_form_states_the_option_order_cost(page_env, engine,
                                                              shared_datasets):
    from evalcore.dataset import import_dataset

    head = b"".join((shared_datasets / "bbq" / "Age.sample.jsonl").read_bytes()
                    .splitlines(keepends=True)[:5])
    import_dataset(engine, head, filename="age.jsonl", name="age", format="bbq")
    from tests.pages.helpers import add_fake_model

    add_fake_model(page_env)
    at = run_page(str(PAGES / "fairness.py"))
    assert "Option order (asked after the run, under its results): circular 10 extra calls" \
        in shown(" ".join(values(at, "caption")))


def test_a_run_without_choice_items_has_nothing_to_reorder(page_env, engine, tmp_path):
    finished_run(engine, page_env, tmp_path)  # maths items: no option to reorder
    at = run_page(str(PAGES / "robustness.py"))
    at.radio(key="robustness.option_order").set_value("circular").run()
    assert "0 extra model calls" in shown(" ".join(values(at, "caption")))
    assert any("No item of this run can be asked another way" in i
               for i in values(at, "info"))
    assert not [b for b in at.button if b.key == "robustness.variants_ask"]
