"""Two stability runs side by side (`compare_stability`), for the Results page and the CLI.
The run list and details are `report.runs`, the raw calls CSV `report.export`.

- Each side is the run's own `stability_report` (its figures stored once the run ended,
  `stability_summary`), so every number here agrees with the run's JSON and CSV downloads.
- Questions are joined on the item when both runs used the same dataset (the item index
  in that dataset, which is one-to-one with the item id). Runs of different datasets are
  joined on the question text (Unicode NFKC, whitespace collapsed); a text that occurs
  several times is paired by occurrence (the 2nd copy in A with the 2nd copy in B), so
  a duplicated question can never be counted twice. Questions found in one run only
  are counted, never guessed.
- Per matched question, delta = rate B - rate A (positive: B is right more often).
- The paired test is `metrics.paired.paired_test` (Wilcoxon signed-rank, unchanged
  questions dropped).
- The two runs may have different N: rates stay comparable (both in [0, 1]); the
  distribution bins (right j of N times) are listed side by side for j = 0..max(N),
  `None` where a run has no such bin.

pandas and scipy are imported inside functions to keep `import evalcore` fast.
"""
from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Engine

from evalcore.dataset import get_dataset
from evalcore.errors import EvalcoreError, RunError
from evalcore.kinds import all_kinds, find_kind
from evalcore.metrics.paired import paired_test
from evalcore.metrics.stability import CLASSES, RISK_LEVELS
from evalcore.report.stability_summary import report_figures
from evalcore.store import queries
from evalcore.store.run_browse import item_ids_at
from evalcore.store.run_summary import pair_summary

if TYPE_CHECKING:
    import pandas as pd

TOP_CHANGED = 20
"""How many of the most changed questions a comparison lists."""
SUMMARY_FIELDS = ("mean", "std", "errored_rounds")


class CompareError(RunError):
    """Two runs cannot be compared (not stability runs, no results yet)."""


# ------------------------------------------------------------------ two stability runs


def question_key(text: str | None) -> str:
    """The text two datasets' copies of a question share (NFKC, whitespace collapsed)."""
    return " ".join(unicodedata.normalize("NFKC", text or "").split())


def _side(report: Mapping[str, Any], run: Any, dataset: str | None) -> dict[str, Any]:
    summary = report["summary"]
    return {"run_id": report["run_id"], "name": run.name, "status": report["status"],
            "model": report["model"], "judge": report["judge"], "dataset_id": run.dataset_id,
            "dataset": dataset, "repetition_count": report["repetition_count"],
            "questions": report["distribution"]["total_questions"],
            **{k: summary[k] for k in SUMMARY_FIELDS},
            "classes": dict(summary["classes"]), "risk": dict(summary["risk"]),
            "pass_hat_k": dict(summary["pass_hat_k"]), "pass_at_k": dict(summary["pass_at_k"]),
            "distribution": dict(report["distribution"]), **_repeats_side(summary)}


def _repeats_side(summary: Mapping[str, Any]) -> dict[str, Any]:
    """mG-Pass@N (the largest k), mean semantic entropy and judge noise (None: no
    re-judging pass) of one side, with mG-Pass at every k."""
    mg = dict(summary.get("mg_pass_at_k") or {})
    noise = summary.get("judge_noise") or {}
    return {"mg_pass_at_k": mg, "mg_pass_at_n": mg[list(mg)[-1]] if mg else None,
            "semantic_entropy_mean": summary.get("semantic_entropy_mean"),
            "judge_noise": noise.get("judge_share_of_spread"),
            **{k: summary.get(k) for k in ("circular_accuracy", "template_spread",
                                           "worst_template")}}


def _keyed(report: Mapping[str, Any], by: str) -> dict[Any, tuple[int, Mapping[str, Any]]]:
    """{join key: (item idx, result)}; by 'item' the key is the item idx, by 'question'
    it is (normalised text, occurrence number)."""
    out: dict[Any, tuple[int, Mapping[str, Any]]] = {}
    seen: dict[str, int] = {}
    for idx, res in sorted(report["stability_results"].items(), key=lambda kv: int(kv[0])):
        if by == "item":
            out[int(idx)] = (int(idx), res)
        else:
            text = question_key(res.get("question"))
            seen[text] = seen.get(text, 0) + 1
            out[(text, seen[text])] = (int(idx), res)
    return out


