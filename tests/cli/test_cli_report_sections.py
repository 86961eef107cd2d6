"""The CLI's stability summary over hostile replies and with a section that fails: one
`error:` line on stderr for that section, the rest printed, the exit code the run's."""
from __future__ import annotations

import pytest

from evalcore.cli import main
from tests.fakes.stored_runs import seed_dataset, seed_run

HOSTILE = {0: "1" * 200, 1: "NaN", 2: "inf", 3: "\x00\x07\x1b[31m\u202e答案是 -0\r\n"}


@pytest.fixture()
def stored_run(engine, monkeypatch: pytest.MonkeyPatch) -> int:
    """`stability` prints the summary of this stored, finished run instead of running one."""
    from evalcore import actions
    from evalcore.cli import common

    ds = seed_dataset(engine, "demo", [f"What is {i} + 1?" for i in range(4)])
    run_id = seed_run(engine, ds, {0: [1, 1, 0], 1: [0, 0, 0], 2: [0, 1, 1], 3: [1, 1, 1]}, 3,
                      model="local", answers=HOSTILE)
    monkeypatch.setattr(actions, "create_run", lambda *args, **kwargs: run_id)
    monkeypatch.setattr(common, "detach_or_run", lambda args, engine, rid: "done")
    return run_id


def test_summary_of_hostile_replies_is_printed(stored_run, capsys):
    assert main(["stability", "--dataset", "demo", "--rounds", "3"]) == 0
    out, err = capsys.readouterr()
    assert "  3/3:     1  (25.0%)" in out and "classes: perfect=1" in out
    assert "calls=12" in out
    assert "error" not in err


def test_a_failing_section_is_one_line_and_the_rest_is_printed(stored_run, capsys,
                                                                monkeypatch):
    from evalcore.cli import stability

    def broken(report, status):
        raise ArithmeticError("forced by the test")

    monkeypatch.setattr(stability, "_distribution", broken)
    assert main(["stability", "--dataset", "demo", "--rounds", "3"]) == 0
    out, err = capsys.readouterr()
    assert err.strip().splitlines() == [
        f"error: Could not print the distribution of run {stored_run}: "
        "ArithmeticError forced by the test"]
    assert "correct count distribution" not in out
    assert "status: done; 4 questions x 3 rounds" in out
    assert "classes: perfect=1" in out and "calls=12" in out
