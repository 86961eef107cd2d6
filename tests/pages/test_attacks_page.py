"""The Attacks page under AppTest: empty database, review actions through the widgets.

An attack set is created through the service (importing a small attacked CSV in the
method's Math23K word-attack format); the review buttons must change the database.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.pages.helpers import run_page, shown, wait_jobs

REPO = Path(__file__).resolve().parents[2]
PAGE = str(REPO / "pages" / "attacks.py")
HOSTILE = '<script>alert("x")</script>'
HEADER = ["id", "question", "segmented_text", "equation", "answer", "attacked_question",
          "attack_num", "synword_pairs"]
ROWS = [
    ["1", "张明有120元钱，买书用去80%．还剩多少元？", "", "x=120*(1-80%)", "24",
     "张明有120元钱，购书用去80%．还剩多少元？", "1", "{'买': '购'}"],
    ["2", "一本字典定价9元，打八折出售，售价多少元？", "", "x=9*0.8", "7.2",
     "一本词典定价9元，打八折出售，售价多少元？", "1", "{'字典': '词典'}"],
    ["3", "修一段长324米的路，已修240米，还剩多少米？", "", "x=324-240", "84",
     "修一段长324米的路，已修240米，" + HOSTILE, "1", "{'还剩多少米？': '" + HOSTILE + "'}"],
    ["4", "一个圆的半径是3厘米，直径是多少厘米？", "", "x=3*2", "6",
     "一个圆的半径是3厘米，直径是几厘米？", "1", "{'多少': '几'}"],
]
FLAGGED = 4
"""The source idx of the item the fixture flags (bulk approval must leave it pending)."""


@pytest.fixture()
def attack_set(engine, tmp_path):
    """A 4-item word-level attack set imported through the service; one item flagged."""
    from sqlalchemy import update

    from evalcore.perturb.review import list_attack_items
    from evalcore.perturb.set_import import import_attack_set
    from evalcore.store.tables import AttackItem

    path = tmp_path / "Tiny_underwordattack.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([HEADER, *ROWS])
    created = import_attack_set(engine, path, check=False, name="tiny-word")
    items = list_attack_items(engine, int(created.id))
    assert len(items) == len(ROWS)
    with engine.begin() as conn:
        conn.execute(update(AttackItem).where(AttackItem.id == items[FLAGGED - 1].id)
                     .values(flags=["number_changed"], similarity=0.5))
    return created


def items_by_position(engine, set_id: int):
    from evalcore.perturb.review import list_attack_items

    return list_attack_items(engine, set_id)


def open_page(reviewer: str = "") -> AppTest:
    return run_page(PAGE, {"attacks.reviewer": reviewer} if reviewer else None)


def html_of(at: AppTest) -> str:
    return "".join(str(el.proto.body) for el in at.get("html"))


def test_page_loads_with_an_empty_database(page_env):
    at = open_page()
    infos = [str(i.value) for i in at.info]
    assert any("No datasets yet" in t for t in infos)
    assert any("No attack sets yet" in t for t in infos)
    assert not at.get("html")


def test_cards_show_the_diff_escaped_and_the_checks(page_env, engine, attack_set):
    at = open_page()
    markup = html_of(at)
    assert "<script" not in markup  # the hostile attacked text is escaped ...
    assert "&lt;script&gt;" in markup  # ... and still shown
    assert "<del" in markup and "<ins" in markup
    assert "<ins class=\"ec-rep\">购</ins>" in markup and "<del class=\"ec-rep\">字</del>" in markup
    captions = " ".join(str(c.value) for c in at.caption)
    assert "number_changed" in captions and "字典 → 词典" in captions
    # the reviewer starts as the one local identity (not empty, not "tester"): ready
    from evalcore.auth.identity import local_user_name

    first = items_by_position(engine, int(attack_set.id))[0]
    assert at.text_input(key="attacks.reviewer_input").value == local_user_name()
    assert not at.button(key=f"attacks.approve.{first.id}").disabled
    assert not any("Enter your name" in str(w.value) for w in at.warning)
    at.text_input(key="attacks.reviewer_input").input("").run()  # cleared: no reviews
    assert at.button(key=f"attacks.approve.{first.id}").disabled
    assert any("Enter your name" in str(w.value) for w in at.warning)


def test_approve_reject_and_filters_change_and_read_the_database(page_env, engine, attack_set):
    set_id = int(attack_set.id)
    first, second, *_ = items_by_position(engine, set_id)
    at = open_page()
    at.text_input(key="attacks.reviewer_input").input("alice").run()
    assert at.session_state["attacks.reviewer"] == "alice"
    at.button(key=f"attacks.approve.{first.id}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    at.button(key=f"attacks.reject.{second.id}").click().run()
    assert not at.exception
    now = {i.id: i for i in items_by_position(engine, set_id)}
    assert (now[first.id].status, now[first.id].reviewer) == ("approved", "alice")
    assert now[first.id].reviewed_at is not None
    assert (now[second.id].status, now[second.id].reviewer) == ("rejected", "alice")
    assert {now[i].status for i in now if i not in (first.id, second.id)} == {"pending"}
    # who and when is shown per item; the progress counts both reviews
    headers = " ".join(str(m.value) for m in at.markdown)
    assert "approved by alice at" in headers and "rejected by alice at" in headers
    assert "Reviewed 2 / 4" in at.get("progress")[0].proto.text
    # the review log shows both actions, newest first, with the status each one replaced
    log = next(d.value for d in at.dataframe if "previous_status" in d.value.columns)
    assert list(zip(log["id"], log["previous_status"], log["status"])) == [
        (second.id, "pending", "rejected"), (first.id, "pending", "approved")]

    at.selectbox(key="attacks.status").select("approved").run()
    cards = [str(m.value) for m in at.markdown if "· **" in str(m.value)]
    assert len(cards) == 1 and "**1.** Q1 ·" in cards[0]
    at.selectbox(key="attacks.status").select("all").run()
    at.selectbox(key="attacks.flag").select("number_changed").run()
    cards = [str(m.value) for m in at.markdown if "· **" in str(m.value)]
    flagged = items_by_position(engine, set_id)[FLAGGED - 1]
    assert len(cards) == 1 and f"Q{FLAGGED} ·" in cards[0] and flagged.flags


def test_a_clash_with_another_reviewer_is_reported_not_overwritten(page_env, engine, attack_set):
    from evalcore.perturb.review import set_review

    set_id = int(attack_set.id)
    first = items_by_position(engine, set_id)[0]
    at = open_page(reviewer="alice")
    set_review(engine, int(first.id), "rejected", reviewer="bob")  # meanwhile, elsewhere
    at.button(key=f"attacks.approve.{first.id}").click().run()
    assert not at.exception
    assert items_by_position(engine, set_id)[0].status == "rejected"
    assert any("bob" in str(w.value) for w in at.warning)


def test_edit_is_saved_and_rechecked(page_env, engine, attack_set):
    from evalcore import perturb
    from tests.conftest import require

    require(hasattr(perturb, "check_attack"), "the perturbation engine (check_attack) is missing")
    set_id = int(attack_set.id)
    item = items_by_position(engine, set_id)[1]
    edited = "一本词典定价9元，打八折卖出，售价多少元？"
    at = open_page(reviewer="carol")
    at.text_area(key=f"attacks.text.{item.id}").input(edited)  # typed, not committed
    at.button(key=f"attacks.save.{item.id}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    after = items_by_position(engine, set_id)[1]
    assert (after.attacked, after.edited, after.status, after.reviewer) == (
        edited, True, "pending", "carol")
    assert after.similarity is not None  # the import had no checks: this one is the re-check
    assert any("re-checked" in str(i.value) for i in at.info)
    # the derived dataset's item (what runs ask) has the edit too
    from evalcore.store.db import session_scope
    from evalcore.store.tables import Item

    with session_scope(engine, write=False) as session:
        assert session.get(Item, after.attacked_item_id).question == edited


def test_bulk_approve_needs_confirmation_and_leaves_flagged_items(page_env, engine, attack_set):
    set_id = int(attack_set.id)
    at = open_page(reviewer="dave")
    at.button(key="attacks.bulk").click().run()
    assert {i.status for i in items_by_position(engine, set_id)} == {"pending"}  # not yet
    assert any("Approve up to 3" in str(w.value) for w in at.warning)
    at.button(key="attacks.bulk_confirm").click().run()
    assert not at.exception, [e.value for e in at.exception]
    statuses = [(i.status, i.reviewer) for i in items_by_position(engine, set_id)]
    assert statuses[FLAGGED - 1] == ("pending", "")
    assert [s for n, s in enumerate(statuses) if n != FLAGGED - 1] == [("approved", "dave")] * 3
    assert not at.get("button") or "attacks.bulk_confirm" not in [b.key for b in at.button]


def test_export_button_is_offered_for_the_set(page_env, engine, attack_set):
    at = open_page()
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["Export CSV"]


def test_generating_a_set_from_the_form_runs_in_the_background(page_env, engine):
    from evalcore import perturb
    from evalcore.dataset import import_dataset
    from evalcore.perturb.sets import list_attack_sets
    from tests.conftest import require

    require(hasattr(perturb, "attack_questions"), "the perturbation engine is missing")
    import_dataset(engine, REPO / "data" / "samples" / "mc_en.jsonl", name="mc",
                   mapping={"question": "question", "reference": "answer",
                            "choices": "choices", "task_type": "choice"})
    at = open_page(reviewer="frank")
    at.radio(key="attacks.level").set_value("char")
    limit = next(w for w in at.number_input if w.key.startswith("attacks.limit"))
    limit.set_value(3)
    at.button(key="attacks.generate").click().run()
    assert not at.exception, [e.value for e in at.exception]
    jobs = wait_jobs(engine)  # the set exists at once; the app's embedded worker fills it
    assert [(j.kind, j.status, j.created_by) for j in jobs] == [("attack", "done", "frank")]
    sets = list_attack_sets(engine)
    assert len(sets) == 1 and sets[0].level == "char" and sets[0].created_by == "frank"
    assert sets[0].item_count == 3
    at.run()
    assert not at.exception
    assert at.session_state["attacks.set"] == sets[0].id
    assert len(at.get("html")) >= 3


def _csv_bytes(rows=ROWS) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer).writerows([HEADER, *rows])
    return buffer.getvalue().encode("utf-8")


def test_save_buttons_work_without_committing_the_text_first(page_env, engine, attack_set):
    """Issue 16: the save buttons stayed disabled until the text area was committed
    (Ctrl+Enter); now the edit is a form, so typing then clicking saves."""
    item = items_by_position(engine, int(attack_set.id))[1]
    at = open_page(reviewer="carol")
    save = at.button(key=f"attacks.save.{item.id}")
    assert not save.disabled and not at.button(key=f"attacks.save_approve.{item.id}").disabled
    assert save.proto.is_form_submitter  # the text goes with the click
    assert any("no Ctrl+Enter needed" in str(c.value) for c in at.caption)
    save.click().run()  # nothing typed: nothing saved, and the card says so
    assert not at.exception
    assert not items_by_position(engine, int(attack_set.id))[1].edited
    assert any("Nothing to save" in str(i.value) for i in at.info)


def test_pairs_line_follows_the_edit_and_shows_each_pair_once(page_env, engine, attack_set):
    from sqlalchemy import update

    from evalcore import perturb
    from evalcore.store.tables import AttackItem
    from tests.conftest import require

    require(hasattr(perturb, "check_attack"), "the perturbation engine (check_attack) is missing")
    set_id = int(attack_set.id)
    first, second, *_ = items_by_position(engine, set_id)
    with engine.begin() as conn:  # a generator that listed one replacement twice
        conn.execute(update(AttackItem).where(AttackItem.id == first.id)
                     .values(pairs=[["买", "购"], ["买", "购"]]))
    at = open_page(reviewer="carol")
    captions = [str(c.value) for c in at.caption]
    assert sum(c.count("买 → 购") for c in captions) == 1
    at.text_area(key=f"attacks.text.{second.id}").input("一本字典定价9元，打八折卖出，售价多少元？")
    at.button(key=f"attacks.save.{second.id}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    line = next(str(c.value) for c in at.caption if "出售 → 卖出" in str(c.value))
    assert "字典 → 词典" not in line  # the edit put 字典 back: that pair is gone
    assert "**1 swap, in the question**" in line


def test_cards_are_numbered_by_the_question_not_the_item_id(page_env, engine, attack_set):
    from evalcore.perturb.set_import import import_attack_set

    second = import_attack_set(engine, _csv_bytes(), filename="Tiny_underwordattack.csv",
                               check=False, name="tiny-word-2", allow_duplicate=True)
    at = run_page(PAGE, {"attacks.set": int(second.id)})
    cards = [str(m.value) for m in at.markdown if "· **" in str(m.value)]
    assert cards[0].startswith("**1.** Q1 ·"), cards[0]
    assert all("item" not in c.split("·")[0] for c in cards)


def test_an_attacked_file_is_imported_from_the_page(page_env, engine):
    """The page checks the file at once and queues its import; the app's worker imports
    it (no spinner, no work in the page) and the page then opens the new set."""
    from evalcore.auth.audit import list_events
    from evalcore.perturb.sets import list_attack_sets
    from evalcore.store.jobs import list_jobs
    from evalcore.store.tables import Upload

    at = open_page(reviewer="gina")
    at.file_uploader(key="attacks.import_file").set_value(
        ("Tiny_underwordattack.csv", _csv_bytes(), "text/csv")).run()
    at.button(key="attacks.import").click().run()
    assert not at.exception, [e.value for e in at.exception]
    jobs = wait_jobs(engine)
    assert [(j.kind, j.status, j.created_by, j.done, j.total) for j in jobs] == [
        ("attack_import", "done", "gina", 4, 4)]
    sets = list_attack_sets(engine)
    assert [(s.name, s.level, s.item_count, s.origin) for s in sets] == [
        ("Tiny_underwordattack", "word", 4, "imported")]
    assert sets[0].params["job_id"] == jobs[0].id and sets[0].params["similarity_checked"]
    with engine.connect() as conn:  # the file's bytes are gone with the job
        assert conn.execute(Upload.__table__.select()).fetchall() == []
    at.run()
    assert not at.exception
    assert at.session_state["attacks.set"] == sets[0].id
    assert any("import of Tiny_underwordattack.csv" in str(s.value) and "ready for review"
               in str(s.value) for s in at.success)
    assert [e.action for e in list_events(engine)][-1] == "attack_set.import"
    assert "st.spinner" not in (REPO / "pages" / "_attack_sets.py").read_text()
    # the same file again is refused at once, with a way to import it anyway
    at.button(key="attacks.import").click().run()
    errors = [str(e.value) for e in at.error]
    assert any("already imported as attack set #1" in e and "Import even if" in e
               for e in errors) and not any("--" in e for e in errors), errors
    assert len(list_jobs(engine)) == 1  # nothing queued
    at.checkbox(key="attacks.import_again").check().run()
    at.button(key="attacks.import").click().run()
    assert not at.error, [e.value for e in at.error]
    wait_jobs(engine)
    assert len(list_attack_sets(engine)) == 2


def test_deleting_a_set_asks_first_and_leaves_no_stale_state(page_env, engine, attack_set):
    from evalcore.perturb.sets import list_attack_sets

    set_id = int(attack_set.id)
    first = items_by_position(engine, set_id)[0]
    at = open_page(reviewer="hal")
    at.button(key=f"attacks.approve.{first.id}").click().run()
    at.button(key="attacks.delete").click().run()
    assert any("Delete attack set" in str(w.value) for w in at.warning)
    at.button(key="attacks.delete_cancel").click().run()
    assert len(list_attack_sets(engine)) == 1
    at.button(key="attacks.delete").click().run()
    at.button(key="attacks.delete_confirm").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert list_attack_sets(engine) == []
    assert any(f"Deleted attack set #{set_id}" in str(s.value) for s in at.success)
    assert f"attacks.note.{first.id}" not in at.session_state
    assert any("No attack sets yet" in str(i.value) for i in at.info)
    at.run()  # the success message was shown once
    assert not any("Deleted attack set" in str(s.value) for s in at.success)


def test_a_set_used_by_runs_is_not_deleted_and_the_page_points_to_them(app, engine,
                                                                       attack_set):
    from evalcore.perturb.sets import list_attack_sets
    from evalcore.store import queries
    from evalcore.store.tables import Call

    item = items_by_position(engine, int(attack_set.id))[0]
    run = queries.create_run(engine, kind="robustness", model="m", status="done")
    queries.record_calls(engine, [Call(run_id=run.id, item_id=item.attacked_item_id, round=1)])
    at = app.run()  # through the router: page links need st.navigation's pages
    at.switch_page("pages/attacks.py").run()
    at.button(key="attacks.delete").click().run()
    at.button(key="attacks.delete_confirm").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(list_attack_sets(engine)) == 1
    assert any(f"run(s) {run.id}" in str(e.value) for e in at.error)
    links = [link.proto.label for link in at.get("page_link")]
    assert any(f"Open Results to see or delete run(s) {run.id}" in label for label in links)


def test_a_set_whose_generation_is_queued_says_so(page_env, engine, monkeypatch):
    """Not "0 items · generated" and "No items match these filters" while nothing ran."""
    from evalcore.dataset import import_dataset
    from evalcore.runner.attack import create_attack_job

    monkeypatch.setenv("EVALCORE_EMBEDDED_WORKER", "0")  # the job stays queued here
    import_dataset(engine, REPO / "data" / "samples" / "mc_en.jsonl", name="mc",
                   mapping={"question": "question", "reference": "answer",
                            "choices": "choices", "task_type": "choice"})
    create_attack_job(engine, dataset="mc", level="char", limit=3, name="queued-set")
    at = open_page()
    picker = at.selectbox(key="attacks.set")
    assert picker.options[0].endswith("· generation queued"), picker.options
    assert "0 items" not in picker.options[0]
    infos = [str(i.value) for i in at.info]
    assert any("no items yet: generation queued" in t for t in infos), infos
    assert not any("No items match these filters" in t for t in infos)


def test_cards_say_why_a_degenerate_flag_fired(page_env, engine, attack_set):
    """A back-translation cut off and padded with "；" shows each flag's reason, escaped."""
    from sqlalchemy import update

    from evalcore.store.tables import AttackItem

    first = items_by_position(engine, int(attack_set.id))[0]
    cut = "张明有120元钱，买书用去80%．还剩*多少" + "；" * 40
    with engine.begin() as conn:
        conn.execute(update(AttackItem).where(AttackItem.id == first.id).values(
            attacked=cut, flags=["cut_off", "punctuation_run", "length_ratio"]))
    at = open_page()
    raw = " ".join(str(c.value) for c in at.caption)
    captions = shown(raw)
    assert "`punctuation_run`: 40 punctuation marks in a row" in captions
    assert "`cut_off`: ends on \"；\" mid" in captions and "剩*多少" in captions
    assert "剩*多少" not in raw  # the model's text is escaped, never read as emphasis
    assert "`length_ratio`: length 2.70x the original" in captions


