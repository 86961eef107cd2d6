"""Compare (API and CLI) shows mG-Pass@N, semantic entropy and their change B - A."""
from __future__ import annotations

import math

import pytest

from evalcore.cli import main
from evalcore.metrics.repeats import mg_pass_at_k
from evalcore.report import compare
from tests.fakes.stored_runs import seed_dataset, seed_run

QUESTIONS = [f"What is {i} + 1?" for i in range(4)]
A = {0: [1, 1, 1, 1], 1: [1, 0, 1, 0], 2: [0, 0, 0, 1], 3: [1, 1, 1, 0]}
B = {0: [1, 1, 1, 1], 1: [1, 1, 1, 1], 2: [0, 0, 0, 0], 3: [1, 1, 0, 0]}


@pytest.fixture()
def runs(engine):
    ds = seed_dataset(engine, "plus", QUESTIONS)
    # A's replies name a new number every round ("answer 1.3"); B always says "42"
    return (seed_run(engine, ds, A, 4, model="m-a"),
            seed_run(engine, ds, B, 4, model="m-b", answers={i: "It is 42." for i in B}))


def test_compare_has_mg_pass_and_entropy_with_deltas(engine, runs, capsys):
    run_a, run_b = runs
    result = compare.compare_stability(engine, run_a, run_b)

    def mg(verdicts):
        return sum(mg_pass_at_k(4, sum(v), 4) for v in verdicts.values()) / len(verdicts)

    assert result["a"]["mg_pass_at_n"] == pytest.approx(mg(A))
    assert result["b"]["mg_pass_at_n"] == pytest.approx(mg(B))
    assert result["a"]["semantic_entropy_mean"] == pytest.approx(math.log(4))
    assert result["b"]["semantic_entropy_mean"] == 0.0
    assert result["delta"]["semantic_entropy_mean"] == pytest.approx(-math.log(4))
    assert result["delta"]["mg_pass_at_n"] == pytest.approx(mg(B) - mg(A))
    assert result["a"]["judge_noise"] is None and result["delta"]["judge_noise"] is None

    assert main(["compare", str(run_a), str(run_b)]) == 0
    out = capsys.readouterr().out
    assert (f"{'mG-Pass@N':<16}{mg(A):>10.3f}{mg(B):>10.3f}{mg(B) - mg(A):>+10.3f}") in out
    assert f"{'sem. entropy':<16}{math.log(4):>10.3f}{0:>10.3f}{-math.log(4):>+10.3f}" in out
    assert "judge noise" not in out
    assert "mg_pass_at_k" in out  # the runs' figures list it too


