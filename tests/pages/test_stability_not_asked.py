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
