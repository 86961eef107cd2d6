"""Review of attack items: actions, conflicts between reviewers, filters, progress, export."""
from __future__ import annotations

import csv
from datetime import datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from evalcore.perturb.generate import make_attack_set
from evalcore.perturb.review import (
    ReviewConflictError,
    approve,
    approve_unflagged,
    attack_item_info,
    changes,
    edit_attack_item,
    get_attack_item,
    item_changes,
    list_attack_items,
    question_numbers,
    reject,
    review_log,
    review_progress,
    set_review,
    unique_pairs,
)
from evalcore.perturb.sets import AttackSetError
from tests.perturb.attack_set_helpers import fake_engine, math_dataset  # noqa: F401


@pytest.fixture()
def attack_set(engine, math_dataset, fake_engine):
    return make_attack_set(engine, dataset=math_dataset, level="word")


def test_actions_record_reviewer_and_time(engine, attack_set):
    first, second, *_ = list_attack_items(engine, attack_set.id)
    before = datetime.utcnow() - timedelta(seconds=5)
    done = approve(engine, first.id, reviewer="ann", note="fine")
    assert (done.status, done.reviewer, done.note) == ("approved", "ann", "fine")
    assert before < done.reviewed_at.replace(tzinfo=None) < before + timedelta(minutes=1)
    assert reject(engine, second.id, reviewer="bob").status == "rejected"
    log = review_log(engine, attack_set.id)
    assert [(e["id"], e["reviewer"]) for e in log] == [(second.id, "bob"), (first.id, "ann")]
    with pytest.raises(AttackSetError, match="say who reviews"):
        approve(engine, first.id, reviewer=" ")
    with pytest.raises(AttackSetError, match="unknown review status"):
        set_review(engine, first.id, "maybe", reviewer="ann")
    with pytest.raises(AttackSetError, match="no attack item 999"):
        approve(engine, 999, reviewer="ann")


def test_expected_status_detects_a_concurrent_change(engine, attack_set):
    item = list_attack_items(engine, attack_set.id)[0]
    approve(engine, item.id, reviewer="ann", expected_status="pending")
    with pytest.raises(ReviewConflictError, match=r"is now 'approved' by ann at .* not 'pending'"):
        reject(engine, item.id, reviewer="bob", expected_status="pending")
    assert get_attack_item(engine, item.id).status == "approved"
    # without expected_status the last write wins
    assert reject(engine, item.id, reviewer="bob").status == "rejected"


def test_bulk_approve_never_touches_flagged_items(engine, attack_set):
    items = list_attack_items(engine, attack_set.id)
    reject(engine, items[0].id, reviewer="ann")
    assert approve_unflagged(engine, attack_set.id, reviewer="bob") == 2
    by_id = {i.id: i for i in list_attack_items(engine, attack_set.id)}
    assert by_id[items[0].id].status == "rejected"  # already reviewed: left alone
    assert by_id[items[2].id].status == "pending" and by_id[items[2].id].flags
    assert {by_id[items[1].id].status, by_id[items[3].id].status} == {"approved"}
    assert approve_unflagged(engine, attack_set.id, reviewer="bob") == 0
    approve(engine, items[2].id, reviewer="ann")  # explicit approval of a flagged item
    assert get_attack_item(engine, items[2].id).status == "approved"


def test_filters_and_progress(engine, attack_set):
    items = list_attack_items(engine, attack_set.id)
    approve(engine, items[0].id, reviewer="ann")
    reject(engine, items[1].id, reviewer="bob")
    assert [i.id for i in list_attack_items(engine, attack_set.id, flagged=True)] == [items[2].id]
    assert [i.id for i in list_attack_items(engine, attack_set.id, flag="number_changed")] == [
        items[2].id]
    assert list_attack_items(engine, attack_set.id, flag="entity_changed") == []
    assert [i.id for i in list_attack_items(engine, attack_set.id, status="pending",
                                            flagged=False)] == [items[3].id]
    assert [i.id for i in list_attack_items(engine, attack_set.id, offset=1, limit=2)] == [
        items[1].id, items[2].id]
    progress = review_progress(engine, attack_set.id)
    assert {k: progress[k] for k in ("total", "approved", "rejected", "pending", "flagged",
                                     "flagged_pending", "unflagged_pending")} == {
        "total": 4, "approved": 1, "rejected": 1, "pending": 2, "flagged": 1,
        "flagged_pending": 1, "unflagged_pending": 1}
    assert progress["reviewed_share"] == 0.5
    assert progress["reviewers"] == {"ann": 1, "bob": 1}
    assert progress["flags"] == {"number_changed": 1}


