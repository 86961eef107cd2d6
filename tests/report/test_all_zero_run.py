"""An all-zero run (every answer wrong) must still get honest intervals and axes: the
Wilson interval of 0/30 is [0, 0.114], not a point, and no axis runs below zero."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from evalcore.report.compare_charts import interval_figure
from evalcore.report.leaderboard import leaderboard
from evalcore.report.run_figures import rate_interval, run_figures
from evalcore.report.trust import _distribution, trust_report_html
from tests.fakes.stored_runs import seed_dataset, seed_run

QUESTIONS = [f"What is {i} + 1?" for i in range(10)]


@pytest.fixture()
def zero_run(engine):
    ds = seed_dataset(engine, "zeros", QUESTIONS)
    return seed_run(engine, ds, {i: [0, 0, 0] for i in range(10)}, 3, model="m0")


def test_all_zero_run_interval_is_wilson_of_the_pooled_rounds(engine, zero_run):
    low, high = proportion_confint(0, 30, alpha=0.05, method="wilson")
    interval = run_figures(engine, zero_run)["intervals"]["accuracy"]
    assert interval["low"] == pytest.approx(low, abs=1e-12)
    assert interval["high"] == pytest.approx(high) and high > 0.11
    assert "wilson" in interval["method"]
    row = leaderboard(engine, "zeros")["rows"][0]
    assert (row["accuracy_low"], row["accuracy_high"]) == pytest.approx((low, high))


def test_trust_report_shows_the_wilson_interval_of_zero_of_thirty(engine, zero_run):
    page = trust_report_html(engine, runs=[zero_run])
    assert "0.000 [0.000, 0.114]" in page
    assert "0.000 [0.000, 0.000]" not in page


@settings(max_examples=60, deadline=None)
@given(items=st.integers(1, 40), rounds=st.integers(2, 10), right=st.booleans())
def test_identical_rates_get_the_pooled_wilson_interval(items, rounds, right):
    rate = 1.0 if right else 0.0
    interval = rate_interval([rate] * items, rounds)
    low, high = proportion_confint(int(rate) * items * rounds, items * rounds, alpha=0.05,
                                   method="wilson")
    assert interval["low"] == pytest.approx(low, abs=1e-9)
    assert interval["high"] == pytest.approx(high, abs=1e-9)
    assert interval["low"] < interval["high"]


def test_leaderboard_axis_of_an_all_zero_rate_stays_in_zero_one():
    fig = interval_figure(["m0"], [0.0], [{"low": 0.0, "high": 0.0}], "Accuracy")
    low, high = fig.layout.xaxis.range
    assert -0.05 <= low < 0 and 1 < high <= 1.05


def test_trust_histogram_ticks_sit_under_the_bars():
    fig = _distribution({"distribution": [30, 0], "run": {"id": 1}})
    axis = fig.layout.xaxis
    assert axis.tickmode == "linear" and axis.tick0 == 0 and axis.dtick == 1
    assert tuple(axis.range) == (-0.5, 1.5)
