"""The robustness report from stored calls: verdict choice, missing rounds, edits, diffs."""
from __future__ import annotations

import pytest

from evalcore.errors import RunError
from evalcore.perturb.review import approve, edit_attack_item, list_attack_items
from evalcore.perturb.generate import make_attack_set
from evalcore.report.robustness import robustness_report, text_diff
from tests.fakes.starters import start
from evalcore.store import queries
from tests.perturb.attack_set_helpers import QUESTIONS, fake_engine, math_dataset  # noqa: F401


@pytest.fixture()
def model(settings):
    from evalcore.providers.base import ModelConfig
    from evalcore.providers.registry import add_model

    for name in ("m", "judge"):
        add_model(settings.models_path, ModelConfig(name=name, kind="openai",
                                                    base_url="http://127.0.0.1:9/v1", model=name))
    return "m"


def record(engine, run_id, item_id, rnd, stage, correct, answer="x", error=None):
    queries.record_calls(engine, [{"run_id": run_id, "item_id": item_id, "round": rnd,
                                   "stage": stage, "prompt": "p", "answer": answer,
                                   "correct": correct, "score": float(bool(correct)),
                                   "error": error}])


def test_judge_verdicts_win_and_missing_rounds_count_wrong(engine, settings, math_dataset,
                                                           fake_engine, model):
    attack_set = make_attack_set(engine, dataset=math_dataset, level="word")
    items = list_attack_items(engine, attack_set.id)
    for item in items[:2]:
        approve(engine, item.id, reviewer="ann")
    run_id = start("robustness", engine, attack_set_ids=[attack_set.id], model=model,
                                   rounds=2, judge="judge", models_path=settings.models_path)
    a, b = items[0], items[1]
    # pair a: the rules said wrong but the judge says right on the clean side
    for rnd in (1, 2):
        record(engine, run_id, a.source_item_id, rnd, "answer", False, "The answer is 7")
        record(engine, run_id, a.source_item_id, rnd, "judge", True)
        record(engine, run_id, a.attacked_item_id, rnd, "answer", True, "It is 8")
        record(engine, run_id, a.attacked_item_id, rnd, "judge", False)
    # pair b: clean right twice; attacked round 1 failed (model error), round 2 missing
    for rnd in (1, 2):
        record(engine, run_id, b.source_item_id, rnd, "answer", None, "5")
        record(engine, run_id, b.source_item_id, rnd, "judge", True)
    record(engine, run_id, b.attacked_item_id, 1, "answer", False, None, error="HTTP 500")

    report = robustness_report(engine, run_id)
    word = report["levels"]["word"]
    assert word["accuracy_clean"] == 1.0 and word["accuracy_attacked"] == 0.0
    assert word["flips"]["right_to_wrong"] == [a.id, b.id]
    assert word["mcnemar"]["p_value"] == pytest.approx(0.5)
    assert word["paired_test"]["changed"] == 2
    rows = {r["attack_item_id"]: r for r in report["fragile"]}
    assert rows[b.id]["attacked_answers"] == [None, None]
    assert rows[b.id]["answer_similarity"]["compared"] == 0
    assert rows[a.id]["answer_similarity"]["same_answer"] == 0.0  # 7 vs 8
    assert report["judge"] == "judge" and report["clean_questions"] == 2


def test_edit_after_the_run_is_marked(engine, settings, math_dataset, fake_engine, model):
    attack_set = make_attack_set(engine, dataset=math_dataset, level="word")
    item = list_attack_items(engine, attack_set.id)[0]
    approve(engine, item.id, reviewer="ann")
    run_id = start("robustness", engine, attack_set_ids=[attack_set.id], model=model,
                                   rounds=1, models_path=settings.models_path)
    record(engine, run_id, item.source_item_id, 1, "answer", True)
    record(engine, run_id, item.attacked_item_id, 1, "answer", False)
    asked = item.attacked
    edit_attack_item(engine, item.id, QUESTIONS[0][0].replace("apples", "pears", 1),
                     reviewer="bob", approve=True)
    row = robustness_report(engine, run_id)["fragile"][0]
    assert row["edited_after_run"] is True and row["asked_attacked"] == asked
    assert row["attacked"] != asked


def test_a_stability_run_is_refused(engine, settings, math_dataset, model):
    from evalcore.runner.plan import RunSpec
    from evalcore.runner.start import store_run

    run_id = store_run(engine, RunSpec(dataset=math_dataset, model=model),
                       settings.models_path)
    with pytest.raises(RunError, match="without attack pairs"):
        robustness_report(engine, run_id)


@pytest.mark.parametrize("original,attacked,expected", [
    ("How many apples now?", "What number of apples now?",
     [["delete", "How many"], ["insert", "What number of"], ["equal", " apples now?"]]),
    ("买文具的钱", "买日常用品的钱",
     [["equal", "买"], ["delete", "文具"], ["insert", "日常用品"], ["equal", "的钱"]]),
    ("same text", "same text", [["equal", "same text"]]),
    ("a", "", [["delete", "a"]]),
])
def test_text_diff(original, attacked, expected):
    assert text_diff(original, attacked) == expected
    joined = "".join(t for op, t in text_diff(original, attacked) if op != "delete")
    assert joined == attacked


