"""A queue's figures from planted reviews: the kappa of two planted reviewers computed by
hand, their disagreements and the adjudication that resolves them, precision by swap
source equal to a count by hand, and a planted-wrong judge's accuracy."""
from __future__ import annotations

import pytest

from evalcore.report.review_stats import queue_stats
from evalcore.store import review_queues as rq
from tests.fakes.review_sets import seed_attack_set


def _review_all(engine, queue: int, reviewer: str, verdict_of) -> list[int]:  # type: ignore[no-untyped-def]
    """`reviewer` takes every item left for them and gives `verdict_of(position)`."""
    positions = {int(i.id): int(i.position) for i in rq.queue_items(engine, queue)}
    seen = []
    while (item := rq.next_item(engine, queue, reviewer)) is not None:
        rq.submit(engine, queue, item, reviewer, verdict_of(positions[item]))
        seen.append(item)
    return seen


def test_two_planted_reviewers_give_the_kappa_by_hand_and_their_disagreements(engine) -> None:
    from sklearn.metrics import cohen_kappa_score

    set_id, _ = seed_attack_set(engine, 30)
    queue = rq.create_queue(engine, attack_set_id=set_id, double_share=1.0)
    third = {p for p in range(30) if p % 3 == 0}  # bob rejects these 10
    assert len(_review_all(engine, queue, "ann", lambda p: "approve")) == 30
    assert len(_review_all(engine, queue, "bob",
                           lambda p: "reject" if p in third else "approve")) == 30
    stats = queue_stats(engine, queue)
    # By hand: observed agreement 20/30; chance: ann approves 30/30, bob 20/30, so 2/3.
    p_o, p_e = 20 / 30, (30 / 30) * (20 / 30) + 0 * (10 / 30)
    hand = (p_o - p_e) / (1 - p_e)
    ann = ["approve"] * 30
    bob = ["reject" if p in third else "approve" for p in range(30)]
    assert stats["agreement"]["method"] == "cohen_kappa"
    assert stats["agreement"]["value"] == pytest.approx(hand, abs=1e-12)
    assert stats["agreement"]["value"] == pytest.approx(cohen_kappa_score(ann, bob), abs=1e-12)
    assert stats["agreement"]["pairs"] == 30
    by_position = {int(i.id): int(i.position) for i in rq.queue_items(engine, queue)}
    assert sorted(by_position[d["item_id"]] for d in stats["disagreements"]) == sorted(third)
    assert all(d["verdicts"] == {"ann": "approve", "bob": "reject"}
               for d in stats["disagreements"])
    assert (stats["decided"], stats["unresolved"]) == (20, 10)
    assert stats["by_reviewer"] == {"ann": 30, "bob": 30}

    for d in stats["disagreements"]:
        rq.adjudicate(engine, queue, d["item_id"], "lead", "reject")
    after = queue_stats(engine, queue)
    assert (after["decided"], after["unresolved"]) == (30, 0)
    assert {d["adjudication"] for d in after["disagreements"]} == {"reject"}
    assert after["agreement"] == stats["agreement"]  # the reviewers' verdicts stay
    assert (after["precision"]["overall"]["kept"], after["precision"]["overall"]["n"]) == (20, 30)


def _rep(before: str, after: str, **source: str) -> dict:
    return {"before": before, "after": after, **source}


def test_precision_by_source_level_and_language_is_the_count_by_hand(engine) -> None:
    table, wordnet = _rep("big", "large", sense="table"), _rep("car", "auto", sense="first")
    phrase = _rep("do not", "don't", kind="phrase")
    details = [{"replacements": r} for r in (
        [table], [table], [table, wordnet], [wordnet], [wordnet], [phrase], [table], [])]
    set_id, _ = seed_attack_set(engine, 8, details=details)
    zh_set, _ = seed_attack_set(engine, 3, name="zh", language="zh", details=[
        {"replacements": [{"before": "乘客", "after": "旅客", "score": 1.0}]},
        {"replacements": [{"before": "良好", "after": "优异", "score": 0.71}]},
        {"replacements": [{"before": "良好", "after": "优异", "score": 0.71}]}])
    rejected = {2, 3, 7}
    verdicts = {}
    for set_ in (set_id, zh_set):
        queue = rq.create_queue(engine, attack_set_id=set_)
        _review_all(engine, queue, "ann", lambda p: "reject" if p in rejected else "approve")
        verdicts[set_] = queue_stats(engine, queue)["precision"]
    en = verdicts[set_id]
    # By hand: table items 0,1,2,6 (2 rejected) -> 3/4; WordNet 2,3,4 -> 1/3; phrase 5 -> 1/1;
    # item 7 recorded no replacement -> 0/1 under "not recorded".
    assert {s: (v["kept"], v["n"]) for s, v in en["source"].items()} == {
        "reviewed table": (3, 4), "WordNet": (1, 3), "listed phrase": (1, 1),
        "not recorded": (0, 1)}
    assert {k: (v["kept"], v["n"]) for k, v in en["level"].items()} == {"word": (5, 8)}
    assert {k: (v["kept"], v["n"]) for k, v in en["language"].items()} == {"en": (5, 8)}
    zh = verdicts[zh_set]
    assert {s: (v["kept"], v["n"]) for s, v in zh["source"].items()} == {
        "reviewed table": (1, 1), "Cilin": (1, 2)}