def _option_c_attacked(engine, attack_set):
    """The set's first item as a word attack that swapped one word of the question and
    one of option C (紧张 -> 焦虑): the item."""
    from sqlalchemy import update

    from evalcore.store.tables import AttackItem, Item

    first = items_by_position(engine, int(attack_set.id))[0]
    with engine.begin() as conn:
        conn.execute(update(Item).where(Item.id == first.source_item_id)
                     .values(choices=["24元", "我会失败", "他很紧张"]))
        conn.execute(update(Item).where(Item.id == first.attacked_item_id)
                     .values(choices=["24元", "我会失败", "他很焦虑"]))
        conn.execute(update(AttackItem).where(AttackItem.id == first.id)
                     .values(pairs=[["买", "购", "question"], ["紧张", "焦虑", "option 2"]]))
    return first


def test_cards_show_the_attacked_options_diff(page_env, engine, attack_set):
    """#25: a word attack that reached an option shows that option's diff under the
    question, with the label, and the pair says where it was made."""
    _option_c_attacked(engine, attack_set)
    at = open_page()
    captions = " ".join(str(c.value) for c in at.caption)
    assert "Option C" in captions and "Option B" not in captions
    assert "紧张 → 焦虑 (option C)" in captions
    markup = html_of(at)
    assert "<ins class=\"ec-rep\">焦虑</ins>" in markup or "焦虑</ins>" in markup


