"""A CrowS-Pairs run has one verdict everywhere (issue 21): its parse rate is measured as
BBQ's is, so the headline, the gate block, the CLI's `fairness` and `gate` and the trust
report all say FAIL for 4 unreadable replies in 10, and PASS for a run that read them all."""
from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from evalcore import cli
from evalcore.metrics.gate import evaluate_gate
from evalcore.report.fairness import fairness_report
from evalcore.report.gates import gate_any

REPO = Path(__file__).resolve().parents[2]
CROWS = REPO / "data" / "samples" / "crows_pairs_en.csv"
ROWS = list(csv.DictReader(CROWS.open(encoding="utf-8", newline="")))
GATE = REPO / "data" / "gate.example.toml"
UNREADABLE = "I would rather not pick either sentence."


def seed_crows_run(engine, replies: Sequence[str], n: int = 10, errors: int = 0,
                   reply_for: Callable[[Any], str] | None = None) -> int:
    """A finished fairness run over the first `n` CrowS-Pairs sample pairs, answered with
    `replies` in turn (or `reply_for(item)`); the last `errors` calls failed (no reply)."""
    from evalcore.dataset import import_dataset, load_items
    from evalcore.store import queries
    from evalcore.store.tables import utcnow

    dataset = import_dataset(engine, CROWS, name=f"crows-{len(replies)}-{errors}",
                             allow_duplicate=True)
    items = load_items(engine, dataset.id)[:n]
    run = queries.create_run(engine, kind="fairness", dataset_id=dataset.id, model="fake",
                             rounds=1, status="done", total=len(items), done=len(items),
                             finished_at=utcnow(), config={"item_ids": [i.id for i in items]})
    queries.record_calls(engine, [
        {"run_id": run.id, "item_id": item.id, "round": 1, "stage": "answer", "model": "fake",
         "prompt": item.question,
         "answer": None if k >= n - errors else
         reply_for(item) if reply_for else replies[k % len(replies)],
         "error": "HTTP 500" if k >= n - errors else None}
        for k, item in enumerate(items)])
    return int(run.id)


def four_of_ten_unreadable(engine) -> int:
    return seed_crows_run(engine, ["Sentence 0", "1", "0", UNREADABLE, "1", UNREADABLE,
                                   "0", UNREADABLE, "Sentence 1", UNREADABLE])


def test_unreadable_replies_give_a_measured_parse_rate_and_a_fail(engine) -> None:
    report = fairness_report(engine, four_of_ten_unreadable(engine), include_rows=False)
    crows = report["crows_pairs"]
    assert (crows["answers"], crows["unreadable"]) == (10, 4)
    assert report["gate_metrics"]["parse_rate"] == pytest.approx(0.6)
    assert report["unparsed"]["unparsed"] == 4 and report["unparsed"]["answers"] == 10
    verdict = report["verdict"]
    assert verdict["verdict"] == "fail" and verdict["unmeasured"] == []
    assert [(c["name"], c["value"]) for c in verdict["failed"]] == [("parse_rate_min", 0.6)]
    from evalcore.report.gates import verdict_line, verdict_of

    result = evaluate_gate(report, GATE)
    assert verdict_of(result) == "fail" and verdict_line(result).startswith("FAILED (1 of ")


def test_a_clean_crows_run_can_pass_the_default_gate(engine) -> None:
    run_id = seed_crows_run(engine, ["0", "Sentence 1"])
    report = fairness_report(engine, run_id, include_rows=False)
    assert report["gate_metrics"]["parse_rate"] == 1.0
    assert report["verdict"]["verdict"] == "pass", report["verdict"]
    assert gate_any(engine, run_id, str(GATE)).passed


def test_model_errors_are_not_in_the_parse_rate(engine) -> None:
    """As for BBQ: a call that got no reply says nothing about reading replies."""
    run_id = seed_crows_run(engine, ["0", UNREADABLE, "1", "1"], n=10, errors=2)
    gate = fairness_report(engine, run_id, include_rows=False)["gate_metrics"]
    assert gate["parse_rate"] == pytest.approx(6 / 8)


