"""The Stability page of a cancelled run: its unasked rounds are "not asked (cancelled)",
not "no verdict (model or judge error)" while Errors shows 0 (issue 21)."""
from __future__ import annotations

from pathlib import Path

from tests.fakes.stored_runs import seed_dataset, seed_run
from tests.pages.helpers import run_page, values


def _cancelled(engine, verdicts) -> int:  # type: ignore[no-untyped-def]
    ds = seed_dataset(engine, "na", [f"q{i}?" for i in range(4)])
    return seed_run(engine, ds, verdicts, 3, status="cancelled")


def test_the_stability_page_says_not_asked_not_no_verdict(page_env, engine) -> None:
    _cancelled(engine, {0: [1, 1, 0], 1: [1], 2: []})
    at = run_page(str(Path(__file__).resolve().parents[2] / "pages" / "stability.py"))
    assert any("5 rounds in 2 questions not asked (cancelled)" in i for i in values(at, "info"))
    assert not any("have no verdict" in w for w in values(at, "warning"))
    assert {m.label: m.value for m in at.metric}["No verdict"] == "0"


def test_a_cancelled_run_says_it_is_partial_and_can_be_resumed_here(page_env, engine,
                                                                    monkeypatch) -> None:
    """"Questions 4" of a 10-question run looked complete, and Resume was only on Results."""
    from evalcore.store import queries

    monkeypatch.setenv("EVALCORE_EMBEDDED_WORKER", "0")  # the resumed run stays queued
    ds = seed_dataset(engine, "part", [f"q{i}?" for i in range(10)])
    verdicts = {i: ([1, 0] if i < 4 else []) for i in range(10)}
    run_id = seed_run(engine, ds, verdicts, 2, status="cancelled")
    at = run_page(str(Path(__file__).resolve().parents[2] / "pages" / "stability.py"))
    assert {m.label: m.value for m in at.metric}["Questions"] == "4 of 10"
    assert any("the figures below cover only what was answered" in w
               for w in values(at, "warning"))
    at.button(key="stability.resume").click().run()
    assert not at.exception
    assert queries.get_run(engine, run_id).status == "queued"


def test_the_page_says_how_sure_the_mean_success_rate_is(page_env, engine) -> None:
    ds = seed_dataset(engine, "sure", [f"q{i}?" for i in range(6)])
    seed_run(engine, ds, {0: [1, 1], 1: [1, 0], 2: [0, 0], 3: [1, 1], 4: [0, 1], 5: [1, 1]}, 2)
    at = run_page(str(Path(__file__).resolve().parents[2] / "pages" / "stability.py"))
    sure = [c for c in values(at, "caption") if c.startswith("Mean success rate +/-")]
    assert sure and "points (95%)" in sure[0] and "more rounds could remove" in sure[0]
