"""The Stability page shows answers grouped with counts, G-Pass / mG-Pass, semantic
entropy and judge noise, each with its one-line explanation (AppTest, stored run)."""
from __future__ import annotations

from datetime import timedelta

from tests.pages.helpers import values
from tests.pages.test_stability_page import MAPPING, SAMPLE, open_page

ROUNDS = 4
# item position -> per round (reply, verdict); item 0's reference is B (Mercury)
PLAN = {
    0: [("The answer is B.", 1), ("B. Mercury", 1), ("The answer is B.", 1), ("B", 1)],
    1: [("A", 1), ("C", 0), ("A", 1), ("C", 0)],
    2: [("C", 1), ("C", 0), ("C", 1), ("I cannot tell.", 0)],
}


def planted_run(engine, rejudge: bool) -> int:
    from evalcore.dataset import import_dataset, load_items
    from evalcore.store import queries
    from evalcore.store.tables import utcnow

    dataset = import_dataset(engine, SAMPLE, name="mc", mapping=MAPPING)
    items = load_items(engine, dataset.id, limit=len(PLAN))
    calls = len(items) * ROUNDS
    now = utcnow()
    run = queries.create_run(engine, kind="stability", dataset_id=dataset.id, model="fake",
                             judge="rules", rounds=ROUNDS, status="done", total=calls,
                             done=calls, started_at=now - timedelta(seconds=30),
                             finished_at=now, config={"item_ids": [i.id for i in items]})
    rows = [{"run_id": run.id, "item_id": item.id, "round": r + 1, "stage": "answer",
             "model": "fake", "prompt": "", "answer": reply, "correct": bool(v),
             "score": float(v), "reason": "planted", "error": None}
            for pos, item in enumerate(items) for r, (reply, v) in enumerate(PLAN[pos])]
    if rejudge:  # item 2's "C" (rounds 1-3) judged right twice more: majority right
        rows += [{"run_id": run.id, "item_id": items[2].id, "round": 2, "stage": f"rejudge{j}:9",
                  "model": "judge", "prompt": "", "answer": '{"score": 1}', "correct": True,
                  "score": 1.0, "reason": "ok", "error": None, "created_at": now}
                 for j in (1, 2)]
    queries.record_calls(engine, rows)
    return int(run.id)


def test_the_page_shows_groups_and_every_new_figure_with_its_explanation(page_env, engine):
    planted_run(engine, rejudge=False)
    at = open_page()
    assert not at.exception, [e.value for e in at.exception]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["mG-Pass@4"] == f"{(1 + 0 + 0) / 3:.3f}"  # 4/4, 2/4, 2/4 right
    entropy = (0 + 0.6931 + 0) / 3
    assert metrics["Semantic entropy (mean)"] == f"{entropy:.3f}"
    assert "Judge noise" not in metrics
    captions = " ".join(values(at, "caption"))
    for phrase in ("G-Pass@k_tau: the chance", "mG-Pass@k: G-Pass@k averaged",
                   "Semantic entropy: how spread", "Accuracy by entropy band"):
        assert phrase in captions
    tables = [df.value for df in at.dataframe]
    gpass = next(t for t in tables if "tau 0.75" in t.columns)
    assert list(gpass["k"]) == [1, 2, 4]
    assert gpass.set_index("k").loc[4, "tau 1.0"] == 1 / 3
    ranked = next(t for t in tables if "semantic entropy" in t.columns)
    # answers named as the prompt named the options ("choice 0: ..."), not by letter
    assert ranked["Q"].iloc[0] == "Q2"
    assert ranked["answers"].iloc[0] == "2 answers: 2x 'choice 0', 2x 'choice 2'"
    questions = next(t for t in tables if "ci_width" in t.columns)
    assert set(questions["answers"]) == {"1 answer: 4x 'choice 1'",
                                         "2 answers: 2x 'choice 0', 2x 'choice 2'",
                                         "1 answer: 3x 'choice 2', 1x no answer"}

    at.selectbox(key="stability.question").select(2).run()
    groups = next(df.value for df in at.dataframe if "example" in df.value.columns)
    assert groups.to_dict("records") == [
        {"answer": "choice 2", "count": 3, "right": 2, "wrong": 1, "no verdict": 0,
         "example": "C"},
        {"answer": "no answer", "count": 1, "right": 0, "wrong": 1, "no verdict": 0,
         "example": "I cannot tell."}]
    assert any("1 answer: 3x 'choice 2', 1x no answer" in t for t in values(at, "markdown"))



def test_a_question_without_any_answer_says_so_not_na_nats(page_env, engine, monkeypatch):
    """Walked: "no answer in 2 rounds · semantic entropy n/a nats"."""
    monkeypatch.setitem(PLAN, 2, [("I cannot tell.", 0)] * ROUNDS)
    planted_run(engine, rejudge=False)
    at = open_page()
    at.selectbox(key="stability.question").select(2).run()
    assert not at.exception, [e.value for e in at.exception]
    lines = [t for t in values(at, "markdown") if "semantic entropy" in t]
    assert any("no answer in 4 rounds" in t and "semantic entropy n/a (no answer)" in t
               for t in lines), lines
    assert not any("n/a nats" in t for t in lines)

