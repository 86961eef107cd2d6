"""Robustness figures: bars per level agree with the report, fragile rows keep its order."""
from __future__ import annotations

import json

import pytest

from evalcore.metrics.robustness import PairedOutcome, mean_similarity, robustness_summary
from evalcore.report.robustness_charts import (
    accuracy_figure,
    fragile_figure,
    fragile_label,
    fragile_rows,
    level_rows,
)

# level -> (clean verdicts, attacked verdicts) per question, N = 2
OUTCOMES = {
    "word": [([1, 1], [0, 0]), ([1, 1], [1, 0]), ([0, 0], [1, 1]), ([1, 1], [1, 1])],
    "char": [([1, 1], [1, 1]), ([1, 0], [1, 0])],
    "sentence": [([0, 0], [0, 0])],
}


def _report() -> dict:
    """A report dict shaped like `robustness_report`'s, levels built by the real metrics."""
    levels, fragile = {}, []
    for level, pairs in OUTCOMES.items():
        outcomes = [PairedOutcome(f"{level}{n}", c, a) for n, (c, a) in enumerate(pairs)]
        levels[level] = {"attack_set_ids": [1], **robustness_summary(outcomes).to_json_dict(),
                         "consistency": mean_similarity([])}
        for n, o in enumerate(outcomes):
            if o.drop > 0:
                fragile.append({"attack_item_id": 10 * len(fragile) + n, "level": level,
                                "item_idx": n, "question": n + 1,
                                "original": f"<b>q{n}</b>", "attacked": "x",
                                "drop": o.drop, "clean_rate": o.clean_rate,
                                "attacked_rate": o.attacked_rate})
    fragile.sort(key=lambda r: -r["drop"])
    return json.loads(json.dumps({"levels": levels, "fragile": fragile}))  # as read from JSON


def test_level_rows_follow_the_method_order_and_the_summaries():
    report = _report()
    rows = level_rows(report)
    assert [r["level"] for r in rows] == ["char", "word", "sentence"]
    word = next(r for r in rows if r["level"] == "word")
    clean = sum(map(sum, (c for c, _ in OUTCOMES["word"]))) / 8  # 6 of 8 rounds right
    attacked = sum(map(sum, (a for _, a in OUTCOMES["word"]))) / 8  # 5 of 8
    assert word["accuracy_clean"] == pytest.approx(clean)
    assert word["accuracy_attacked"] == pytest.approx(attacked)
    assert word["pdr"] == pytest.approx(1 - attacked / clean)
    assert (word["right_to_wrong"], word["wrong_to_right"]) == (2, 1)
    assert word["mcnemar_p"] == report["levels"]["word"]["mcnemar"]["p_value"]
    sentence = next(r for r in rows if r["level"] == "sentence")
    assert sentence["pdr"] is None and "nothing to drop" in sentence["pdr_why_none"]


def test_accuracy_figure_has_one_bar_pair_per_level_and_the_pdr():
    report = _report()
    fig = accuracy_figure(report)
    clean, attacked = fig.data
    assert list(clean.x) == ["char", "word", "sentence"] == list(attacked.x)
    assert list(clean.y) == [r["accuracy_clean"] for r in level_rows(report)]
    assert list(attacked.y) == [r["accuracy_attacked"] for r in level_rows(report)]
    notes = [a.text for a in fig.layout.annotations]
    assert notes[1] == f"PDR {report['levels']['word']['pdr']:.1%}"
    assert notes[2] == "PDR -"


def test_fragile_rows_keep_the_report_order_and_filter_by_level():
    report = _report()
    rows = fragile_rows(report, top=10)
    assert [r["drop"] for r in rows] == sorted((r["drop"] for r in rows), reverse=True)
    assert len(rows) == len(report["fragile"])
    assert all(r["level"] == "word" for r in fragile_rows(report, level="word"))
    assert len(fragile_rows(report, top=1)) == 1
    assert fragile_rows(report, top=0) == []


def test_fragile_figure_bars_and_escaped_hover():
    report = _report()
    fig = fragile_figure(report, top=5)
    bar = fig.data[0]
    rows = fragile_rows(report, top=5)
    assert list(bar.x) == [r["drop"] for r in rows]
    assert list(bar.y) == [fragile_label(r) for r in rows]
    assert all(label.split(" · ")[1] == f"Q{r['item_idx'] + 1}" for label, r in zip(bar.y, rows))
    assert all("<b>q" not in str(c) and "&lt;b&gt;q" in str(c) for c in bar.customdata)


def test_frames_and_segment_diff():
    from evalcore.report.robustness_charts import diff_html, fragile_frame, level_frame

    report = _report()
    frame = level_frame(report)
    assert list(frame["level"]) == ["char", "word", "sentence"]
    assert list(frame["wilcoxon_p"]) == [r["paired_p"] for r in level_rows(report)]
    assert len(fragile_frame(report)) == len(report["fragile"])
    markup = diff_html([["equal", "a "], ["delete", "<x>"], ["insert", "$y"]])
    assert markup == "a <del>&lt;x&gt;</del><ins>&#36;y</ins>"


def test_empty_report_draws_empty_figures():
    assert level_rows({}) == []
    assert len(accuracy_figure({}).data[0].x or []) == 0
    assert fragile_rows({}) == []
    assert len(fragile_figure({}).data[0].x or []) == 0


def test_the_drop_interval_and_the_error_bars_come_from_the_reports_intervals():
    from evalcore.report.robustness_charts import accuracy_figure, level_rows

    report = {"model": "m", "rounds": 2, "levels": {"word": {
        "questions": 10, "accuracy_clean": 0.8, "accuracy_attacked": 0.7,
        "accuracy_drop": 0.1, "pdr": 0.125,
        "intervals": {"clean": {"accuracy_ci": [0.7, 0.9]},
                      "attacked": {"accuracy_ci": [0.55, 0.85]},
                      "paired": {"diff": -0.1, "diff_ci": [-0.18, -0.02]}}}}}
    row = level_rows(report)[0]
    assert (row["drop_ci_low"], row["drop_ci_high"]) == (0.02, 0.18)
    clean, attacked = accuracy_figure(report).data
    assert list(clean.error_y.array) == pytest.approx([0.1])
    assert list(attacked.error_y.arrayminus) == pytest.approx([0.15])
