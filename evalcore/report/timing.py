"""How long a run worked: active time beside elapsed time.

A run that was cancelled and resumed ten minutes later has an elapsed time (start to end)
that counts the pause. Its *active* time counts only when a call of the run was under
way: the union of the calls' intervals [stored - latency, stored], where the latency runs
from the first attempt to the reply, so retries and back-off waits are inside it. Calls
that overlap (concurrent slots) count once. Later passes stored on the run (re-judging,
a judge model's ratings) are not the run's own work and are left out.

Only stored facts are used, and runs stored before this module get their active time
too. Standard library only, apart from the store query.
"""
from __future__ import annotations

from array import array
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Optional

from evalcore.store import queries
from evalcore.store.run_reads import call_ends
from evalcore.store.run_summary import summary

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

RUN_STAGES = ("answer", "judge")
"""The calls a run makes itself (re-judge and analysis passes are stored beside them)."""
PAUSE_SHOWN_S = 5.0
"""Elapsed time is shown beside active time only when the run was idle this long ..."""
PAUSE_SHOWN_SHARE = 0.1
"""... and for at least this share of the elapsed time."""


def _timestamp(moment: datetime) -> float:
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def active_seconds(engine: Engine, run_id: int) -> Optional[float]:
    """Seconds during which a call of the run was under way (None before its first call);
    a finished run's is computed once and stored (`store.run_summary`): it reads every
    call's end."""

    run = queries.get_run(engine, run_id)
    return summary(engine, run, "active_seconds", lambda: _active_seconds(engine, run_id))


def union_seconds(starts: Sequence[float], ends: Sequence[float]) -> float:
    """Total length of the union of the intervals (starts[i], ends[i]) in seconds: overlaps
    count once, an end before its start counts as the start. Two arrays of floats in
    numpy, not a tuple of Python objects per call: a run may have a million calls."""
    import numpy as np

    start = np.asarray(starts, dtype=np.float64)
    if not len(start):
        return 0.0
    end = np.maximum(start, np.asarray(ends, dtype=np.float64))
    order = np.lexsort((end, start))
    start, end = start[order], end[order]
    reach = np.maximum.accumulate(end)  # the current segment's end so far
    opens = np.flatnonzero(np.concatenate(([True], start[1:] > reach[:-1])))
    closes = np.concatenate((opens[1:] - 1, [len(start) - 1]))
    total = 0.0
    for length in (reach[closes] - start[opens]).tolist():
        total += length
    return total


def _active_seconds(engine: Engine, run_id: int) -> Optional[float]:
    starts, ends = array("d"), array("d")
    for stored, latency in call_ends(engine, run_id, RUN_STAGES):
        end = _timestamp(stored)
        starts.append(end - (latency or 0.0) / 1000)
        ends.append(end)
    return union_seconds(starts, ends) if starts else None


def elapsed_seconds(run: Any, now: Optional[datetime] = None) -> Optional[float]:
    """Start to end (to now while live; to the last heartbeat for an ended run without an
    end time), pauses included; None before the run started."""
    if run.started_at is None:
        return None
    end = run.finished_at
    if end is None:
        end = run.heartbeat_at if run.status in ("done", "failed", "cancelled") else (
            now or datetime.now(UTC))
    if end is None:
        return None
    return max(_timestamp(end) - _timestamp(run.started_at), 0.0)


def format_seconds(seconds: Optional[float]) -> str:
    """'31 s' / '10 m 42 s' / '1 h 05 m' ('< 1 s' for a moment); '-' for no value."""
    if seconds is None:
        return "-"
    if 0 < seconds < 0.5:
        return "< 1 s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours} h {minutes:02d} m"
    return f"{minutes} m {secs:02d} s" if minutes else f"{secs} s"


def paused(active: Optional[float], elapsed: Optional[float]) -> bool:
    """True when elapsed time holds a pause worth showing beside the active time."""
    if active is None or elapsed is None:
        return False
    idle = elapsed - active
    return idle >= PAUSE_SHOWN_S and idle >= PAUSE_SHOWN_SHARE * elapsed


def timing_text(active: Optional[float], elapsed: Optional[float]) -> str:
    """'active 31 s (elapsed 10 m 42 s)' when the run paused, else one figure."""
    if active is None:
        return format_seconds(elapsed)
    if paused(active, elapsed):
        return f"active {format_seconds(active)} (elapsed {format_seconds(elapsed)})"
    return format_seconds(active)