def test_the_card_edits_an_attacked_option_and_counts_swaps(page_env, engine, attack_set):
    """Walk 2026-11-27: the card could edit only the question, and after an edit the
    question's pairs lost their `(question)` tag. Each attacked option now has its own text
    area; the save stores it (derived item, log) and the line counts distinct swaps."""
    from evalcore.perturb.review import review_log
    from evalcore.store.db import session_scope
    from evalcore.store.tables import Item

    first = _option_c_attacked(engine, attack_set)
    at = open_page(reviewer="carol")
    assert "2 swaps, in the question and 1 option" in " ".join(str(c.value) for c in at.caption)
    at.text_area(key=f"attacks.option.{first.id}.2").input("他很不安")
    at.text_area(key=f"attacks.text.{first.id}").input(
        "张明有120元钱，购书用去80%．还余多少元？")
    at.button(key=f"attacks.save.{first.id}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    after = items_by_position(engine, int(attack_set.id))[0]
    with session_scope(engine, write=False) as session:
        derived = session.get(Item, after.attacked_item_id)
        assert (derived.choices, derived.reference) == (["24元", "我会失败", "他很不安"], "24")
    assert {tuple(p) for p in after.pairs} >= {("买", "购", "question"),
                                              ("紧张", "不安", "option 2")}
    captions = " ".join(str(c.value) for c in at.caption)
    assert "买 → 购 (question)" in captions and "紧张 → 不安 (option C)" in captions
    assert "in the question and 1 option" in captions
    assert review_log(engine, int(attack_set.id))[0]["attacked"].endswith("option C: 他很不安")


def _mc_dataset(engine):
    from evalcore.dataset import import_dataset

    import_dataset(engine, REPO / "data" / "samples" / "mc_en.jsonl", name="mc",
                   mapping={"question": "question", "reference": "answer",
                            "choices": "choices", "task_type": "choice"})


def test_a_parameter_value_the_engine_cannot_use_is_refused_on_submit(page_env, engine):
    """First-day walk: `{"ops": ["explode"]}` was queued and failed in the worker with a
    traceback; the page said "generation failed" and never why."""
    from evalcore.perturb.sets import list_attack_sets
    from evalcore.store.jobs import list_jobs

    _mc_dataset(engine)
    at = open_page(reviewer="frank")
    at.radio(key="attacks.level").set_value("char").run()
    at.text_area(key="attacks.params.char").input('{"ops": ["explode"]}')
    at.button(key="attacks.generate").click().run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [str(e.value) for e in at.error]
    assert any('ops=["explode"]' in e and "insert, swap, drop, keyboard" in e for e in errors)
    assert not list_jobs(engine) and not list_attack_sets(engine)


def test_a_set_whose_generation_failed_shows_the_jobs_error(page_env, engine, monkeypatch):
    """Also after a reload (not this session's job): the job's error, not only "failed"."""
    from sqlalchemy import update

    from evalcore.runner.attack import create_attack_job
    from evalcore.store.tables import Job

    monkeypatch.setenv("EVALCORE_EMBEDDED_WORKER", "0")
    _mc_dataset(engine)
    job_id = create_attack_job(engine, dataset="mc", level="char", limit=3, name="broken")
    with engine.begin() as conn:
        conn.execute(update(Job).where(Job.id == job_id).values(
            status="failed", error="TranslationError: the translator model is unreachable"))
    at = open_page()
    assert at.selectbox(key="attacks.set").options[0].endswith("generation failed")
    assert any("the translator model is unreachable" in str(e.value) for e in at.error)


def test_the_sentence_translator_defaults_to_the_local_model(page_env, engine):
    """Not the alphabetically first model (a mock or a paid one)."""
    from evalcore.providers.base import ModelConfig
    from evalcore.providers.registry import add_model, load_models

    _mc_dataset(engine)
    add_model(page_env.models_path, ModelConfig(name="aaa-mock", base_url="http://127.0.0.1:9/v1",
                                                model="m"))
    assert min(load_models(page_env.models_path)) == "aaa-mock"
    at = open_page()
    at.radio(key="attacks.level").set_value("sentence").run()
    assert at.selectbox(key="attacks.translator").value == "llm:local"


def test_cards_show_every_option_and_any_option_can_be_edited(page_env, engine, attack_set):
    """First-day walk: a card showed options only when the attack changed one (a sentence
    stem judged without its endings), and only changed options could be edited."""
    from sqlalchemy import update

    from evalcore.store.db import session_scope
    from evalcore.store.tables import Item

    second = items_by_position(engine, int(attack_set.id))[1]  # options left as they were
    with engine.begin() as conn:
        for item_id in (second.source_item_id, second.attacked_item_id):
            conn.execute(update(Item).where(Item.id == item_id)
                         .values(choices=["7.2元", "8元", "9元"]))
    at = open_page(reviewer="carol")
    from evalcore.markup import md

    shown = values_of(at, "markdown")
    assert {f"Option A: {md('7.2元')}", "Option B: 8元", "Option C: 9元"} <= set(shown), shown
    at.text_area(key=f"attacks.option.{second.id}.1").input("8块")
    at.button(key=f"attacks.save.{second.id}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    with session_scope(engine, write=False) as session:
        assert session.get(Item, second.attacked_item_id).choices == ["7.2元", "8块", "9元"]


def values_of(at: AppTest, kind: str) -> list[str]:
    return [str(el.value) for el in at.get(kind)]


def test_the_review_log_and_a_clash_name_the_question_as_the_cards_do(page_env, engine,
                                                                        attack_set):
    """The log said `id 31` and a clash "attack item 31 (set 2)" while the cards say Q2."""
    from evalcore.perturb.review import review_log, set_review

    set_id = int(attack_set.id)
    second = items_by_position(engine, set_id)[1]
    at = open_page(reviewer="alice")
    set_review(engine, int(second.id), "rejected", reviewer="bob")  # meanwhile, elsewhere
    at.button(key=f"attacks.approve.{second.id}").click().run()
    warning = next(str(w.value) for w in at.warning if "bob" in str(w.value))
    assert warning.startswith(f"Q2 of attack set #{set_id} is now 'rejected' by bob"), warning
    assert f"item {second.id}" not in warning
    assert [row["question"] for row in review_log(engine, set_id)] == ["Q2"]
    log = next(df.value for df in at.dataframe if "previous_status" in df.value.columns)
    assert list(log["question"]) == ["Q2"]


def test_unticking_keep_register_queues_a_word_attack_that_may_move_formality(page_env, engine):
    from evalcore.dataset import import_dataset
    from evalcore.perturb.sets import list_attack_sets

    import_dataset(engine, REPO / "data" / "samples" / "mc_en.jsonl", name="mc",
                   mapping={"question": "question", "reference": "answer",
                            "choices": "choices", "task_type": "choice"})
    at = open_page(reviewer="frank")
    at.radio(key="attacks.level").set_value("word").run()
    assert at.checkbox(key="attacks.keep_register").value is True  # the default keeps it
    at.checkbox(key="attacks.keep_register").uncheck()
    at.checkbox(key="attacks.similarity").uncheck()
    limit = next(w for w in at.number_input if w.key.startswith("attacks.limit"))
    limit.set_value(1)
    at.button(key="attacks.generate").click().run()
    assert not at.exception, [e.value for e in at.exception]
    wait_jobs(engine)
    sets = list_attack_sets(engine)
    assert len(sets) == 1 and sets[0].level == "word"
    assert sets[0].params["params"]["keep_register"] is False
    assert sets[0].params["resolved"]["keep_register"] is False


@pytest.mark.usefixtures("runner_clients")
def test_a_model_picked_as_swap_judge_judges_the_word_attack(page_env, engine):
    from evalcore.dataset import import_dataset
    from evalcore.perturb.sets import list_attack_sets
    from evalcore.providers.base import ModelConfig
    from evalcore.providers.registry import add_model
    from tests.fakes.fault_server import FaultConfig, FaultServer

    asked: list[str] = []

    def judge(prompt: str, schema: dict | None) -> str:
        asked.append(prompt)
        return "yes"

    import_dataset(engine, REPO / "data" / "samples" / "mc_en.jsonl", name="mc",
                   mapping={"question": "question", "reference": "answer",
                            "choices": "choices", "task_type": "choice"})
    with FaultServer(FaultConfig(responder=judge)) as server:
        add_model(page_env.models_path, ModelConfig(name="judge-model", model="m",
                                                    base_url=server.openai_url))
        at = open_page(reviewer="frank")
        at.radio(key="attacks.level").set_value("word").run()
        assert at.selectbox(key="attacks.swap_judge").value == "embedded check"
        at.selectbox(key="attacks.swap_judge").set_value("judge-model")
        at.checkbox(key="attacks.similarity").uncheck()
        at.button(key="attacks.generate").click().run()
        assert not at.exception, [e.value for e in at.exception]
        wait_jobs(engine)
    sets = list_attack_sets(engine)
    assert len(sets) == 1 and sets[0].params["swap_judge"] == "judge-model"
    assert sets[0].params["resolved"]["swap_judge"] == "judge-model"
    from evalcore.store.jobs import list_jobs
    assert asked and "Replaced:" in asked[0], [(j.status, j.error) for j in list_jobs(engine)]
