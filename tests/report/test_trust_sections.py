"""Section-safe reports outside the pages: a run whose figures cannot be built is one line
in the trust report (and on the CLI's stderr), the other runs are still reported."""
from __future__ import annotations

import pytest

from evalcore.cli import main
from tests.fakes.stored_runs import seed_dataset, seed_run

HOSTILE = {0: "1" * 200, 1: "NaN", 2: "inf", 3: "\x00\x07\x1b[31m\u202e答案是 -0\r\n"}


@pytest.fixture()
def two_runs(engine) -> tuple[int, int]:
    ds = seed_dataset(engine, "demo", [f"What is {i} + 1?" for i in range(4)])
    good = seed_run(engine, ds, {i: [1, 0] for i in range(4)}, 2, model="m1")
    hostile = seed_run(engine, ds, {0: [1, 1], 1: [0, 0], 2: [0, 1], 3: [1, 1]}, 2,
                       model="m1", kind="robustness", answers=HOSTILE)
    return good, hostile


def test_failure_line_names_section_run_and_error() -> None:
    from evalcore.report.sections import failure_line, guarded_section

    said: list[str] = []
    with guarded_section("histogram", 7, said.append):
        raise ArithmeticError("first line\nsecond line")
    with guarded_section("cards", None, said.append):
        pass
    assert said == ["Could not draw the histogram of run 7: ArithmeticError first line"]
    assert failure_line("x", None, ValueError()) == "Could not draw the x: ValueError"


def test_trust_report_leaves_out_a_run_it_cannot_draw(engine, two_runs, monkeypatch,
                                                      tmp_path, capsys):
    from evalcore.report import run_figures as figures_module
    from evalcore.report import trust

    good, broken = two_runs
    real = figures_module.run_figures

    def figures(eng, run_id):
        if run_id == broken:
            raise ArithmeticError("forced by the test")
        return real(eng, run_id)

    monkeypatch.setattr(trust, "run_figures", figures)
    said: list[str] = []
    page = trust.trust_report_html(engine, runs=[good, broken], on_failure=said.append)
    line = f"Could not build the figures of run {broken}: ArithmeticError forced by the test"
    assert said == [line] and line in page
    assert f"<td>#{good}</td>" in page and f"<td>#{broken}</td>" not in page

    out = tmp_path / "t.html"
    assert main(["report", "--runs", f"{good},{broken}", "--html", str(out)]) == 0
    assert capsys.readouterr().err.strip() == f"error: {line}"
    assert line in out.read_text(encoding="utf-8")


def test_trust_report_of_hostile_replies(engine, two_runs):
    from evalcore.report.trust import trust_report_html

    said: list[str] = []
    page = trust_report_html(engine, runs=list(two_runs), on_failure=said.append)
    assert said == [] and all(f"<td>#{r}</td>" in page for r in two_runs)
