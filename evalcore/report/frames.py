"""pandas DataFrames of a stability report, shaped for pages (tables, cards, drill-down).

Every function takes the report dict of `evalcore.report.stability.stability_report`
(or that dict read back from its JSON, where item keys are strings) and only reshapes
it: no figure is recomputed here, so a table always agrees with the JSON download.
pandas is imported inside the functions to keep `import evalcore` fast.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from evalcore.dataset.numbering import question_label
from evalcore.errors import EvalcoreError
from evalcore.metrics.stability import CLASSES, RISK_LEVELS
from evalcore.report.stability_charts import bin_colour, pass_k_value

if TYPE_CHECKING:
    import pandas as pd

SortKey = Literal["success_rate", "ci_width", "semantic_entropy"]
SORT_KEYS: dict[str, str] = {
    "success_rate": "success rate, lowest first",
    "ci_width": "CI width, widest first",
    "semantic_entropy": "answer spread (semantic entropy), highest first",
}
"""Orders the questions table offers, with a label for a select box."""

QUESTION_COLUMNS = ("Q", "item", "question", "standard_answer", "type", "correct_count",
                    "answers", "answered", "errored", "success_rate", "ci_low", "ci_high",
                    "ci_width", "class", "semantic_entropy", "distinct_answers",
                    "same_answer_share")


class FrameInputError(EvalcoreError, ValueError):
    """A table was asked for something the report does not hold (unknown sort, item)."""


def _results(report: Mapping[str, Any]) -> dict[int, Mapping[str, Any]]:
    return {int(key): value for key, value in report.get("stability_results", {}).items()}


def distribution_frame(report: Mapping[str, Any]) -> pd.DataFrame:
    """One row per bin, N correct first down to 0: correct, count, percent, colour.

    The order is the method's cards (best bin first); colours are `figures.bin_colour`.
    """
    import pandas as pd

    n = int(report["repetition_count"])
    dist = report["distribution"]
    rows = [{"correct": j, "count": int(dist["distribution_counts"].get(str(j), 0)),
             "percent": float(dist["distribution_percent"].get(str(j), 0.0)),
             "colour": bin_colour(j, n)} for j in range(n, -1, -1)]
    return pd.DataFrame(rows, columns=["correct", "count", "percent", "colour"])


def _number(value: Any) -> float:
    return float("nan") if value is None else float(value)


def questions_frame(report: Mapping[str, Any], sort_by: SortKey = "success_rate"
                    ) -> pd.DataFrame:
    """One row per question with its rate and Wilson interval, in a useful reading order.

    `Q` is the label people read ("Q1", `numbering.question_label`); `item` the report's
    0-based key.

    `success_rate`: least reliable questions first (rate ascending). `ci_width`: the
    questions the run knows least about first (width descending), then by rate; in one
    run every question has the same N, so the width depends only on the count and c
    and N - c tie. Widths are rounded to 12 decimals so such mirror-image counts tie
    instead of being ordered by floating-point noise. Ties end on the item index, so
    the order is stable between reruns.
    """
    import pandas as pd

    if sort_by not in SORT_KEYS:
        raise FrameInputError(f"cannot sort questions by {sort_by!r}; choose one of "
                              f"{', '.join(SORT_KEYS)}.")
    rows = []
    nan = float("nan")  # a question without a verdict has no rate (failure policy `exclude`)
    for item, res in _results(report).items():
        low, high = _number(res["ci_low"]), _number(res["ci_high"])
        rows.append({"Q": question_label(item), "item": item, "question": res.get("question"),
                     "standard_answer": res.get("standard_answer"), "type": res.get("type"),
                     "correct_count": int(res["correct_count"]), "answered": int(res["answered"]),
                     "errored": int(res.get("errored", int(report["repetition_count"])
                                            - int(res["answered"]))),
                     "success_rate": _number(res["success_rate"]), "ci_low": low, "ci_high": high,
                     "ci_width": nan if low != low else round(high - low, 12),
                     "class": res["class"],
                     "distinct_answers": res.get("consistency", {}).get("distinct"),
                     "same_answer_share": res.get("consistency", {}).get("top_share"),
                     "answers": res.get("answers_line"),
                     "semantic_entropy": _number(res.get("semantic_entropy"))})
    frame = pd.DataFrame(rows, columns=list(QUESTION_COLUMNS))
    if sort_by == "success_rate":
        keys, ascending = ["success_rate", "item"], [True, True]
    elif sort_by == "semantic_entropy":
        keys, ascending = ["semantic_entropy", "item"], [False, True]
    else:
        keys, ascending = ["ci_width", "success_rate", "item"], [False, True, True]
    return frame.sort_values(keys, ascending=ascending, kind="mergesort").reset_index(drop=True)


def rounds_frame(report: Mapping[str, Any], item: int) -> pd.DataFrame:
    """Every round 1..N of one question: answer, verdict, score and the judge's reason.

    A round the run never stored (cancelled, not reached) is listed as `not run`, so the
    drill-down shows why the question's count is what it is.
    """
    import pandas as pd

    results = _results(report)
    if int(item) not in results:
        raise FrameInputError(f"question Q{int(item) + 1} (item {item}) is not in run "
                              f"{report.get('run_id')}'s results; "
                              f"pick one of the items in the questions table.")
    stored = {int(r["round"]): r for r in results[int(item)].get("rounds", [])}
    rows = []
    for rnd in range(1, int(report["repetition_count"]) + 1):
        r = stored.get(rnd)
        if r is None:
            rows.append({"round": rnd, "verdict": "not run", "answer": None, "score": None,
                         "reason": None})
        else:
            verdict = ("error" if r.get("errored")
                       else "right" if r.get("correct") else "wrong")
            rows.append({"round": rnd, "verdict": verdict,
                         "answer": r.get("answer"), "score": r.get("score"),
                         "reason": r.get("reason")})
    return pd.DataFrame(rows, columns=["round", "verdict", "answer", "score", "reason"])


def pass_k_frame(report: Mapping[str, Any]) -> pd.DataFrame:
    """k, pass^k and pass@k for k = 1..N (the numbers behind the curve)."""
    import pandas as pd

    summary = report["summary"]
    ks = range(1, int(report["repetition_count"]) + 1)
    return pd.DataFrame({"k": list(ks),
                         "pass_hat_k": [pass_k_value(summary, "pass_hat_k", k) for k in ks],
                         "pass_at_k": [pass_k_value(summary, "pass_at_k", k) for k in ks]})



def counts_frame(report: Mapping[str, Any], block: Literal["classes", "risk"]) -> pd.DataFrame:
    """Questions per stability class or risk level: name, count, percent of all questions."""
    import pandas as pd

    order = {"classes": CLASSES, "risk": RISK_LEVELS}.get(block)
    if order is None:
        raise FrameInputError(f"no count block {block!r}; choose 'classes' or 'risk'.")
    counts = report["summary"][block]
    total = int(report["distribution"]["total_questions"])
    rows = [{"name": name, "count": int(counts.get(name, 0)),
             "percent": 100.0 * int(counts.get(name, 0)) / total if total else 0.0}
            for name in order]
    return pd.DataFrame(rows, columns=["name", "count", "percent"])
