"""Active time of a run: the union of its calls' intervals, so a pause between a cancel
and a resume is not counted (issue 16: 10 m 42 s shown for ~30 s of work)."""
from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.report.timing import (
    format_seconds,
    paused,
    timing_text,
    union_seconds,
)


def union_of(intervals: list[tuple[float, float]]) -> float:
    return union_seconds([s for s, _ in intervals], [e for _, e in intervals])


def sweep_union(intervals: list[tuple[float, float]]) -> float:
    """The reference: one sorted sweep over (start, end) tuples, summing each segment."""
    total, current_start, current_end = 0.0, None, None
    for start, end in sorted((s, max(s, e)) for s, e in intervals):
        if current_end is None or start > current_end:
            if current_end is not None:
                total += current_end - current_start
            current_start, current_end = start, end
        else:
            current_end = max(current_end, end)
    if current_end is not None:
        total += current_end - current_start
    return total


def test_union_counts_overlaps_once_and_skips_gaps() -> None:
    assert union_of([]) == 0.0
    assert union_of([(0, 2), (1, 3), (10, 11)]) == pytest.approx(4.0)
    assert union_of([(5, 6), (0, 10)]) == pytest.approx(10.0)  # one inside another
    assert union_of([(0, 1), (1, 2)]) == pytest.approx(2.0)  # touching
    assert union_of([(3, 1)]) == 0.0  # an end before its start


def test_union_matches_a_brute_force_count_on_random_intervals() -> None:
    import random

    rng = random.Random(7)
    intervals = [(s, s + rng.randint(0, 5)) for s in (rng.randint(0, 100) for _ in range(40))]
    covered = {t for s, e in intervals for t in range(s, e)}  # unit cells covered
    assert union_of(intervals) == pytest.approx(len(covered))


def test_format_and_text() -> None:
    assert format_seconds(None) == "-"
    assert format_seconds(31.4) == "31 s"
    assert format_seconds(0.02) == "< 1 s" and format_seconds(0) == "0 s"
    assert format_seconds(642) == "10 m 42 s"
    assert format_seconds(3900) == "1 h 05 m"
    assert timing_text(31, 642) == "active 31 s (elapsed 10 m 42 s)"
    assert timing_text(30, 31) == "30 s"  # no pause worth a second figure
    assert timing_text(None, 12) == "12 s"
    assert paused(31, 642) and not paused(30, 33) and not paused(None, 5)


def test_a_resumed_run_reports_its_active_time_beside_elapsed(engine, capsys) -> None:
    """Two bursts of 10 s of calls, ten minutes apart: active 20 s, elapsed 10 m 30 s.
    Calls of a later re-judging pass do not count."""
    from evalcore.dataset import load_items
    from evalcore.report.runs import run_details
    from evalcore.store import queries
    from evalcore.store.tables import utcnow
    from tests.fakes.stored_runs import seed_dataset

    ds = seed_dataset(engine, "paused", [f"q{i}?" for i in range(4)])
    items = load_items(engine, ds)
    start = utcnow() - timedelta(minutes=20)
    resumed = start + timedelta(minutes=10)
    end = resumed + timedelta(seconds=30)
    run = queries.create_run(engine, kind="stability", dataset_id=ds, model="m", rounds=2,
                             status="done", total=8, done=8, started_at=start,
                             finished_at=end, config={"item_ids": [i.id for i in items]})

    def call(item, rnd, at, latency_s, stage="answer"):
        return {"run_id": run.id, "item_id": item.id, "round": rnd, "stage": stage,
                "model": "m", "prompt": "p", "answer": "1", "correct": True, "score": 1.0,
                "latency_ms": latency_s * 1000, "created_at": at}

    calls = []
    for burst in (start, resumed):  # two slots in parallel, 5 s calls, 10 s per burst
        for n, item in enumerate(items):
            rnd = 1 if burst == start else 2
            calls.append(call(item, rnd, burst + timedelta(seconds=5 * (n // 2 + 1)), 5))
    calls.append(call(items[0], 1, end + timedelta(minutes=5), 60, stage="rejudge:1"))
    queries.record_calls(engine, calls)

    import json

    from evalcore.cli import main

    timing = run_details(engine, run.id)["timing"]
    assert timing["active_s"] == pytest.approx(20.0, abs=0.01)  # 2 x (2 calls x 5 s, 2 slots)
    assert timing["duration_s"] == pytest.approx(630.0, abs=1)
    assert timing_text(timing["active_s"], timing["duration_s"]) == (
        "active 20 s (elapsed 10 m 30 s)")
    capsys.readouterr()
    assert main(["runs", "show", str(run.id), "--json"]) == 0  # the CLI says the same
    shown = json.loads(capsys.readouterr().out)
    assert shown["active_s"] == pytest.approx(20.0, abs=0.01)
    assert shown["elapsed_s"] == pytest.approx(630.0, abs=1)


def test_a_run_without_calls_has_no_active_time(engine) -> None:
    from evalcore.report.timing import active_seconds
    from evalcore.store import queries

    run = queries.create_run(engine, kind="stability", model="m", rounds=1)
    assert active_seconds(engine, run.id) is None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1e9, allow_nan=False), st.floats(-10, 1e4)), max_size=40))
def test_the_union_is_a_sorted_sweeps_to_the_last_bit(pairs) -> None:
    """The arrays' union gives exactly what one sorted sweep over the intervals sums."""
    intervals = [(s, s + d) for s, d in pairs]
    assert union_of(intervals) == sweep_union(intervals)
