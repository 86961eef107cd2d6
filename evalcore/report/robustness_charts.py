"""Plotly figures and tables of a robustness report: accuracy by level, the fragile questions.

Every function takes the dict of `evalcore.report.robustness.robustness_report` (or that
dict read back from its JSON) and only draws or reshapes it, so a page, the CLI and a
notebook show the same numbers. plotly and pandas are imported inside the functions, so
importing this module stays cheap. Texts from the data go through `html.escape` before
they reach a hover label (plotly renders a subset of HTML tags there).
"""
from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evalcore.dataset.numbering import question_label
from evalcore.report.diff import escape_text
from evalcore.report.stability_charts import GREEN, RED

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

LEVEL_ORDER = ("char", "word", "sentence")
"""Levels in the method's order (finer to coarser); unknown levels follow by name."""
CLEAN_COLOUR = GREEN
ATTACKED_COLOUR = RED
FLIP_COLOUR = RED
DROP_COLOUR = "#fc8d59"
"""Fragile bars: red when the majority verdict flipped right -> wrong, orange otherwise."""


def _level_key(level: str) -> tuple[int, str]:
    return (LEVEL_ORDER.index(level) if level in LEVEL_ORDER else len(LEVEL_ORDER), level)


def level_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per attack level: accuracies, drop (with its 95% interval), PDR, flips,
    McNemar and paired p, consistency."""
    rows = []
    for level in sorted(report.get("levels", {}), key=_level_key):
        summary = report["levels"][level]
        flips = (summary.get("flips") or {}).get("counts", {})
        paired = summary.get("paired_test") or {}
        consistency = summary.get("consistency") or {}
        ci = ((summary.get("intervals") or {}).get("paired") or {}).get("diff_ci")
        rows.append({
            "level": level,
            "questions": summary.get("questions"),
            "accuracy_clean": summary.get("accuracy_clean"),
            "accuracy_attacked": summary.get("accuracy_attacked"),
            "accuracy_drop": summary.get("accuracy_drop"),
            # the drop's 95% interval, clustered by clean question (attacked minus clean
            # turned round)
            "drop_ci_low": -ci[1] if ci else None, "drop_ci_high": -ci[0] if ci else None,
            "pdr": summary.get("pdr"),
            "pdr_why_none": summary.get("pdr_why_none", ""),
            "right_to_wrong": flips.get("right_to_wrong", 0),
            "wrong_to_right": flips.get("wrong_to_right", 0),
            "mcnemar_p": (summary.get("mcnemar") or {}).get("p_value"),
            "paired_p": paired.get("p_value"),
            "answer_rouge_l": consistency.get("rouge_l"),
            "same_answer": consistency.get("same_answer"),
        })
    return rows


def level_frame(report: Mapping[str, Any]) -> pd.DataFrame:
    """`level_rows` as a DataFrame (the Wilcoxon p named as such), for tables and CSV."""
    import pandas as pd

    rows = [{k: v for k, v in r.items() if k not in ("accuracy_drop", "pdr_why_none")}
            for r in level_rows(report)]
    for row in rows:
        row["wilcoxon_p"] = row.pop("paired_p")
    return pd.DataFrame(rows)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def accuracy_figure(report: Mapping[str, Any]) -> go.Figure:
    """Grouped bars: clean vs attacked accuracy per level with their 95% intervals
    (clustered by clean question), the PDR written above each pair."""
    import plotly.graph_objects as go

    rows = level_rows(report)
    levels = [r["level"] for r in rows]
    hover = [f"{r['questions']} questions<br>PDR {_pct(r['pdr'])}<br>McNemar p "
             + ("-" if r["mcnemar_p"] is None else f"{r['mcnemar_p']:.3g}") for r in rows]
    fig = go.Figure()
    for key, name, colour in (("accuracy_clean", "clean", CLEAN_COLOUR),
                              ("accuracy_attacked", "attacked", ATTACKED_COLOUR)):
        values = [r[key] for r in rows]
        cis = [(((report["levels"][r["level"]].get("intervals") or {}).get(name) or {})
                .get("accuracy_ci")) for r in rows]
        fig.add_trace(go.Bar(name=name, x=levels, y=values, marker_color=colour,
                             error_y={"type": "data", "symmetric": False,  # 95%, clustered
                                      "array": [ci[1] - v if ci else 0
                                                for ci, v in zip(cis, values)],
                                      "arrayminus": [v - ci[0] if ci else 0
                                                     for ci, v in zip(cis, values)]},
                             text=[_pct(v) for v in values], textposition="outside",
                             customdata=hover,
                             hovertemplate="%{x} " + name + ": %{y:.1%}<br>%{customdata}"
                                           "<extra></extra>"))
    for row in rows:
        pdr = "PDR -" if row["pdr"] is None else f"PDR {row['pdr']:.1%}"
        top = max(v for v in (row["accuracy_clean"], row["accuracy_attacked"], 0.0)
                  if v is not None)
        fig.add_annotation(x=row["level"], y=min(top + 0.12, 1.12), text=pdr, showarrow=False)
    who = (f" ({html.escape(str(report['model']))}, N = {report.get('rounds', '?')})"
           if report.get("model") else "")
    fig.update_layout(title=f"Accuracy clean vs attacked, by attack level{who}",
                      barmode="group", yaxis_title="accuracy", xaxis_title="attack level",
                      legend={"orientation": "h", "y": -0.2},
                      margin={"t": 50, "b": 40, "l": 40, "r": 10})
    fig.update_yaxes(range=[0, 1.18], tickformat=".0%")
    return fig


accuracy_by_level_figure = accuracy_figure
"""Alias kept for callers written against the first draft of this module."""


def fragile_rows(report: Mapping[str, Any], top: int = 10,
                 level: str | None = None) -> list[dict[str, Any]]:
    """The report's most fragile questions (largest success-rate drop first), one level or all.

    The order is the report's (drop, then right -> wrong flips, then item), kept as is.
    """
    fragile: Sequence[Mapping[str, Any]] = report.get("fragile", [])
    chosen = [dict(q) for q in fragile if level is None or q.get("level") == level]
    return chosen[:max(int(top), 0)]


def fragile_label(row: Mapping[str, Any]) -> str:
    """How a fragile question is named in charts and pickers: level and the question's
    label in its dataset ("Q3", `dataset.numbering.question_label`, as everywhere)."""
    return f"{row['level']} · {question_label(int(row['question']) - 1)}"


def _short(text: Any, limit: int = 80) -> str:
    text = str(text or "")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fragile_figure(report: Mapping[str, Any], top: int = 10,
                   level: str | None = None) -> go.Figure:
    """Horizontal bars of the success-rate drop of the most fragile questions (worst on top)."""
    import plotly.graph_objects as go

    rows = fragile_rows(report, top, level)
    labels = [fragile_label(r) for r in rows]
    labels = [f"{label} (a{r.get('attack_item_id')})" if labels.count(label) > 1 else label
              for label, r in zip(labels, rows)]  # two sets attacking one item: keep both bars
    hover = [f"{html.escape(_short(r.get('original')))}<br>-> "
             f"{html.escape(_short(r.get('attacked')))}<br>clean "
             f"{_pct(r.get('clean_rate'))}, attacked {_pct(r.get('attacked_rate'))}"
             for r in rows]
    fig = go.Figure(go.Bar(
        x=[r["drop"] for r in rows], y=labels, orientation="h", customdata=hover,
        marker_color=[FLIP_COLOUR if r.get("flip") == "right_to_wrong" else DROP_COLOUR
                      for r in rows],
        hovertemplate="%{y}: drop %{x:.0%}<br>%{customdata}<extra></extra>"))
    fig.update_layout(title=f"Most fragile questions (top {len(rows)}; red = flipped "
                            "right -> wrong)",
                      xaxis_title="success-rate drop (clean - attacked)", showlegend=False,
                      margin={"t": 50, "b": 40, "l": 10, "r": 10},
                      height=max(250, 100 + 28 * len(rows)))
    fig.update_xaxes(range=[0, 1.05], tickformat=".0%")
    fig.update_yaxes(autorange="reversed")
    return fig


def fragile_frame(report: Mapping[str, Any]) -> pd.DataFrame:
    """The fragile questions as a table (answers of round 1 on each side)."""
    import pandas as pd

    return pd.DataFrame([{
        "level": r["level"], "question": r["question"],
        "original": r["original"],
        "attacked": r["attacked"], "reference": r.get("reference"),
        "clean_rate": r["clean_rate"], "attacked_rate": r["attacked_rate"], "drop": r["drop"],
        "flip": r.get("flip") or "",
        "clean_answer": (r.get("clean_answers") or [None])[0],
        "attacked_answer": (r.get("attacked_answers") or [None])[0],
        "flags": ";".join(r.get("flags") or [])} for r in report.get("fragile", [])])


def diff_html(segments: list[list[str]]) -> str:
    """The report's `text_diff` segments as HTML: <del> removed, <ins> inserted (escaped).

    For review cards prefer `evalcore.report.diff.side_by_side_html(original, attacked)`.
    """
    tags = {"delete": ("<del>", "</del>"), "insert": ("<ins>", "</ins>"), "equal": ("", "")}
    return "".join(f"{tags[op][0]}{escape_text(text)}{tags[op][1]}" for op, text in segments)
