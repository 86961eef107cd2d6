from evalcore.errors import RunError
from evalcore.runner.plan import run_spec, plan_units

import pytest


def test_question_schedule_sends_a_questions_rounds_back_to_back():
    assert list(plan_units([7, 9], 3, "question")) == [
        (7, 1), (7, 2), (7, 3), (9, 1), (9, 2), (9, 3)]


def test_round_schedule_covers_every_question_before_the_next_round():
    assert list(plan_units([7, 9], 2, "round")) == [(7, 1), (9, 1), (7, 2), (9, 2)]


@pytest.mark.parametrize("schedule", ["question", "round"])
def test_stored_calls_are_never_planned_again(schedule):
    done = {(7, 2), (9, 1)}
    units = list(plan_units([7, 9], 2, schedule, done))
    assert sorted(units) == [(7, 1), (9, 2)]
    assert not set(units) & done


def test_spec_bounds_rounds():
    with pytest.raises(RunError, match="rounds"):
        run_spec(dict(dataset="d", model="m", rounds=101))
    with pytest.raises(RunError, match="rounds"):
        run_spec(dict(dataset="d", model="m", rounds=0))


def test_a_run_is_stale_when_its_last_sign_of_life_is_old():
    from datetime import datetime, timedelta, timezone
    from types import SimpleNamespace

    from evalcore.runner.start import is_stale, stale_after_s

    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    old = (now - timedelta(seconds=stale_after_s() + 1)).replace(tzinfo=None)
    fresh = now - timedelta(seconds=1)

    def run(status, heartbeat=None, started=None, created=old):
        return SimpleNamespace(status=status, heartbeat_at=heartbeat, started_at=started,
                               created_at=created)

    assert is_stale(run("running", heartbeat=old), now)           # naive UTC is read as UTC
    assert not is_stale(run("running", heartbeat=fresh), now)
    assert is_stale(run("queued"), now)                            # falls back to creation
    assert not is_stale(run("running", started=fresh), now)
    assert not is_stale(run("cancelled", heartbeat=old), now)      # finished runs never are