def test_runs_show_json_carries_the_report_with_the_new_names(engine, runs, capsys):
    import json

    run_a, run_b = runs
    assert main(["runs", "show", str(run_b), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    report = data["report"]
    assert report["stability_results"]["0"]["answer_groups"] == [
        {"answer": "42", "label": "42", "count": 4, "correct": 4, "wrong": 0, "example": "It is 42."}]
    assert report["stability_results"]["0"]["semantic_entropy"] == 0.0
    summary = report["summary"]
    assert set(summary["g_pass_at_k"]) == {"1", "2", "4"}
    assert set(summary["g_pass_at_k"]["4"]) == {"0.25", "0.5", "0.75", "1.0"}
    assert set(summary["mg_pass_at_k"]) == {"2", "4"} and summary["semantic_entropy_mean"] == 0.0
    assert main(["runs", "show", str(run_a)]) == 0
    assert "semantic entropy: mean 1.386 nats" in capsys.readouterr().out


def test_open_answers_group_by_meaning_only_when_asked(engine):
    import json as _json

    from evalcore.dataset import import_dataset, load_items
    from evalcore.report.stability import stability_report
    from evalcore.store import queries

    body = _json.dumps({"question": "What is the capital of France?", "answer": "Paris"}) + "\n"
    ds = import_dataset(engine, body.encode(), filename="cap.jsonl", name="cap",
                        mapping={"question": "question", "reference": "answer",
                                 "task_type": "open", "language": "en"})
    item = load_items(engine, ds.id)[0]
    replies = ["Paris is the capital of France.", "The capital of France is Paris.",
               "Paris is the capital of France.", "Lyon is the capital of France."]
    run = queries.create_run(engine, kind="stability", dataset_id=ds.id, model="m", judge="rules",
                             rounds=4, status="done", total=4, done=4,
                             config={"item_ids": [item.id]})
    queries.record_calls(engine, [
        {"run_id": run.id, "item_id": item.id, "round": r + 1, "stage": "answer", "model": "m",
         "prompt": "", "answer": text, "correct": r < 3, "score": float(r < 3),
         "reason": "planted", "error": None} for r, text in enumerate(replies)])
    by_text = stability_report(engine, run.id)
    groups = by_text["stability_results"]["0"]["answer_groups"]
    assert [(g["answer"], g["count"]) for g in groups] == [
        ("paris is the capital of france", 2), ("the capital of france is paris", 1),
        ("lyon is the capital of france", 1)]
    assert by_text["summary"]["answer_grouping"].startswith("by extracted answer")
    by_meaning = stability_report(engine, run.id, meaning=True)
    res = by_meaning["stability_results"]["0"]
    assert [(g["answer"], g["count"], g["correct"]) for g in res["answer_groups"]] == [
        ("paris is the capital of france", 3, 3), ("lyon is the capital of france", 1, 0)]
    assert res["semantic_entropy"] == pytest.approx(-(0.75 * math.log(0.75) + 0.25 * math.log(0.25)))
    assert "e5 cosine >= 0.9)" in by_meaning["summary"]["answer_grouping"]


def test_trust_report_and_compare_show_judge_noise_after_a_rejudging_pass(engine, runs):
    from evalcore.dataset import load_items
    from evalcore.report.trust import trust_report_html
    from evalcore.store import queries
    from evalcore.store.tables import utcnow

    run_a, run_b = runs
    # B's item 3 says "It is 42." every round, judged 1, 1, 0, 0: two re-judgements of
    # round 3 say right, so the text's majority is right (4 of 6): all its spread is the judge's
    item = next(i for i in load_items(engine, queries.get_run(engine, run_b).dataset_id)
                if i.idx == 3)
    queries.record_calls(engine, [
        {"run_id": run_b, "item_id": item.id, "round": 3, "stage": f"rejudge{j}:5",
         "model": "judge", "prompt": "", "answer": "{}", "correct": True, "score": 1.0,
         "reason": "ok", "error": None, "created_at": utcnow()} for j in (1, 2)])
    result = compare.compare_stability(engine, run_a, run_b)
    assert result["b"]["judge_noise"] == 1.0 and result["a"]["judge_noise"] is None
    page = trust_report_html(engine, runs=[run_b])
    assert "judge_noise" in page and "1.000" in page
    assert "the share of the verdicts&#39; spread across rounds that is the judge&#39;s" in page


def test_trust_report_and_compare_show_circular_accuracy_and_template_spread(engine, runs,
                                                                              capsys):
    """B's items asked under two templates (one right on every item, one on none)."""
    from evalcore.report.trust import trust_report_html
    from evalcore.runner.variants import TEMPLATE_STAGE
    from evalcore.store import queries, run_items

    run_a, run_b = runs
    items = list(run_items.run_questions(engine, run_b))
    queries.record_calls(engine, [
        {"run_id": run_b, "item_id": item_id, "round": 1, "stage": TEMPLATE_STAGE + name,
         "model": "m", "prompt": "", "answer": "x", "correct": right, "score": float(right),
         "reason": "", "error": None}
        for item_id in items for name, right in (("zero", True), ("mine", False))])
    result = compare.compare_stability(engine, run_a, run_b)
    assert result["b"]["template_spread"] == 1.0 and result["b"]["worst_template"] == "mine"
    assert result["a"]["template_spread"] is None and result["delta"]["template_spread"] is None
    page = trust_report_html(engine, runs=[run_b])
    assert "template_spread" in page and "best minus worst accuracy" in page
    assert main(["compare", str(run_a), str(run_b)]) == 0
    assert "template spread" in capsys.readouterr().out