def test_judge_noise_shows_next_to_the_success_rate(page_env, engine):
    planted_run(engine, rejudge=True)
    at = open_page()
    assert not at.exception, [e.value for e in at.exception]
    metrics = {m.label: m.value for m in at.metric}
    # item 1: spread 0.25, all the model's. Item 2: verdicts 1,0,1,0 (spread 0.25); its "C"
    # is judged right 4 times of 5, so with majorities 1,1,1,0 the spread is 0.1875.
    assert metrics["Judge noise"] == f"{(0.25 - 0.1875) / 0.5:.1%}"
    captions = " ".join(values(at, "caption"))
    assert "Judge noise: the share of the verdicts' spread" in captions
    assert "1 answers judged both right and wrong (in 1 questions)" in captions
    flicker = next(df.value for df in at.dataframe if "judge's share" in df.value.columns)
    row = flicker.set_index("Q").loc["Q3"]  # one numbering on every page
    assert row["judge's share"] == 0.25 and "rounds [1, 2, 3]: 4 right, 1 wrong" in \
        row["answers judged both ways"]


def test_meaning_toggle_rebuilds_the_report_grouped_by_meaning(page_env, engine):
    planted_run(engine, rejudge=False)
    at = open_page()
    assert at.toggle(key="stability.meaning").value is False
    at.toggle(key="stability.meaning").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    # choice answers keep their extracted letters: the figures do not move
    assert {m.label: m.value for m in at.metric}["Semantic entropy (mean)"] == \
        f"{0.6931 / 3:.3f}"


def test_meaning_by_a_judge_shows_its_cost_and_regroups_by_its_stored_verdicts(
        page_env, settings, engine):
    """Open answers: 'Paris' twice, "It's Paris." once, 'Lyon' once; the judge's stored
    verdicts merge the two Paris phrasings (entropy of 3:1), its cost is shown first."""
    import json
    import math

    from evalcore.dataset import import_dataset, load_items
    from evalcore.scorers.meaning import pair_stage
    from evalcore.store import queries
    from tests.pages.helpers import add_fake_model, shown

    add_fake_model(settings, name="judge")
    body = json.dumps({"q": "What is the capital of France?", "a": "Paris"}) + "\n"
    ds = import_dataset(engine, body.encode(), filename="cap.jsonl", name="cap",
                        mapping={"question": "q", "reference": "a", "task_type": "open",
                                 "language": "en"})
    item = load_items(engine, ds.id)[0]
    replies = ["Paris.", "It's Paris.", "Paris.", "Lyon."]
    run = queries.create_run(engine, kind="stability", dataset_id=ds.id, model="fake",
                             judge="rules", rounds=4, status="done", total=4, done=4,
                             config={"item_ids": [item.id]})
    rows = [{"run_id": run.id, "item_id": item.id, "round": r + 1, "stage": "answer",
             "model": "fake", "prompt": "", "answer": text, "correct": "Paris" in text,
             "score": None, "reason": "planted", "error": None}
            for r, text in enumerate(replies)]
    queries.record_calls(engine, rows)
    at = open_page()
    at.toggle(key="stability.meaning").set_value(True).run()
    at.radio(key="stability.meaning_route").set_value("a judge model").run()
    at.selectbox(key="stability.meaning_judge").set_value("judge").run()
    assert not at.exception, [e.value for e in at.exception]
    captions = shown(" ".join(values(at, "caption")))
    assert 'asking judge "same meaning?" costs 2 to 3 judge calls' in captions
    assert at.button(key="stability.meaning_ask")  # the form asks before paying
    rows = [{"run_id": run.id, "item_id": item.id, "round": 1,
             "stage": pair_stage("judge", a, b), "model": "judge", "prompt": "",
             "answer": reply, "correct": same, "score": float(same), "reason": "",
             "error": None}
            for a, b, reply, same in [("paris", "it s paris", "Yes", True),
                                      ("paris", "lyon", "No", False)]]
    queries.record_calls(engine, rows)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    entropy = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert {m.label: m.value for m in at.metric}["Semantic entropy (mean)"] == f"{entropy:.3f}"
    assert 'costs 0 judge calls' in shown(" ".join(values(at, "caption")))
    # walked on the local model: the judge's verdicts were used but the page did not say
    # how answers were grouped nor how many verdicts it could read (the CLI did)
    assert "Grouping: open answers by meaning, judged by judge (2 verdicts, 0 unreadable or " \
           "failed, 0 pairs not judged yet)." in shown(" ".join(values(at, "caption")))
    # walked on the local model: an open group was labelled by its normalised key
    # ("it s paris"); it is shown as a reply as given, the key only groups
    groups = next(df.value for df in at.dataframe if "example" in df.value.columns)
    assert list(groups["answer"]) == ["Paris.", "Lyon."]
    assert any("2 answers: 3x 'Paris.', 1x 'Lyon.'" in t for t in values(at, "markdown"))


def test_a_degenerate_judges_verdicts_do_not_make_judge_noise(page_env, engine):
    """First-day walk: a judge that calls every answer right (one reason for all) still
    fed the "Judge noise" card; its verdicts say nothing about the answers."""
    from evalcore.dataset import load_items
    from evalcore.store import queries
    from evalcore.store.tables import utcnow

    run_id = planted_run(engine, rejudge=False)
    items = load_items(engine, queries.get_run(engine, run_id).dataset_id, limit=len(PLAN))
    now = utcnow()
    queries.record_calls(engine, [
        {"run_id": run_id, "item_id": items[1].id, "round": r, "stage": f"rejudge{j}:9",
         "model": "judge", "prompt": "", "answer": '{"score": 1}', "correct": True,
         "score": 1.0, "reason": "The answer is correct.", "error": None, "created_at": now}
        for r in range(1, ROUNDS + 1) for j in (1, 2)])
    at = open_page()
    assert not at.exception, [e.value for e in at.exception]
    assert {m.label: m.value for m in at.metric}["Judge noise"] == "not measured"
    captions = " ".join(values(at, "caption"))
    assert "not measured: the re-judging judge judge is degenerate" in captions
    assert "one verdict for all 8 judgements: right" in captions
    assert not any("judge's share" in df.value.columns for df in at.dataframe)
