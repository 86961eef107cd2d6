"""A BBQ run's answers one by one: the option picked, how it was read, what it counts as;
filters and pages. The rows must add up to the run's own bias scores."""
from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.report.bbq_answers import (
    answer_page,
    bbq_answers,
    facets,
    filter_answers,
    is_benchmark_run,
    option_roles,
)

REPLIES = ["The answer is 2", "I think it's the slim guy.", "Hmm, hard to say.",
           "choice 0 or 1", "答案是0"]
"""An answer phrase, an option's text, nothing, two options, a Chinese answer phrase."""


def bbq_run(engine, shared: Path, n: int = 12, extracted: dict[int, str] | None = None) -> int:
    """A finished run over the first `n` BBQ Physical_appearance items, replies cycling
    through REPLIES; `extracted` stores an option for some positions (as the scorer does)."""
    from tests.fakes.stored_runs import seed_bbq_run

    return seed_bbq_run(engine, shared, REPLIES, n, extracted)


def test_each_answer_says_what_was_picked_how_and_what_it_counts_as(engine, shared_datasets):
    from evalcore.fairness import fairness_report

    run_id = bbq_run(engine, shared_datasets)
    rows = bbq_answers(engine, run_id)
    assert len(rows) == 12 and [r["item_idx"] for r in rows] == list(range(12))
    by_reply: dict[str, dict] = {}
    for row in rows:  # the first answer of each reply (items 0-4 share their options)
        by_reply.setdefault(row["reply"], row)
    phrase = by_reply["The answer is 2"]
    assert phrase["picked"] == 2 and phrase["read_as"] == "answer phrase"
    text = by_reply["I think it's the slim guy."]
    assert text["read_as"] == "option text"
    assert text["choices"][text["picked"]] == "The slim guy"
    nothing = by_reply["Hmm, hard to say."]
    assert nothing["picked"] is None and nothing["outcome"] == "unparsed"
    assert nothing["bias"] == "unparsed" and nothing["read_as"].startswith("invalid")
    two = by_reply["choice 0 or 1"]
    assert two["picked"] is None and "ambiguous" in two["read_as"]
    for row in rows:
        assert row["outcome"] == ("unparsed" if row["picked"] is None else
                                  "correct" if row["picked"] == row["label"] else "wrong")
        assert row["context"] in ("ambiguous", "disambiguated")
        if row["picked"] is not None and row["picked"] == row["unknown"]:
            assert row["bias"] == "unknown"

    # the rows add up to the run's own scores: BBQ's s_DIS from the per-answer readings
    bbq = fairness_report(engine, run_id)["bbq"]
    for context in ("ambiguous", "disambiguated"):
        mine = [r for r in rows if r["context"] == context and r["target"] is not None]
        assert bbq[context]["n_biased"] == sum(r["bias"] == "biased" for r in mine)
        assert bbq[context]["n_unknown"] == sum(r["bias"] == "unknown" for r in mine)
        assert bbq[context]["n_unanswered"] == sum(r["outcome"] == "unparsed" for r in mine)
    dis = [r for r in rows if r["context"] == "disambiguated" and r["target"] is not None]
    non_unknown = [r for r in dis if r["bias"] in ("biased", "counter-stereotype")]
    if non_unknown and bbq["s_dis"] is not None:
        share = sum(r["bias"] == "biased" for r in non_unknown) / len(non_unknown)
        assert bbq["s_dis"] == pytest.approx(2 * share - 1)


def test_an_option_stored_at_scoring_time_is_shown_with_todays_reading(engine, shared_datasets):
    run_id = bbq_run(engine, shared_datasets, n=6, extracted={0: "2", 5: "1"})
    rows = bbq_answers(engine, run_id)
    assert rows[0]["picked"] == 2 and rows[0]["read_as"] == "answer phrase"  # agree
    # position 5 replied "The answer is 2" but option 1 was stored: both are shown
    assert rows[5]["picked"] == 1
    assert rows[5]["read_as"] == ("option 1 stored at scoring time; today's rules read "
                                  "option 2 (answer phrase)")


def test_filters_pages_and_facets(engine, shared_datasets):
    run_id = bbq_run(engine, shared_datasets)
    rows = bbq_answers(engine, run_id)
    counts = facets(rows)
    assert sum(counts["outcome"].values()) == len(rows) == sum(counts["context"].values())
    unparsed = filter_answers(rows, outcome="unparsed")
    assert len(unparsed) == counts["outcome"]["unparsed"] and unparsed
    amb_wrong = filter_answers(rows, context="ambiguous", outcome="wrong")
    assert all(r["context"] == "ambiguous" and r["outcome"] == "wrong" for r in amb_wrong)
    assert filter_answers(rows, category="no such category") == []
    assert filter_answers(rows, category="Physical_appearance") == rows
    first, pages = answer_page(rows, 1, size=5)
    assert pages == 3 and first == rows[:5]
    assert answer_page(rows, 99, size=5) == (rows[10:], 3)  # past the end: the last page
    assert answer_page([], 1) == ([], 1)
    roles = option_roles(rows[0])
    assert [r["index"] for r in roles] == [0, 1, 2]
    assert "picked" in roles[rows[0]["picked"]]["tags"]
    assert "correct" in roles[rows[0]["label"]]["tags"]


def test_only_benchmark_runs_are_benchmark_runs(engine, shared_datasets):
    from tests.fakes.stored_runs import seed_dataset, seed_run

    assert is_benchmark_run(engine, bbq_run(engine, shared_datasets, n=3))
    ds = seed_dataset(engine, "maths", ["1 + 1?"])
    assert not is_benchmark_run(engine, seed_run(engine, ds, {0: [1]}, 1, kind="fairness"))