def _distribution_rows(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[dict[str, Any]]:
    n_a, n_b = a["repetition_count"], b["repetition_count"]
    pa, pb = a["distribution"]["distribution_percent"], b["distribution"]["distribution_percent"]
    return [{"correct": j,
             "percent_a": float(pa.get(str(j), 0.0)) if j <= n_a else None,
             "percent_b": float(pb.get(str(j), 0.0)) if j <= n_b else None}
            for j in range(max(n_a, n_b), -1, -1)]


def _pass_k_rows(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for k in range(1, max(a["repetition_count"], b["repetition_count"]) + 1):
        # None: no such k in the run, or no figure at k (a question with fewer answered
        # rounds than k under the `exclude` policy)
        rows.append({"k": k, **{f"{key}_{side}": (None if s[key].get(str(k)) is None
                                                  else float(s[key][str(k)]))
                                for side, s in (("a", a), ("b", b))
                                for key in ("pass_hat_k", "pass_at_k")}})
    return rows


def _load(engine: Engine, run_id: int) -> tuple[Any, dict[str, Any], str | None]:
    run = queries.get_run(engine, run_id)
    kind = find_kind(run.kind)
    if kind is None or kind.compare_pair is None:  # the kinds whose report this is
        names = [k.name for k in all_kinds().values() if k.compare_pair is not None]
        raise CompareError(f"run {run_id} is a {run.kind} run; compare works on two "
                           f"{' or '.join(names)} runs (list them with `python -m evalcore "
                           f"runs list --kind {names[0] if names else 'KIND'}`)")
    try:
        report = report_figures(engine, run_id)
    except EvalcoreError as exc:
        raise CompareError(f"run {run_id} has no results to compare yet: {exc}") from exc
    dataset = None
    if run.dataset_id is not None:
        try:
            dataset = get_dataset(engine, int(run.dataset_id)).name
        except EvalcoreError:
            dataset = None
    return run, report, dataset


def compare_stability(engine: Engine, run_a: int, run_b: int,
                      top: int = TOP_CHANGED) -> dict[str, Any]:
    """Two stability runs side by side (see the module doc for the join and the test).

    Keys: `a`, `b` (summaries: mean, std, classes, risk, pass^k, pass@k, distribution,
    mG-Pass, semantic entropy, judge noise), `delta` (B - A of mean, std, mG-Pass@N,
    semantic entropy and judge noise), `distribution` and `pass_k` (rows side by side),
    `join` (how questions were matched and how many), `questions` (every matched pair),
    `changed` (the `top` pairs with the largest |delta|), `test` (the paired test).
    """
    run_a_row, report_a, name_a = _load(engine, run_a)
    run_b_row, report_b, name_b = _load(engine, run_b)
    a, b = _side(report_a, run_a_row, name_a), _side(report_b, run_b_row, name_b)
    same = run_a_row.dataset_id is not None and run_a_row.dataset_id == run_b_row.dataset_id
    by = "item" if same else "question"
    keyed_a, keyed_b = _keyed(report_a, by), _keyed(report_b, by)
    matched = [k for k in keyed_a if k in keyed_b]
    item_ids = (item_ids_at(engine, run_a_row.dataset_id, matched) if same else {})
    pairs = []
    for key in matched:
        (idx_a, ra), (idx_b, rb) = keyed_a[key], keyed_b[key]
        if ra["success_rate"] is None or rb["success_rate"] is None:
            continue  # no verdict in one run (failure policy `exclude`): nothing to compare
        rate_a, rate_b = float(ra["success_rate"]), float(rb["success_rate"])
        pairs.append({"item_id": item_ids.get(idx_a), "item_a": idx_a, "item_b": idx_b,
                      "question": ra.get("question"), "standard_answer": ra.get("standard_answer"),
                      "correct_a": int(ra["correct_count"]), "correct_b": int(rb["correct_count"]),
                      "rate_a": rate_a, "rate_b": rate_b, "delta": rate_b - rate_a})
    changed = sorted((p for p in pairs if p["delta"] != 0),
                     key=lambda p: (-abs(p["delta"]), p["item_a"]))[:max(top, 0)]
    return {
        "a": a, "b": b,
        "delta": {k: None if a[k] is None or b[k] is None else b[k] - a[k]
                  for k in ("mean", "std", "mg_pass_at_n", "semantic_entropy_mean",
                            "judge_noise", "circular_accuracy", "template_spread")},
        "distribution": _distribution_rows(a, b),
        "pass_k": _pass_k_rows(a, b),
        "join": {"by": by, "matched": len(pairs), "only_a": len(keyed_a) - len(pairs),
                 "only_b": len(keyed_b) - len(pairs)},
        "questions": pairs,
        "changed": changed,
        # stored for two finished runs (no scipy at a re-read)
        "test": pair_summary(engine, [run_a_row, run_b_row], "compare_stability:test",
                             lambda: paired_test([p["rate_a"] for p in pairs],
                                                 [p["rate_b"] for p in pairs])),
    }


def questions_frame(comparison: Mapping[str, Any], changed_only: bool = False) -> pd.DataFrame:
    """The matched questions (or only the most changed ones) as a table."""
    import pandas as pd

    rows = comparison["changed" if changed_only else "questions"]
    return pd.DataFrame(rows, columns=["item_id", "item_a", "item_b", "question",
                                       "standard_answer", "correct_a", "correct_b", "rate_a",
                                       "rate_b", "delta"])


def counts_frame(comparison: Mapping[str, Any]) -> pd.DataFrame:
    """Questions per stability class and risk level in both runs: block, name, a, b, and
    the percentages of each run's questions (the runs may hold different counts)."""
    import pandas as pd

    a, b = comparison["a"], comparison["b"]
    rows = []
    for block, names in (("classes", CLASSES), ("risk", RISK_LEVELS)):
        for name in names:
            ca, cb = int(a[block].get(name, 0)), int(b[block].get(name, 0))
            rows.append({"block": block, "name": name, "a": ca, "b": cb,
                         "percent_a": 100.0 * ca / a["questions"] if a["questions"] else 0.0,
                         "percent_b": 100.0 * cb / b["questions"] if b["questions"] else 0.0})
    return pd.DataFrame(rows, columns=["block", "name", "a", "b", "percent_a", "percent_b"])