def test_cli_fairness_summary_and_gate_say_the_same(engine, settings, monkeypatch,
                                                    capsys) -> None:
    from evalcore.cli.fairness import print_summary

    run_id = four_of_ten_unreadable(engine)
    print_summary(fairness_report(engine, run_id, include_rows=False))
    summary = capsys.readouterr().out
    assert ("verdict: FAIL (default gate data/gate.example.toml: parse_rate_min 0.600 < 0.9"
            in summary)
    assert "effects across pairs" not in summary and "single-pair spreads" not in summary
    verdict_json = settings.home / "verdict.json"
    code = cli.main(["gate", "--run", str(run_id), "--config", str(GATE),
                     "--json", str(verdict_json)])
    out = capsys.readouterr().out
    assert code == 1 and "FAIL  parse_rate_min" in out
    # the suite checks (SPD ...) do not apply to CrowS-Pairs: listed, never counted
    assert "gate: FAILED (1 of 2 checks failed; not measured: spd_max, " in out
    import json

    saved = json.loads(verdict_json.read_text())
    assert (saved["verdict"], saved["passed"]) == ("fail", False)


def test_an_unmeasured_gate_says_not_measured_as_the_headline_does() -> None:
    from evalcore.report.gates import verdict_line, verdict_of

    report = {"gate_metrics": {"parse_rate": None, "not_applicable": []}}
    result = evaluate_gate(report, "[absolute]\nparse_rate_min = 0.9\n")
    assert not result.passed and verdict_of(result) == "not measured"
    assert verdict_line(result).startswith("NOT MEASURED (1 of 1 checks had no value: "
                                           "parse_rate_min")


def test_the_trust_report_gives_the_same_verdict(engine) -> None:
    from evalcore.report.trust import trust_report_html

    bad = four_of_ten_unreadable(engine)
    good = seed_crows_run(engine, ["0", "Sentence 1"])
    page = trust_report_html(engine, runs=[bad, good], gates={"fairness": str(GATE)})
    assert f"Run #{bad}: verdict <b>FAIL</b>" in page
    assert f"Run #{good}: verdict <b>PASS</b>" in page
    assert f'<tr><td>#{bad}</td><td>gate.example.toml</td>\n<td class="fail">FAILED</td>' in page
    assert f'<tr><td>#{good}</td><td>gate.example.toml</td>\n<td class="pass">PASSED</td>' in page


# ------------------------------------------------------------------ answers one by one


def test_each_answer_says_what_it_counts_as(engine) -> None:
    from evalcore.report.crows import crows_rows, filter_rows, row_facets, sentence_roles
    from evalcore.scorers.rules import INVALID

    run_id = seed_crows_run(engine, ["0", UNREADABLE, "Sentence 1"], n=10, errors=1)
    rows = crows_rows(engine, run_id)
    assert len(rows) == 10
    facets = row_facets(rows)
    assert facets["reading"]["unreadable"] == 3 and facets["reading"]["no reply"] == 1
    for row in rows:
        if row["answer"] is None:
            assert row["reading"] == "no reply" and row["error"] == "HTTP 500"
        elif row["answer"] == UNREADABLE:
            assert row["reading"] == "unreadable" and row["how"].startswith(INVALID)
        else:
            picked = 0 if row["answer"] == "0" else 1
            # the sample file's sent_more is the stereotyped sentence
            more = next(r["sent_more"] for r in ROWS if r["sent_more"] in row["choices"])
            want = "stereotyped" if row["choices"][picked] == more else "less stereotyped"
            assert (row["picked"], row["reading"]) == (picked, want)
            tags = {s["index"]: s["tags"] for s in sentence_roles(row)}
            assert "picked" in tags[picked]
            assert "stereotyped sentence" in tags[row["choices"].index(more)]
    unread = filter_rows(rows, reading="unreadable")
    assert [r["answer"] for r in unread] == [UNREADABLE] * 3
    gender = filter_rows(rows, bias_type="gender", reading=None)
    assert gender and all(r["bias_type"] == "gender" for r in gender)
    with pytest.raises(ValueError, match="unknown filter"):
        filter_rows(rows, outcome="x")
    crows = fairness_report(engine, run_id, include_rows=False)["crows_pairs"]
    assert any(w.startswith("3 of 9 replies named neither sentence") and
               "Answers one by one" in w for w in crows["warnings"])
    assert any(w.startswith("1 of 10 calls got no reply") for w in crows["warnings"])


def test_the_trust_report_lists_the_crows_share_and_replies_read(engine) -> None:
    from evalcore.report.trust import trust_report_html

    page = trust_report_html(engine, runs=[four_of_ten_unreadable(engine)])
    assert "<tr><td>CrowS-Pairs replies read</td><td>6 of 10</td><td>-</td></tr>" in page
    assert "<tr><td>CrowS-Pairs stereotyped share</td><td>" in page and " of 6 [" in page
    assert "No significant difference between groups across pairs" not in page
