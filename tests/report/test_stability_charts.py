"""Plotly figures of a stability report: bin colours, counts, curves, class and risk bars."""
from __future__ import annotations

import json
from collections import Counter
from math import comb

import pytest

from evalcore.metrics.stability import stability_summary
from evalcore.report import stability_charts
from evalcore.report.stability_charts import GREEN, LIGHT_GREEN, RED, YELLOW

N = 5
VERDICTS = {  # item_idx -> verdict per round; None is an errored round (counts as wrong)
    0: [1, 1, 1, 1, 1],
    1: [1, 1, 1, 1, 0],
    2: [1, 0, 1, 1, 1],
    3: [1, 0, 1, 0, 1],
    4: [0, 1, 0, 0, None],
    5: [0, 0, 0, 0, 0],
    6: [1, 1, 1, 1, 1],
    7: [None, None, 0, 1, 0],
}


def make_report(verdicts: dict, n: int) -> dict:
    """A report dict as `stability_report` returns it, without a database."""
    items = {i: {"question": f"Q{i}?", "standard_answer": "A", "type": "choice",
                 "rounds": [{"round": r + 1, "answer": f"a{i}.{r + 1}", "correct": bool(v),
                             "score": float(bool(v)), "reason": f"why {i}.{r + 1}"}
                            for r, v in enumerate(row)]} for i, row in verdicts.items()}
    summary = stability_summary(verdicts, n, failure_policy="as_wrong")  # the seed rule
    return {"run_id": 1, "status": "done", "model": "m", "judge_model": None,
            "repetition_count": n, **summary.to_json_dict(items), "timing": {}}


@pytest.fixture(params=["dict", "json"])
def report(request) -> dict:
    built = make_report(VERDICTS, N)
    return built if request.param == "dict" else json.loads(json.dumps(built))


def correct_counts() -> Counter:
    return Counter(sum(1 for v in row if v == 1) for row in VERDICTS.values())


def test_bin_colours_follow_the_method_for_n_5_and_10():
    assert [stability_charts.bin_colour(j, 5) for j in range(6)] == [RED, RED, RED, YELLOW, LIGHT_GREEN,
                                                             GREEN]
    # 8/10 is exactly 80 %: light green; 5/10 exactly 50 %: yellow; 4/10 red
    assert [stability_charts.bin_colour(j, 10) for j in range(11)] == (
        [RED] * 5 + [YELLOW] * 3 + [LIGHT_GREEN] * 2 + [GREEN])
    assert stability_charts.bin_colour(1, 1) == GREEN and stability_charts.bin_colour(0, 1) == RED


def test_distribution_figure_bars_counts_and_colours(report):
    bar = stability_charts.distribution_figure(report).data[0]
    assert list(bar.x) == list(range(N + 1))
    expected = correct_counts()
    assert list(bar.y) == [expected.get(j, 0) for j in range(N + 1)]
    assert sum(bar.y) == len(VERDICTS)
    assert list(bar.marker.color) == [RED, RED, RED, YELLOW, LIGHT_GREEN, GREEN]
    assert list(bar.customdata) == pytest.approx(
        [100 * expected.get(j, 0) / len(VERDICTS) for j in range(N + 1)])


def test_distribution_figure_with_100_rounds_has_101_bins():
    rows = {i: [1] * i + [0] * (100 - i) for i in range(0, 101, 10)}
    bar = stability_charts.distribution_figure(make_report(rows, 100)).data[0]
    assert len(bar.x) == 101 and sum(bar.y) == 11
    assert bar.marker.color[80] == LIGHT_GREEN and bar.marker.color[79] == YELLOW
    assert bar.marker.color[49] == RED and bar.marker.color[100] == GREEN


def test_pass_k_figure_matches_combinatorics(report):
    fig = stability_charts.pass_k_figure(report)
    hat, at = fig.data
    assert list(hat.x) == list(range(1, N + 1)) == list(at.x)
    counts = [sum(1 for v in row if v == 1) for row in VERDICTS.values()]
    for k in range(1, N + 1):
        want_hat = sum(comb(c, k) / comb(N, k) for c in counts) / len(counts)
        want_at = sum(1 - comb(N - c, k) / comb(N, k) for c in counts) / len(counts)
        assert hat.y[k - 1] == pytest.approx(want_hat)
        assert at.y[k - 1] == pytest.approx(want_at)
    assert all(a >= b for a, b in zip(hat.y, hat.y[1:]))  # pass^k never rises with k
    assert all(a <= b for a, b in zip(at.y, at.y[1:]))  # pass@k never falls


def test_class_figure_counts_each_class_once(report):
    bar = stability_charts.class_figure(report).data[0]
    counts = correct_counts()
    # by hand for N=5: perfect 5; high 4; unstable 3; severe 1-2; failed 0
    expected = [counts[5], counts[4], counts[3], counts[1] + counts[2], counts[0]]
    assert list(bar.y) == expected
    assert sum(bar.y) == len(VERDICTS)
    assert list(bar.marker.color)[:3] == [GREEN, LIGHT_GREEN, YELLOW]


def test_risk_figure_bars_add_up_with_perfect_inside_trusted(report):
    bars, perfect = stability_charts.risk_figure(report).data
    counts = correct_counts()
    high_risk = counts[0] + counts[1] + counts[2]
    assert list(bars.y) == [high_risk, counts[3], counts[4]]  # trusted, not perfect
    assert list(perfect.y) == [counts[5]] and perfect.x[0] == bars.x[2]  # stacked on it
    assert sum(bars.y) + sum(perfect.y) == len(VERDICTS)
    assert list(bars.marker.color) == [RED, YELLOW, LIGHT_GREEN]
    assert perfect.marker.color == GREEN
    assert stability_charts.risk_figure(report).layout.barmode == "stack"


def test_risk_line_names_levels_that_add_up(report):
    counts = correct_counts()
    high_risk = counts[0] + counts[1] + counts[2]
    assert stability_charts.risk_line(report) == (
        f"{len(VERDICTS)} questions with a rate: {high_risk} high risk, {counts[3]} borderline, "
        f"{counts[4] + counts[5]} trusted (of which {counts[5]} perfect)")


def test_pass_k_figure_has_integer_ticks(report):
    axis = stability_charts.pass_k_figure(report).layout.xaxis
    assert (axis.tickmode, axis.dtick) == ("linear", 1)


def test_importing_figures_and_frames_loads_neither_plotly_nor_pandas():
    import subprocess
    import sys

    code = ("import sys, evalcore.report.stability_charts, evalcore.report.frames; "
            "print(sorted(m for m in ('plotly', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("largest,step", [(0, 1), (3, 1), (8, 1), (9, 2), (17, 5), (81, 20),
                                          (1000, 200)])
def test_count_axes_have_whole_number_ticks(largest, step):
    import plotly.graph_objects as go

    axis = stability_charts.count_axis(go.Figure(), largest).layout.yaxis
    assert (axis.tickmode, axis.tick0, axis.dtick) == ("linear", 0, step)
    assert largest / step <= 8


def test_question_count_charts_use_whole_number_ticks(report):
    for fig in (stability_charts.distribution_figure(report), stability_charts.class_figure(report),
                stability_charts.risk_figure(report)):
        assert float(fig.layout.yaxis.dtick).is_integer(), fig.layout.title.text
