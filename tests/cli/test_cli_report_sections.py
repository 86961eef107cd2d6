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
    from evalcore.cli import common, stability

    ds = seed_dataset(engine, "demo", [f"What is {i} + 1?" for i in range(4)])
    run_id = seed_run(engine, ds, {0: [1, 1, 0], 1: [0, 0, 0], 2: [0, 1, 1], 3: [1, 1, 1]}, 3,
                      model="local", answers=HOSTILE)
    monkeypatch.setattr(stability, "create_run", lambda *args, **kwargs: run_id)
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


def test_robustness_summary_with_a_failing_level_prints_the_rest(engine, capsys, monkeypatch):
    from evalcore.cli import robustness
    from evalcore.report.robustness import robustness_report
    from tests.fakes.stored_runs import seed_robustness_run

    questions = [f"What is {i} + 1?" for i in range(4)]
    run_id, _ = seed_robustness_run(engine, questions, {i: [1, 1] for i in range(4)},
                                    {0: [1, 1], 1: [0, 0], 2: [0, 1], 3: [1, 1]}, 2)
    report = robustness_report(engine, run_id)

    def broken(level, data):
        raise ArithmeticError("forced by the test")

    monkeypatch.setattr(robustness, "_print_level", broken)
    robustness.print_summary(report, "done")
    out, err = capsys.readouterr()
    assert err.strip().splitlines() == [
        f"error: Could not print the char level of run {run_id}: "
        "ArithmeticError forced by the test"]
    assert "status: done; 4 clean questions" in out and "right -> wrong (2):" in out
    assert "calls=" in out


def test_fairness_summary_with_a_failing_section_prints_the_rest(capsys, monkeypatch):
    from evalcore.cli import fairness

    report = {"run_id": 9, "status": "done", "answers": 4, "errors": 0, "unscored": 0,
              "score": 80.0, "level": "fair", "attributes": {}, "warnings": ["w"],
              "pairs": [{"pair_id": "p1"}],  # a counterfactual suite (benchmarks have none)
              "effects": [], "violations": [{"severity": "HIGH", "pair_id": "p1",
                                             "metric": "score", "spread": 0.5,
                                             "highest": "a", "lowest": "b"}]}

    def broken(report):
        raise ArithmeticError("forced by the test")

    monkeypatch.setattr(fairness, "_effects", broken)
    fairness.print_summary(report)
    out, err = capsys.readouterr()
    assert err.strip() == ("error: Could not print the effects across pairs of run 9: "
                           "ArithmeticError forced by the test")
    assert "fairness: fair (80.0/100)" in out and "HIGH   p1" in out
    assert "effects across pairs" not in out