def test_the_report_counts_items_with_nothing_to_attack(engine, settings, math_dataset,
                                                       fake_engine, model):
    """#25: the report says how many items the attack could not change (flag
    `unchanged`); they stay out of the PDR."""
    from sqlalchemy import update

    from evalcore.perturb.review import approve_unflagged
    from evalcore.store.tables import AttackItem

    attack_set = make_attack_set(engine, dataset=math_dataset, level="word")
    items = list_attack_items(engine, attack_set.id)
    with engine.begin() as conn:
        conn.execute(update(AttackItem).where(AttackItem.id == items[0].id)
                     .values(flags=["unchanged"]))
    approve_unflagged(engine, attack_set.id, reviewer="ann")
    run_id = start("robustness", engine, attack_set_ids=[attack_set.id], model=model,
                                   rounds=1, models_path=settings.models_path)
    report = robustness_report(engine, run_id)
    assert report["nothing_to_attack"] == {"items": 1, "of": len(QUESTIONS)}
    assert items[0].id not in [row["attack_item_id"] for row in report["questions"]]


def test_wrong_verdicts_on_replies_holding_the_reference_warn(engine, settings, math_dataset,
                                                               fake_engine, model):
    attack_set = make_attack_set(engine, dataset=math_dataset, level="word")
    items = list_attack_items(engine, attack_set.id)[:2]
    for item in items:
        approve(engine, item.id, reviewer="ann")
    run_id = start("robustness", engine, attack_set_ids=[attack_set.id], model=model,
                                   rounds=1, models_path=settings.models_path)
    questions = {q.id: q for q in queries_items(engine, math_dataset)}
    for item in items:  # every reply names the reference, every verdict says wrong
        reference = questions[item.source_item_id].reference
        for side in (item.source_item_id, item.attacked_item_id):
            record(engine, run_id, side, 1, "answer", False, f"The answer is {reference}.")
    report = robustness_report(engine, run_id)
    assert report["missed_answers"] == {"judged_wrong": 4, "containing_reference": 4}
    assert any(w.startswith("4 of 4 replies judged wrong contain their reference")
               for w in report["warnings"])


def queries_items(engine, dataset):
    from evalcore.dataset import get_dataset, load_items

    return load_items(engine, int(get_dataset(engine, dataset).id))


def test_the_report_gives_clean_and_attacked_intervals_and_their_paired_difference(
        engine, settings, math_dataset, fake_engine, model):
    """Two word sets attack the same clean questions: the intervals cluster the pairs by
    clean question, and the difference is minus the level's accuracy drop."""
    sets = [make_attack_set(engine, dataset=math_dataset, level="word") for _ in range(2)]
    for attack_set in sets:
        for item in list_attack_items(engine, attack_set.id):
            approve(engine, item.id, reviewer="ann")
    run_id = start("robustness", engine, attack_set_ids=[s.id for s in sets], model=model,
                   rounds=2, models_path=settings.models_path)
    clean_right = {0: (1, 1), 1: (1, 1), 2: (1, 0), 3: (0, 0)}
    done = set()
    for attack_set in sets:
        for item in list_attack_items(engine, attack_set.id):
            idx = [q[0] for q in QUESTIONS].index(item.original)
            if item.source_item_id not in done:
                done.add(item.source_item_id)
                for rnd, ok in enumerate(clean_right[idx], start=1):
                    record(engine, run_id, item.source_item_id, rnd, "answer", bool(ok))
            for rnd in (1, 2):  # the attack costs questions 0 and 1 one round each
                record(engine, run_id, item.attacked_item_id, rnd, "answer",
                       bool(clean_right[idx][rnd - 1]) and not (idx < 2 and rnd == 1))
    report = robustness_report(engine, run_id)
    word = report["levels"]["word"]
    iv = word["intervals"]
    assert iv["clean"]["accuracy"] == pytest.approx(word["accuracy_clean"])
    assert iv["attacked"]["accuracy"] == pytest.approx(word["accuracy_attacked"])
    assert iv["paired"]["diff"] == pytest.approx(-word["accuracy_drop"])
    assert iv["paired"]["n"] == 8 and iv["paired"]["clusters"] == 4
    assert iv["paired"]["moved"] == pytest.approx(0.5)
    low, high = iv["paired"]["diff_ci"]
    assert low < iv["paired"]["diff"] < high
    assert iv["words"].startswith("Attacked questions score 25.0 points lower, 95% CI")
    assert report["intervals"]["paired"] == iv["paired"]  # one level: the same pairs
    assert report["sets"][str(sets[0].id)]["intervals"]["paired"]["clusters"] == 4
