"""2 to 8 runs of one kind side by side, aligned on the items they share.

- Alignment is by item identity (the stored item id, not the text): runs of the same
  dataset (or attack sets) share ids. Items some runs lack are counted per run, never
  guessed. Runs of different kinds, or with no item in common, are refused by name.
- Each run's headline figures (`run_figures`) come with intervals; the comparison adds
  each run's accuracy on the shared items only (Wilson for one round, else bootstrap).
  Rounds without a verdict follow the failure policy (`run_figures.RunOutcomes`:
  stability runs leave them out, as their report does); an item with no rate in one run
  is not paired.
- Every "A is better than B" comes from a paired test on the shared items' success
  rates: `compare.paired_test` (Wilcoxon signed-rank, the project's one implementation),
  for every pair of runs. A finding is stated only when p < `ALPHA`; otherwise the
  pair reads "no significant difference", never a bare difference.
- `question_view`: one item's answers and verdicts in every run (texts escaped by
  `question_view_html`, the only place they become HTML).
"""
from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any, Optional

from sqlalchemy.engine import Engine

from evalcore.dataset.numbering import item_positions, question_label
from evalcore.metrics.gate import known_metrics
from evalcore.metrics.uncertainty import diff_words, paired_difference
from evalcore.report.compare import CompareError, paired_test
from evalcore.report.run_figures import load_outcomes, rate_interval, run_figures
from evalcore.store import queries
from evalcore.store import run_summary as summaries
from evalcore.store.run_reads import item_calls

MIN_RUNS, MAX_RUNS = 2, 8
ALPHA = 0.05
"""Significance level of the paired tests behind every stated finding."""


def _check_ids(run_ids: Sequence[int]) -> list[int]:
    ids = list(dict.fromkeys(int(i) for i in run_ids))
    if not MIN_RUNS <= len(ids) <= MAX_RUNS:
        raise CompareError(f"compare takes {MIN_RUNS} to {MAX_RUNS} different runs; got "
                           f"{len(ids)} ({', '.join(map(str, ids)) or 'none'})")
    return ids


def _refuse_kinds(outcomes: Sequence[Any]) -> None:
    kinds = {o.run.kind for o in outcomes}
    if len(kinds) > 1:
        named = ", ".join(f"run {o.run.id} is {o.run.kind}" for o in outcomes)
        raise CompareError(f"runs of different kinds cannot be compared ({named}); pick runs "
                           "of one kind")


def pair_finding(test: Mapping[str, Any], a: int, b: int, alpha: float = ALPHA) -> str:
    """The sentence a page or the CLI may state about runs a and b, from their test."""
    if test["p_value"] is None:
        return f"no test between run {a} and run {b}: {test['reason']}"
    if test["p_value"] >= alpha:
        return (f"no significant difference between run {a} and run {b} "
                f"(Wilcoxon p = {test['p_value']:.3g})")
    better, worse = (b, a) if test["mean_delta"] > 0 else (a, b)
    return (f"run {better} is better than run {worse} (Wilcoxon p = {test['p_value']:.3g}, "
            f"mean change {abs(test['mean_delta']):.3f} on {test['n_pairs']} shared items)")