def test_edit_is_rechecked_and_reaches_the_derived_item(engine, attack_set):
    from evalcore.store.db import session_scope
    from evalcore.store.tables import Item

    flagged = list_attack_items(engine, attack_set.id, flagged=True)[0]
    fixed = flagged.original.replace("How many", "What number of")
    edited = edit_attack_item(engine, flagged.id, fixed, reviewer="ann",
                              expected_status="pending")
    assert (edited.attacked, edited.edited, edited.status, edited.flags) == (
        fixed, True, "pending", [])
    assert edited.similarity is not None and edited.similarity > 0.8
    with session_scope(engine, write=False) as session:
        assert session.get(Item, flagged.attacked_item_id).question == fixed

    broken = fixed.replace("7", "70")
    again = edit_attack_item(engine, flagged.id, broken, reviewer="bob", approve=True)
    assert again.status == "approved" and "number_changed" in again.flags
    with pytest.raises(ReviewConflictError):
        edit_attack_item(engine, flagged.id, fixed, reviewer="ann", expected_status="pending")
    with pytest.raises(AttackSetError, match="edited question is empty"):
        edit_attack_item(engine, flagged.id, "  ", reviewer="ann")


def test_export_csv_original_columns_attack_columns_and_safe_cells(engine, attack_set, tmp_path):
    from evalcore.perturb.export import write_attack_set_csv

    items = list_attack_items(engine, attack_set.id)
    approve(engine, items[0].id, reviewer="ann")
    edit_attack_item(engine, items[1].id, "=HYPERLINK(\"http://x\") How many pens, 10 and 5?",
                     reviewer="ann")
    path = tmp_path / "out.csv"
    assert write_attack_set_csv(engine, attack_set.id, path) == 4
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    rows = list(csv.DictReader(path.read_text(encoding="utf-8-sig").splitlines()))
    assert list(rows[0]) == ["id", "question", "segmented_text", "equation", "answer",
                             "attacked_question", "attack_num", "synword_pairs", "similarity",
                             "flags", "review_status"]
    assert (rows[0]["id"], rows[0]["answer"], rows[0]["review_status"]) == ("100", "7.0",
                                                                          "approved")
    assert rows[0]["question"] == items[0].original
    assert rows[0]["synword_pairs"] == "{'How many': 'What number of'}"
    assert rows[1]["attacked_question"].startswith("'=HYPERLINK")
    assert rows[2]["flags"] == "number_changed" and rows[2]["attack_num"] == "2"
    assert write_attack_set_csv(engine, attack_set.id, tmp_path / "ok.csv", status="approved") == 1


def test_exported_file_reimports_as_an_attack_set(engine, attack_set, tmp_path):
    from evalcore.perturb.export import write_attack_set_csv
    from evalcore.perturb.set_import import import_attack_set

    path = tmp_path / "apples_underwordattack.csv"
    write_attack_set_csv(engine, attack_set.id, path)
    again = import_attack_set(engine, path, check=False)
    assert again.source_dataset_id == attack_set.source_dataset_id
    assert [i.attacked for i in list_attack_items(engine, again.id)] == [
        i.attacked for i in list_attack_items(engine, attack_set.id)]


def test_the_log_keeps_every_action_not_only_the_latest(engine, attack_set):
    from evalcore.perturb.review import review_version

    item = list_attack_items(engine, attack_set.id)[0]
    assert review_version(engine, attack_set.id) == (0, 0)
    approve(engine, item.id, reviewer="ann", note="looks fine")
    reject(engine, item.id, reviewer="bob", note="changes the answer")
    after_reject = review_version(engine, attack_set.id)
    edit_attack_item(engine, item.id, item.attacked + " please", reviewer="cy")
    assert after_reject[0] == 2 and review_version(engine, attack_set.id)[0] == 3
    assert review_version(engine, attack_set.id)[1] > after_reject[1]  # every action moves it
    log = review_log(engine, attack_set.id)
    assert [(e["reviewer"], e["previous_status"], e["status"], e["edited"]) for e in log] == [
        ("cy", "rejected", "pending", True),
        ("bob", "approved", "rejected", False),
        ("ann", "pending", "approved", False)]
    assert log[0]["attacked"] == item.attacked + " please"  # the edit's new text
    assert log[2]["attacked"] == item.attacked and log[1]["note"] == "changes the answer"
    assert get_attack_item(engine, item.id).reviewer == "cy"  # the item shows the latest only
    assert len(review_log(engine, attack_set.id, limit=2)) == 2


def test_a_refused_action_leaves_no_trace(engine, attack_set):
    item = list_attack_items(engine, attack_set.id)[0]
    approve(engine, item.id, reviewer="ann")
    with pytest.raises(ReviewConflictError):
        reject(engine, item.id, reviewer="bob", expected_status="pending")
    with pytest.raises(ReviewConflictError):
        edit_attack_item(engine, item.id, "new text", reviewer="bob", expected_status="pending")
    assert [e["reviewer"] for e in review_log(engine, attack_set.id)] == ["ann"]
    assert get_attack_item(engine, item.id).attacked == item.attacked


def test_bulk_approval_is_logged_per_item(engine, attack_set):
    unflagged = len(list_attack_items(engine, attack_set.id, flagged=False))
    approved = approve_unflagged(engine, attack_set.id, reviewer="bob")
    log = review_log(engine, attack_set.id)
    assert len(log) == approved == unflagged > 0
    assert {e["note"] for e in log} == {"bulk: approve unflagged"}
    assert {(e["previous_status"], e["status"], e["reviewer"]) for e in log} == {
        ("pending", "approved", "bob")}
    approved_ids = {i.id for i in list_attack_items(engine, attack_set.id, status="approved")}
    assert {e["id"] for e in log} == approved_ids