def test_a_judged_answers_queue_gives_the_planted_judges_accuracy(engine) -> None:
    from tests.fakes.stored_runs import seed_dataset, seed_run

    dataset = seed_dataset(engine, "sums", [f"{i} + 1" for i in range(40)])
    judge_says = {i: [1 if i % 4 else 0] for i in range(40)}  # 30 correct, 10 incorrect
    planted_wrong = {3, 5, 8, 12, 17, 20, 29}  # the judge's verdict is wrong on these
    run = seed_run(engine, dataset, judge_says, 1)
    queue = rq.create_queue(engine, run_id=run, double_share=0.0)
    from evalcore.dataset import load_items
    from evalcore.store import queries

    idx_of = {int(i.id): int(i.idx) for i in load_items(engine, dataset)}
    call_item = {int(c.id): idx_of[int(c.item_id)] for c in queries.run_calls(engine, run)}
    position_item = {int(i.position): call_item[int(i.call_id)]
                     for i in rq.queue_items(engine, queue)}
    _review_all(engine, queue, "ann",
                lambda p: "wrong" if position_item[p] in planted_wrong else "right")
    judge = queue_stats(engine, queue)["judge"]
    assert (judge["kept"], judge["n"]) == (40 - len(planted_wrong), 40)
    judged_correct = {i for i in range(40) if i % 4}
    assert judge["confusion"] == {
        "judge_correct_people_correct": len(judged_correct - planted_wrong),
        "judge_correct_people_incorrect": len(judged_correct & planted_wrong),
        "judge_incorrect_people_correct": len(planted_wrong - judged_correct),
        "judge_incorrect_people_incorrect": 10 - len(planted_wrong - judged_correct)}


def test_a_sets_precision_counts_each_item_once_from_its_newest_queue(engine) -> None:
    from evalcore.report.review_stats import set_precision

    set_id, _ = seed_attack_set(engine, 4, details=[{"replacements": [
        {"before": "a", "after": "b", "sense": "table"}]}] * 4)
    old = rq.create_queue(engine, attack_set_id=set_id)
    _review_all(engine, old, "ann", lambda p: "reject")  # all 4 rejected first
    new = rq.create_queue(engine, attack_set_id=set_id, sample=2, seed=1)
    _review_all(engine, new, "bob", lambda p: "approve")  # 2 of them approved later
    found = set_precision(engine, set_id)
    assert (found["overall"]["kept"], found["overall"]["n"]) == (2, 4)
    assert (found["source"]["reviewed table"]["kept"], found["source"]["reviewed table"]["n"]) \
        == (2, 4)



def test_the_trust_report_says_what_the_reviews_found(engine) -> None:
    from sqlalchemy import update

    from evalcore.report.trust import trust_report_html
    from evalcore.store import queries
    from evalcore.store.tables import Run
    RUN = Run.__table__
    from tests.fakes.stored_runs import seed_dataset, seed_run

    dataset = seed_dataset(engine, "sums", [f"{i} + 1" for i in range(4)])
    run = seed_run(engine, dataset, {i: [1] for i in range(4)}, 1)
    set_id, _ = seed_attack_set(engine, 5)
    config = dict(queries.get_run(engine, run).config)
    config["spec"] = {**config["spec"], "extra": {"attack_set_ids": [set_id]}}
    with engine.begin() as conn:
        conn.execute(update(RUN).where(RUN.c.id == run).values(config=config))
    attacks = rq.create_queue(engine, attack_set_id=set_id)
    _review_all(engine, attacks, "ann", lambda p: "reject" if p < 2 else "approve")
    answers = rq.create_queue(engine, run_id=run)
    _review_all(engine, answers, "ann", lambda p: "wrong" if p == 0 else "right")
    html = trust_report_html(engine, runs=[run])
    assert "reviews found</h2>" in html
    assert f"attack set {set_id}: attacked questions kept in meaning</td><td>60% [" in html
    assert f"judge right (review queue {answers})</td><td>75% [" in html