def compare_runs(engine: Engine, run_ids: Sequence[int], *, alpha: float = ALPHA,
                 failure_policy: Optional[str] = None) -> dict[str, Any]:
    """Compare 2-8 runs of one kind. Keys: kind, runs (headline figures per run), alignment
    (shared items, per run: its items and the shared-with-others it lacks), shared
    (per run: accuracy on the shared items with its interval), tests (every pair: the
    Wilcoxon result and the finding, and `paired`: B minus A with its standard error and
    interval, `metrics.uncertainty.paired_difference`), best (the run better than every other, or None),
    gate_deltas (later runs' gate metrics minus the first run's), violations_only_in
    (fairness: violations one run has and no other has), questions (per shared item:
    rates per run and whether they differ)."""
    ids = _check_ids(run_ids)
    outcomes = [load_outcomes(engine, i, failure_policy) for i in ids]
    _refuse_kinds(outcomes)
    item_sets = [set(o.verdicts) for o in outcomes]
    shared = sorted(set.intersection(*item_sets))
    if not shared:
        named = ", ".join(f"run {o.run.id} ({len(s)} items)" for o, s in zip(outcomes, item_sets))
        raise CompareError(f"these runs have no item in common: {named}; compare runs of the "
                           "same dataset or attack sets")
    union = set.union(*item_sets)
    kind = outcomes[0].run.kind
    verdicts_exist = any(v is not None for o in outcomes for i in shared for v in o.verdicts[i])
    rates = {o.run.id: [o.rate(i) for i in shared] for o in outcomes}
    # the paired tests and intervals of finished runs are stored (no scipy at a re-read)
    paired = summaries.pair_summary(
        engine, [o.run for o in outcomes],
        f"compare:{alpha}:{','.join(o.failure_policy for o in outcomes)}",
        lambda: _paired(outcomes, shared, rates, verdicts_exist, alpha))
    tests, shared_figures = paired["tests"], paired["shared"]

    positions = item_positions(engine, shared)
    questions = [{"item_id": item, "item_idx": positions.get(item),
                  "rates": {o.run.id: rates[o.run.id][n] for o in outcomes},
                  "differs": len({rates[o.run.id][n] for o in outcomes}) > 1}
                 for n, item in enumerate(shared)]
    policy = {o.run.id: o.failure_policy for o in outcomes}
    # each run's own figures (stored once it finished: no bootstrap at every compare)
    figures = [run_figures(engine, int(o.run.id), failure_policy=o.failure_policy)
               for o in outcomes]
    return {
        "kind": kind, "alpha": alpha, "failure_policy": policy,
        "runs": figures,
        "gate_deltas": gate_deltas(figures),
        "violations_only_in": _violations_only_in(figures),
        "alignment": {"by": "item id", "shared": len(shared), "union": len(union),
                      "per_run": [{"run_id": int(o.run.id), "items": len(s),
                                   "only_here": len(s - set(shared)),
                                   "lacks": len(union - s)}
                                  for o, s in zip(outcomes, item_sets)]},
        "shared": shared_figures,
        "tests": tests,
        "best": _best(shared_figures, tests),
        "questions": questions,
    }


def gate_deltas(figures: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each later run's gate metrics minus the first run's (the baseline), with whether
    the change is for the worse (`metrics.gate.known_metrics` says which way is better)."""
    base = figures[0]["metrics"]
    rows = []
    for fig in figures[1:]:
        for metric, better in known_metrics().items():
            now, then = fig["metrics"].get(metric), base.get(metric)
            if isinstance(now, (int, float)) and isinstance(then, (int, float)):
                delta = float(now) - float(then)
                rows.append({"run_id": fig["run"]["id"], "metric": metric, "baseline": then,
                             "value": now, "delta": delta, "better": better,
                             "worse": delta > 0 if better == "lower" else delta < 0})
    return rows


def _violations_only_in(figures: Sequence[Mapping[str, Any]]) -> dict[int, list[str]]:
    """Fairness runs: the violations (pair:metric) found in one run and in no other."""
    keys = {f["run"]["id"]: set(f["metrics"].get("violation_keys") or ()) for f in figures}
    if not any(keys.values()):
        return {}
    return {run_id: sorted(own - set().union(*(k for r, k in keys.items() if r != run_id)))
            for run_id, own in keys.items()}


def _best(shared: Sequence[Mapping[str, Any]], tests: Sequence[Mapping[str, Any]]
          ) -> Optional[int]:
    """The run whose shared accuracy is highest and significantly above every other run's."""
    if any(s["accuracy"] is None for s in shared):
        return None
    top = max(shared, key=lambda s: s["accuracy"])["run_id"]
    for t in tests:
        if top not in (t["a"], t["b"]):
            continue
        if not t["significant"]:
            return None
        delta = t["test"]["mean_delta"]
        if (t["b"] == top) != (delta > 0):
            return None
    return int(top)


def _paired(outcomes: Sequence[Any], shared: Sequence[int],
            rates: Mapping[int, Sequence[Optional[float]]], verdicts_exist: bool,
            alpha: float) -> dict[str, Any]:
    """Every pair's paired test and difference, and each run's accuracy on the shared
    items with its interval: {"tests": [...], "shared": [...]}."""
    tests = []
    for oa, ob in combinations(outcomes, 2):
        a, b = int(oa.run.id), int(ob.run.id)
        # an item without a rate in either run (no answered round) is not paired
        pairs = [(ra, rb) for ra, rb in zip(rates[a], rates[b]) if ra is not None
                 and rb is not None]
        test = (paired_test([p[0] for p in pairs], [p[1] for p in pairs]) if verdicts_exist
                else {"p_value": None, "reason": "the runs have no right/wrong verdicts"})
        paired = (paired_difference({i: oa.counts(i) for i in shared},
                                    {i: ob.counts(i) for i in shared}, alpha=alpha)
                  if verdicts_exist else None)
        tests.append({"a": a, "b": b, "test": test, "finding": pair_finding(test, a, b, alpha),
                      "significant": test["p_value"] is not None and test["p_value"] < alpha,
                      "paired": paired,
                      "paired_words": diff_words(paired, f"run {a}", f"run {b}") if paired
                      else None})
    shared_figures = []
    for o in outcomes:
        r = [x for x in rates[o.run.id] if x is not None]
        shared_figures.append({"run_id": int(o.run.id),
                               "accuracy": sum(r) / len(r) if verdicts_exist and r else None,
                               "interval": (rate_interval(r, int(o.run.rounds or 1))
                                            if verdicts_exist and r else None)})
    return {"tests": tests, "shared": shared_figures}


def comparison_frame(result: Mapping[str, Any]) -> Any:
    """One row per run: its headline figures with interval bounds (`<metric>_low/_high`)."""
    import pandas as pd

    rows = []
    shared = {s["run_id"]: s for s in result["shared"]}
    for fig in result["runs"]:
        run, metrics, intervals = fig["run"], fig["metrics"], fig["intervals"]
        row: dict[str, Any] = {"run_id": run["id"], "model": run["model"],
                               "status": run["status"], "name": run["name"]}
        s = shared[run["id"]]
        row.update(shared_accuracy=s["accuracy"],
                   shared_accuracy_low=(s["interval"] or {}).get("low"),
                   shared_accuracy_high=(s["interval"] or {}).get("high"))
        for key, value in metrics.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) or value is None:
                row[key] = value
                if intervals.get(key):
                    row[f"{key}_low"] = intervals[key]["low"]
                    row[f"{key}_high"] = intervals[key]["high"]
            elif isinstance(value, str):
                row[key] = value
        rows.append(row)
    return pd.DataFrame(rows)


