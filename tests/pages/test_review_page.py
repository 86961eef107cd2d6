"""The Review page (AppTest): the card of the item this reviewer holds, with the queue's
guidelines; each decision a button with its key, acting through evalcore (stored,
audited); a reload resumes at the first undecided item; a viewer reads but cannot decide."""
from __future__ import annotations

from tests.conftest import REPO_ROOT
from tests.fakes.review_sets import seed_attack_set
from tests.pages.helpers import run_page, texts

PAGE = str(REPO_ROOT / "pages" / "review.py")


def _queue(engine, n: int = 4, **kwargs) -> int:  # type: ignore[no-untyped-def]
    from evalcore.store import review_queues as rq

    set_id, _ = seed_attack_set(engine, n)
    return rq.create_queue(engine, attack_set_id=set_id, guidelines="Keep the sense.", **kwargs)


def _button(at, name: str):  # type: ignore[no-untyped-def]
    return at.button(key=f"review.{name}")


def test_keys_decide_skip_undo_and_a_reload_resumes(engine, page_env, monkeypatch) -> None:
    from evalcore.store import review_queues as rq

    monkeypatch.setenv("EVALCORE_USER", "ann")
    queue = _queue(engine)
    at = run_page(PAGE)
    shown = texts(at)
    assert "Keep the sense." in shown and "question 0 attacked" in shown
    assert [_button(at, k).proto.shortcut.upper() for k in ("approve", "reject", "skip", "undo")] == [
        "A", "X", "S", "U"]
    _button(at, "approve").click().run()
    assert not at.exception
    assert [(d.reviewer, d.verdict) for d in rq.decisions(engine, queue)] == [("ann", "approve")]
    assert "question 1 attacked" in texts(at)
    _button(at, "skip").click().run()
    assert "question 2 attacked" in texts(at)
    reloaded = run_page(PAGE)  # a new session: resumes at the held, first undecided item
    assert "question 2 attacked" in texts(reloaded)
    _button(reloaded, "reject").click().run()
    _button(reloaded, "undo").click().run()
    assert "question 2 attacked" in texts(reloaded)  # undone: held again, undecided
    assert [d.verdict for d in rq.decisions(engine, queue)] == ["approve"]
    _button(reloaded, "previous").click().run()
    assert any("Your latest decision" in t for t in texts(reloaded))


def test_a_viewer_sees_the_figures_but_no_card(engine, page_env, monkeypatch) -> None:
    from evalcore.store import review_queues as rq
    from tests.auth.conftest import team_actor

    queue = _queue(engine, 2, double_share=1.0)
    for who, verdict in (("ann", "approve"), ("bob", "reject")):
        for _ in range(2):
            rq.submit(engine, queue, rq.next_item(engine, queue, who), who, verdict)
    monkeypatch.setattr("pages._shared.actor", lambda: team_actor("viewer"))
    at = run_page(PAGE)
    assert _button(at, "approve").disabled
    assert "question 0 attacked" not in texts(at)
    assert any("2 disagreement(s) to adjudicate" in t for t in texts(at))


def test_the_attacks_page_shows_what_the_queues_found(engine, page_env) -> None:
    from evalcore.store import review_queues as rq

    set_id, _ = seed_attack_set(engine, 3)
    queue = rq.create_queue(engine, attack_set_id=set_id)
    for verdict in ("reject", "approve", "approve"):
        rq.submit(engine, queue, rq.next_item(engine, queue, "ann"), "ann", verdict)
    at = run_page(str(REPO_ROOT / "pages" / "attacks.py"), {"attacks.set": set_id})
    [table] = [d.value for d in at.dataframe if "by" in d.value.columns]
    assert table[table["by"] == "source"][["group", "kept", "reviewed"]].values.tolist() == [
        ["not recorded", 2, 3]]


def test_edit_key_opens_the_edit_and_saves_it_with_the_verdict(engine, page_env,
                                                                monkeypatch) -> None:
    from evalcore.store import review_queues as rq

    monkeypatch.setenv("EVALCORE_USER", "ann")
    queue = _queue(engine, 2)
    at = run_page(PAGE)
    _button(at, "edit").click().run()
    [question] = [t for t in at.text_area if t.label == "Attacked question"]
    question.set_value("question 0, said better")
    [option] = [t for t in at.text_input if t.label == "Option 1"]
    option.set_value("nope")
    [verdict] = [r for r in at.radio if r.label == "Verdict"]
    verdict.set_value("reject")
    [save] = [b for b in at.button if b.label == "Save the edit"]
    save.click().run()
    assert not at.exception
    [decision] = rq.decisions(engine, queue)
    assert (decision.verdict, decision.question, decision.options) == (
        "reject", "question 0, said better", {"1": "nope"})
    assert "question 1 attacked" in texts(at)


def test_an_answers_card_shows_the_judges_verdict_and_right_wrong_keys(engine, page_env,
                                                                        monkeypatch) -> None:
    from evalcore.store import review_queues as rq
    from tests.fakes.stored_runs import seed_dataset, seed_run

    monkeypatch.setenv("EVALCORE_USER", "ann")
    dataset = seed_dataset(engine, "sums", ["What is 1 + 1?"])
    queue = rq.create_queue(engine, run_id=seed_run(engine, dataset, {0: [0]}, 1),
                            guidelines="Is the verdict right?")
    at = run_page(PAGE)
    shown = " ".join(texts(at))
    assert "What is 1 + 1?" in shown and "incorrect" in shown
    assert _button(at, "wrong").proto.shortcut.upper() == "X"
    _button(at, "wrong").click().run()
    assert [d.verdict for d in rq.decisions(engine, queue)] == ["wrong"]


def test_the_results_page_shows_the_judges_accuracy_from_the_reviews(engine, page_env) -> None:
    from evalcore.store import review_queues as rq
    from tests.fakes.stored_runs import seed_dataset, seed_run
    from tests.pages.helpers import values

    dataset = seed_dataset(engine, "sums", [f"{i} + 1" for i in range(4)])
    run = seed_run(engine, dataset, {i: [1] for i in range(4)}, 1)
    queue = rq.create_queue(engine, run_id=run)
    for verdict in ("wrong", "right", "right", "right"):
        rq.submit(engine, queue, rq.next_item(engine, queue, "ann"), "ann", verdict)
    at = run_page(str(REPO_ROOT / "pages" / "results.py"), {"results.tab": "Runs"})
    assert any(f"judge right (review queue {queue}): 75% (95% " in v and "of 4 reviewed" in v
               for v in values(at, "caption"))