def test_an_edit_recomputes_pairs_and_changes_from_the_new_text(engine, attack_set):
    """Issue 16: the pairs line was the generator's, stale after an edit."""
    item = list_attack_items(engine, attack_set.id)[0]
    assert item.pairs == [["How many", "What number of"]]
    edited_text = item.original.replace("apples", "fruits").replace("buys", "gets")
    edited = edit_attack_item(engine, item.id, edited_text, reviewer="ann")
    assert edited.pairs == [["apples", "fruits"], ["buys", "gets"]]
    assert edited.attack_num == 3  # places, as the method's: "apples" twice, "buys" once
    info = attack_item_info(edited)
    assert info["pairs"] == [["apples", "fruits"], ["buys", "gets"]]


def test_changes_give_word_pairs_once_each():
    # Chinese: jieba words, trimmed to the characters that differ
    assert changes("张明有120元钱，买书用去80%．还剩多少元？",
                   "张明有120元钱，购书用去80%．还剩多少元？", "zh") == ([["买", "购"]], 1)
    # the same replacement twice in one question is one pair, two changed stretches
    assert changes("What is the big dog doing near the big house?",
                   "What is the large dog doing near the large house?", "en") == (
        [["big", "large"]], 2)
    # an insertion changes the text but is no pair; the language is detected if unknown
    assert changes("How many pens?", "How many red pens?", "") == ([], 1)
    assert unique_pairs([["a", "b"], ["a", "b"], ("c", "c"), ["d", "e"]]) == [
        ["a", "b"], ["d", "e"]]


def test_question_numbers_are_positions_in_the_source_dataset(engine, math_dataset, fake_engine):
    first = make_attack_set(engine, dataset=math_dataset, level="word")
    second = make_attack_set(engine, dataset=math_dataset, level="word", seed=1)
    items = list_attack_items(engine, second.id)
    assert min(i.id for i in items) > max(i.id for i in list_attack_items(engine, first.id))
    numbers = question_numbers(engine, items)
    assert [numbers[i.id] for i in items] == [1, 2, 3, 4]
    assert attack_item_info(items[2], numbers[items[2].id])["number"] == 3


@settings(max_examples=100, deadline=None)
@given(hst.lists(hst.tuples(hst.text(max_size=40), hst.text(max_size=40)), min_size=1,
                 max_size=4))
def test_item_changes_of_hostile_edits_count_each_swap_once(texts):
    """A reviewer's edits are free text: every swap is counted once, says where it was
    made (a place given), and an item whose texts did not change has no swap."""
    places = ["question"] + [f"option {i}" for i in range(len(texts) - 1)]
    swaps, edits = item_changes([(w, a, b) for w, (a, b) in zip(places, texts)], "en")
    assert len({(s[0], s[1]) for s in swaps}) == len(swaps) <= edits
    for swap in swaps:
        assert swap[0] != swap[1]
        assert len(swap) == 2 or set(swap[2].split(", ")) <= set(places)
    same, none = item_changes([(w, a, a) for w, (a, _) in zip(places, texts)], "en")
    assert (same, none) == ([], 0)


@pytest.mark.parametrize("index_base", [0, 1])
def test_a_mapped_datasets_export_keeps_its_options_and_answer_key(engine, tmp_path, index_base):
    """Walked: a char attack of data/samples/mc_en.jsonl (imported with the guessed mapping,
    options in one `choices` column) exported an empty `choices` column; and a file whose
    option numbers count from 1 got 0-based answers. The export now re-imports with the
    same mapping to the same options and answers."""
    import json

    from evalcore.dataset.importer import import_dataset
    from evalcore.perturb.export import write_attack_set_csv
    from evalcore.store.datasets import load_items

    rows = [{"q": f"Question {n}?", "opts": ["red", "green", "blue"], "key": n % 3 + index_base}
            for n in range(3)]
    source = tmp_path / "quiz.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    mapping = {"question": "q", "reference": "key", "choices": "opts", "task_type": "choice",
               "index_base": index_base}
    dataset = import_dataset(engine, source, mapping=mapping)
    attack = make_attack_set(engine, dataset=dataset.id, level="char",
                             params={"similarity": False})
    out = tmp_path / "quiz_attacked.csv"
    write_attack_set_csv(engine, attack.id, out)
    exported = list(csv.DictReader(out.read_text(encoding="utf-8-sig").splitlines()))
    assert [json.loads(r["opts"]) for r in exported] == [r["opts"] for r in rows]
    assert [r["key"] for r in exported] == [str(r["key"]) for r in rows]

    again = tmp_path / "again.csv"  # the export, read back with the same mapping
    again.write_text(out.read_text(encoding="utf-8-sig"), encoding="utf-8")
    reread = import_dataset(engine, again, mapping=mapping, name="again")
    assert [(i.choices, i.reference) for i in load_items(engine, int(reread.id))] == [
        (i.choices, i.reference) for i in load_items(engine, int(dataset.id))]