def differing_questions(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The shared items whose success rate is not the same in every run."""
    return [q for q in result["questions"] if q["differs"]]


# ------------------------------------------------------------------ one question


def question_view(engine: Engine, run_ids: Sequence[int], item_id: int) -> dict[str, Any]:
    """One item in every run: question, reference, and per run its rounds (answer,
    verdict, error); `differs` when the runs' verdict lists are not all the same."""
    ids = _check_ids(run_ids)
    runs = {i: queries.get_run(engine, i) for i in ids}
    item, calls = item_calls(engine, ids, item_id)
    if item is None:
        raise CompareError(f"item {item_id} not found; pick an item id from the comparison")
    per_run: dict[int, dict[int, dict[str, Any]]] = {i: {} for i in ids}
    for run_id, rnd, stage, answer, correct, error, reason in calls:
        judged = runs[run_id].judge != "rules"
        slot = per_run[run_id].setdefault(rnd, {"round": rnd, "answer": None, "correct": None,
                                                 "error": None, "reason": None})
        if stage == "answer":
            slot.update(answer=answer, error=error)
            if not judged:
                slot.update(correct=correct if error is None else None, reason=reason)
        elif stage == "judge" and judged and slot["error"] is None:
            slot.update(correct=correct, reason=reason)
    runs_out = [{"run_id": i, "model": runs[i].model,
                 "rounds": [per_run[i][r] for r in sorted(per_run[i])]} for i in ids]
    verdict_lists = {tuple(r["correct"] for r in run["rounds"]) for run in runs_out}
    return {"item_id": item_id, "item_idx": item[2], "question": item[0], "reference": item[1],
            "runs": runs_out, "differs": len(verdict_lists) > 1}


def question_view_html(view: Mapping[str, Any]) -> str:
    """The per-question view as an HTML table, every text escaped; a verdict that differs
    from the first run's in the same round is highlighted."""
    esc = html.escape
    first = {r["round"]: r["correct"] for r in view["runs"][0]["rounds"]} if view["runs"] else {}

    label = question_label(view.get("item_idx"))
    parts = [f"<p><b>Question {esc(label)}</b>: {esc(str(view['question']))}"
             f"<br><b>Reference</b>: {esc(str(view['reference'] or '-'))}</p>",
             "<table><tr><th>run</th><th>model</th><th>round</th><th>verdict</th>"
             "<th>answer</th></tr>"]
    for run in view["runs"]:
        for r in run["rounds"]:
            verdict = ("error" if r["error"] else "right" if r["correct"] else
                       "wrong" if r["correct"] is not None else "-")
            style = (' style="background:#fde0c5"' if r["correct"] != first.get(r["round"])
                     else "")
            parts.append(f"<tr{style}><td>{int(run['run_id'])}</td><td>{esc(run['model'])}</td>"
                         f"<td>{int(r['round'])}</td><td>{verdict}</td>"
                         f"<td>{esc(str(r['answer'] or r['error'] or ''))}</td></tr>")
    parts.append("</table>")
    return "\n".join(parts)
