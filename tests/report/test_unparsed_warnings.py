"""Every report says how many answers the rules could not read (count, share, warning)."""
from __future__ import annotations

import pytest

from tests.fakes.stored_runs import seed_dataset, seed_run


def _mark_invalid(engine, run_id: int, n: int) -> None:
    from sqlmodel import Session, select

    from evalcore.store.tables import Call

    with Session(engine) as session:
        calls = session.exec(select(Call).where(Call.run_id == run_id).order_by(Call.id)).all()
        for call in [c for c in calls if c.answer is not None][:n]:
            call.reason, call.correct, call.score = "invalid: no number found", False, 0.0
            session.add(call)
        session.commit()


def test_stability_report_counts_unreadable_answers(engine) -> None:
    from evalcore.report.stability import stability_report

    ds = seed_dataset(engine, "unparsed", ["1+0?", "1+1?", "1+2?", "1+3?", "1+4?"])
    run = seed_run(engine, ds, {i: [1, 1, None, 1] for i in range(5)}, 4)
    clean = stability_report(engine, run)
    assert clean["unparsed"]["unparsed"] == 0 and clean["warnings"] == []
    _mark_invalid(engine, run, 3)
    report = stability_report(engine, run)
    assert report["unparsed"]["answers"] == 15  # 5 failed calls have no answer to read
    assert report["unparsed"]["unparsed"] == 3
    assert report["unparsed"]["unparsed_share"] == pytest.approx(3 / 15)
    assert report["warnings"] and report["warnings"][0].startswith("3 of 15 answers (20%)")


def test_unparsed_summary_reads_invalid_and_ambiguous_reasons() -> None:
    from evalcore.scorers.rules import unparsed_summary

    out = unparsed_summary(["read option 1", "invalid: none", "ambiguous: two", None])
    assert (out["answers"], out["unparsed"], out["parse_rate"]) == (4, 2, 0.5)
    assert unparsed_summary([])["unparsed_share"] is None
