"""DataFrames of a stability report: cards order, question sort orders, per-round drill-down."""
from __future__ import annotations

import json

import pytest
from scipy.stats import binomtest

from evalcore.errors import EvalcoreError
from evalcore.metrics.stability import round_json, stability_summary
from evalcore.report import frames
from evalcore.report.stability_charts import GREEN, LIGHT_GREEN, RED, YELLOW

N = 4
VERDICTS = {  # item -> per round; rounds missing at the end were never run
    0: [1, 1, 1, 1],
    1: [1, 0, 1, 1],
    2: [0, 1, 0, 1],
    3: [0, 0, 0, 1],
    4: [0, 0, 0, 0],
    5: [1, 1, 1, 0],
    6: [1, None],
    7: [1, 0, 0, 1],
}


def make_report(verdicts: dict, n: int, failure_policy: str = "as_wrong") -> dict:
    items = {i: {"question": f"Q{i}?", "standard_answer": str(i), "type": "math",
                 "rounds": [round_json(r + 1, f"a{i}.{r + 1}", None if v is None else v == 1,
                                       None, f"why {i}.{r + 1}", failure_policy=failure_policy)
                            for r, v in enumerate(row)]} for i, row in verdicts.items()}
    summary = stability_summary(verdicts, n, failure_policy=failure_policy)
    return {"run_id": 3, "status": "done", "model": "m", "judge_model": None,
            "repetition_count": n, **summary.to_json_dict(items), "timing": {}}


@pytest.fixture(params=["dict", "json"])
def report(request) -> dict:
    built = make_report(VERDICTS, N)
    return built if request.param == "dict" else json.loads(json.dumps(built))


def right(i: int) -> int:
    return sum(1 for v in VERDICTS[i] if v == 1)


def wilson_width(c: int) -> float:
    ci = binomtest(c, N).proportion_ci(confidence_level=0.95, method="wilson")
    return ci.high - ci.low


def test_distribution_frame_runs_from_n_down_to_0_with_colours(report):
    frame = frames.distribution_frame(report)
    assert list(frame["correct"]) == [4, 3, 2, 1, 0]
    assert list(frame["count"]) == [sum(1 for i in VERDICTS if right(i) == j) for j in (4, 3, 2, 1, 0)]
    assert list(frame["colour"]) == [GREEN, YELLOW, YELLOW, RED, RED]  # 3/4 = 75 % is yellow
    assert frame["percent"].sum() == pytest.approx(100.0)


def test_distribution_colour_light_green_at_exactly_80_percent():
    frame = frames.distribution_frame(make_report({0: [1, 1, 1, 1, 0]}, 5))
    assert frame.set_index("correct").loc[4, "colour"] == LIGHT_GREEN


def test_questions_sorted_by_success_rate_lowest_first(report):
    table = frames.questions_frame(report, sort_by="success_rate")
    assert len(table) == len(VERDICTS)
    expected = sorted(VERDICTS, key=lambda i: (right(i) / N, i))
    assert list(table["item"]) == expected
    assert list(table["correct_count"]) == [right(i) for i in expected]
    assert table["success_rate"].is_monotonic_increasing
    assert table.loc[table["item"] == 6, "answered"].item() == 1  # 1 verdict, 1 error, 2 not run


def test_questions_sorted_by_ci_width_widest_first(report):
    table = frames.questions_frame(report, sort_by="ci_width")
    expected = sorted(VERDICTS, key=lambda i: (-round(wilson_width(right(i)), 12), right(i), i))
    assert list(table["item"]) == expected
    assert table["ci_width"].is_monotonic_decreasing
    for row in table.itertuples():
        assert row.ci_width == pytest.approx(wilson_width(row.correct_count))
        assert row.ci_low <= row.success_rate <= row.ci_high


def test_questions_frame_rejects_an_unknown_order(report):
    with pytest.raises(EvalcoreError, match="success_rate, ci_width"):
        frames.questions_frame(report, sort_by="question")


def test_rounds_frame_lists_every_round_including_not_run(report):
    rows = frames.rounds_frame(report, 6)
    assert list(rows["round"]) == [1, 2, 3, 4]
    assert list(rows["verdict"]) == ["right", "error", "not run", "not run"]
    assert rows.loc[0, "answer"] == "a6.1" and rows.loc[0, "reason"] == "why 6.1"
    full = frames.rounds_frame(report, 1)
    assert list(full["score"]) == [1.0, 0.0, 1.0, 1.0]
    with pytest.raises(EvalcoreError, match="item 99"):
        frames.rounds_frame(report, 99)


def test_pass_k_and_counts_frames(report):
    pk = frames.pass_k_frame(report)
    assert list(pk["k"]) == [1, 2, 3, 4]
    assert pk.loc[0, "pass_hat_k"] == pytest.approx(pk.loc[0, "pass_at_k"])  # k=1: both = mean
    assert pk.loc[0, "pass_at_k"] == pytest.approx(sum(right(i) for i in VERDICTS) / (N * len(VERDICTS)))
    classes = frames.counts_frame(report, "classes").set_index("name")["count"]
    assert classes["perfect"] == 1 and classes["failed"] == 1 and classes.sum() == len(VERDICTS)
    risk = frames.counts_frame(report, "risk").set_index("name")["count"]
    assert risk["trusted"] == risk["perfect"] == 1  # trusted includes perfect
    with pytest.raises(EvalcoreError):
        frames.counts_frame(report, "nope")  # type: ignore[arg-type]


def test_excluded_errors_show_next_to_the_rate_and_as_error_rounds():
    report = make_report({0: [1, None, 0, 1], 1: [None, None, None, None], 2: [1, 1, 1, 1]},
                         N, failure_policy="exclude")
    table = frames.questions_frame(report, sort_by="success_rate").set_index("item")
    assert table.loc[0, "success_rate"] == pytest.approx(2 / 3)  # over the 3 answered rounds
    assert (table.loc[0, "answered"], table.loc[0, "errored"]) == (3, 1)
    assert table.loc[1, "errored"] == 4 and table.loc[1, "success_rate"] != table.loc[1, "success_rate"]
    assert list(frames.questions_frame(report)["item"]) == [0, 2, 1]  # no rate: last
    assert list(frames.rounds_frame(report, 0)["verdict"]) == ["right", "error", "wrong", "right"]


def test_a_pass_k_no_question_reached_is_a_gap_not_an_error():
    from evalcore.report.stability_charts import pass_k_figure

    report = {"repetition_count": 3,
              "summary": {"pass_hat_k": {"1": 0.5, "2": 0.25, "3": None},
                          "pass_at_k": {"1": 0.5, "2": 0.75, "3": None}}}
    pk = frames.pass_k_frame(report)
    assert pk["pass_hat_k"].isna().tolist() == [False, False, True]
    assert pk.loc[1, "pass_at_k"] == 0.75
    ys = [list(trace.y) for trace in pass_k_figure(report).data]
    assert all(y[2] != y[2] for y in ys)  # NaN: plotly leaves a gap
