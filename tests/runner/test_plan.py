from evalcore.runner.plan import RunSpec, plan_units

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
    with pytest.raises(ValueError):
        RunSpec(dataset="d", model="m", rounds=101)
    with pytest.raises(ValueError):
        RunSpec(dataset="d", model="m", rounds=0)
