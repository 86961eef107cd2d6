"""One run's headline figures, for any kind, with their intervals: the numbers that
compare, the leaderboard, the trend, the gate and the trust report all share.

`load_outcomes` reads a run's calls once (verdict columns only, no prompt or answer
text) into per-item verdict lists; `run_figures` turns them into a flat `metrics` dict
plus an `intervals` dict:

- accuracy / mean_success_rate: the mean of per-item success rates (robustness: the
  clean items). Rounds without a verdict follow the failure policy (`RunOutcomes`):
  stability runs leave them out (rates over answered rounds), as the stability report
  does; robustness and fairness count them wrong, as theirs do. Interval: Wilson when each item was asked once (a plain proportion),
  else a percentile bootstrap over items (rounds of one item are not independent, so a
  Wilson interval on all rounds pooled would be too narrow), except when every item has
  the same rate: the bootstrap then collapses to a point, and the pooled Wilson is used.
- perfect_share, flaky_share (stability): items right in all N rounds / right in some
  but not all of their answered rounds, over the items with a rate; Wilson intervals.
  mg_pass_at_k (stability, N >= 2): mG-Pass@N (`metrics.repeats`), no interval.
- accuracy_attacked, pdr_<level>, flips (robustness): from the run's attack pairs, via
  `metrics.robustness.robustness_summary`; bootstrap over pairs (paired resampling).
- fairness: the fairness report's `gate_metrics`, its score and level.
- errors, tokens, cost (`metrics.cost`), mean latency, for every kind.

A round's verdict is the judge call's when the run had a judge model, else the answer
call's; a failed answer call has no verdict (None, counted as wrong).
Bootstraps use a fixed seed (`SEED`) and `RESAMPLES` resamples, so figures repeat.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from sqlalchemy.engine import Engine

SEED = 20240601
RESAMPLES = 1000
CONFIDENCE = 0.95
Verdict = Optional[bool]


@dataclass
class RunOutcomes:
    """A run row plus its per-item verdicts (item id -> one entry per round)."""

    run: Any
    verdicts: dict[int, list[Verdict]] = field(default_factory=dict)
    tokens_by_model: dict[str, tuple[int, int]] = field(default_factory=dict)
    calls: int = 0
    errors: int = 0
    latency_sum: float = 0.0
    latency_n: int = 0

    failure_policy: str = "as_wrong"
    """How rounds without a verdict count (`metrics.stability` FailurePolicy): stability
    runs default to `exclude` (rates over answered rounds), the project's rule; robustness
    and fairness to `as_wrong`, as their own reports count them."""

    def rate(self, item_id: int) -> Optional[float]:
        """Success rate of one item: right / answered rounds (`exclude`; None when none was
        answered) or right / the run's rounds (`as_wrong`)."""
        verdicts = self.verdicts.get(item_id, ())
        right = sum(1 for v in verdicts if v)
        if self.failure_policy == "exclude":
            answered = sum(1 for v in verdicts if v is not None)
            return right / answered if answered else None
        return right / max(int(self.run.rounds or 1), 1)


def default_policy(kind: str) -> str:
    """`exclude` for stability runs (the project's default), `as_wrong` otherwise."""
    return "exclude" if kind == "stability" else "as_wrong"


def load_outcomes(engine: Engine, run_id: int, failure_policy: Optional[str] = None
                  ) -> RunOutcomes:
    """Read a run's calls (verdict columns only) into `RunOutcomes`.

    Usage totals and, for a run scored by rules, the verdicts are counted in SQL (one row
    per item, not per call: a 100,000-call run reads 1,000 rows); the verdict lists then
    hold right, wrong and no-verdict rounds in that order, not in round order, which
    every figure here ignores. A judged run reads its calls to pair judge and answer.
    """
    from evalcore.store import queries
    from evalcore.store.run_reads import outcome_rows

    run = queries.get_run(engine, run_id)
    rounds = max(int(run.rounds or 1), 1)
    out = RunOutcomes(run=run, failure_policy=failure_policy or default_policy(run.kind))
    judged = run.judge != "rules"
    rows = outcome_rows(engine, run_id, rounds, judged=judged)
    for model, calls, prompt, completion in rows["usage"]:
        previous = out.tokens_by_model.get(model or run.model, (0, 0))
        out.tokens_by_model[model or run.model] = (previous[0] + int(prompt),
                                                   previous[1] + int(completion))
        out.calls += int(calls)
    errors, latency_sum, latency_n = rows["answered"]
    out.errors, out.latency_sum, out.latency_n = int(errors), float(latency_sum), int(latency_n)
    if judged:
        _judged_verdicts(rows["verdicts"], rounds, out)
    else:
        _count_verdicts(rows["verdicts"], rounds, out)
    for item_id in (run.config or {}).get("item_ids") or []:
        if run.kind == "stability":  # an item never answered still counts (as wrong)
            out.verdicts.setdefault(int(item_id), [None] * rounds)
    return out


def _count_verdicts(counts: Sequence[tuple[Any, ...]], rounds: int, out: RunOutcomes) -> None:
    """Rules verdicts counted per item in SQL, (item, right, errors, stored): right, wrong,
    then no verdict (a failed call or a round not stored)."""
    for item_id, right, errors, stored in counts:
        right, errors = int(right or 0), int(errors or 0)
        wrong = max(int(stored) - right - errors, 0)
        out.verdicts[item_id] = [True] * right + [False] * wrong + \
            [None] * max(rounds - right - wrong, 0)


def _judged_verdicts(calls: Sequence[tuple[Any, ...]], rounds: int, out: RunOutcomes) -> None:
    """Judge verdicts, except where the answer call failed (no verdict)."""
    answer_error: set[tuple[int, int]] = set()
    judge_verdict: dict[tuple[int, int], Verdict] = {}
    for item_id, rnd, stage, correct, error in calls:
        out.verdicts.setdefault(item_id, [None] * rounds)
        if stage == "answer" and error is not None:
            answer_error.add((item_id, rnd))
        elif stage == "judge":
            judge_verdict[(item_id, rnd)] = correct
    for (item_id, rnd), verdict in judge_verdict.items():
        if (item_id, rnd) not in answer_error:
            out.verdicts[item_id][rnd - 1] = verdict


# ------------------------------------------------------------------ intervals


def wilson(count: int, n: int) -> Optional[dict[str, Any]]:
    """A Wilson interval as {low, high, method}; None without observations."""
    from evalcore.metrics.stability import wilson_interval

    if n <= 0:
        return None
    low, high = wilson_interval(count, n, CONFIDENCE)
    return {"low": low, "high": high, "method": "wilson"}


def bootstrap(samples: Sequence[Sequence[float]],
              statistic: Callable[..., Any]) -> Optional[dict[str, Any]]:
    """Percentile bootstrap of `statistic` over paired samples (same length), fixed seed.

    `statistic(*arrays, axis=-1)` must be vectorised (numpy). None with fewer than two
    observations or when the statistic is undefined in the data.
    """
    import numpy as np
    from scipy.stats import bootstrap as scipy_bootstrap

    if not samples or len(samples[0]) < 2:
        return None
    arrays = tuple(np.asarray(s, dtype=float) for s in samples)
    with np.errstate(divide="ignore", invalid="ignore"):
        if not np.isfinite(statistic(*arrays, axis=-1)):
            return None
        res = scipy_bootstrap(arrays, statistic, paired=len(arrays) > 1, vectorized=True,
                              n_resamples=RESAMPLES, confidence_level=CONFIDENCE,
                              method="percentile", random_state=np.random.default_rng(SEED))
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (np.isfinite(low) and np.isfinite(high)):
        return None
    return {"low": low, "high": high, "method": f"bootstrap percentile ({RESAMPLES})"}


def _mean(values: Any, axis: int = -1) -> Any:
    import numpy as np

    return np.mean(values, axis=axis)


def _pdr(clean: Any, attacked: Any, axis: int = -1) -> Any:
    import numpy as np

    c = np.mean(clean, axis=axis)
    return (c - np.mean(attacked, axis=axis)) / c


def rate_interval(rates: Sequence[float], rounds: int) -> Optional[dict[str, Any]]:
    """Interval of a mean success rate: Wilson for one round per item, else bootstrap.

    When every item has the same rate (all wrong, all right) a bootstrap has nothing to
    resample and collapses to a point ("0/30 [0.000, 0.000]"): then the Wilson interval
    of the rounds pooled, which never claims certainty from a finite sample."""
    if rounds == 1:
        return wilson(int(round(sum(rates))), len(rates))
    if rates and len(set(rates)) == 1:
        pooled = wilson(round(rates[0] * rounds) * len(rates), rounds * len(rates))
        return pooled and {**pooled, "method": "wilson (every item had the same rate; "
                                               "rounds pooled)"}
    return bootstrap([list(rates)], _mean)


# ------------------------------------------------------------------ figures


def _common(out: RunOutcomes) -> dict[str, Any]:
    from evalcore.metrics.cost import run_cost

    run = out.run
    prompt = sum(p for p, _ in out.tokens_by_model.values())
    completion = sum(c for _, c in out.tokens_by_model.values())
    return {"items": len(out.verdicts), "calls": out.calls, "errors": out.errors,
            "prompt_tokens": prompt, "completion_tokens": completion,
            "tokens": prompt + completion,
            "cost": run_cost(out.tokens_by_model, (run.config or {}).get("models") or {}),
            "mean_latency_ms": out.latency_sum / out.latency_n if out.latency_n else None,
            "rounds": int(run.rounds or 1)}


def _stability(out: RunOutcomes, metrics: dict[str, Any], intervals: dict[str, Any]
               ) -> list[int]:
    """Perfect and flaky shares, errored rounds; returns the distribution (questions
    right j of N times, j = 0..N)."""
    rounds = metrics["rounds"]
    exclude = out.failure_policy == "exclude"
    # (right, trials): answered rounds under `exclude` (questions without one have no
    # rate and are left out), all N under `as_wrong`
    tallies = [(sum(1 for v in vs if v), sum(1 for v in vs if v is not None) if exclude
                else rounds) for vs in out.verdicts.values()]
    tallies = [(right, trials) for right, trials in tallies if trials]
    n = len(tallies)
    perfect = sum(1 for right, _ in tallies if right == rounds)
    flaky = sum(1 for right, trials in tallies if 0 < right < trials)
    metrics.update(perfect_share=perfect / n if n else None,
                   flaky_share=flaky / n if n else None,
                   errored_rounds=sum(1 for vs in out.verdicts.values() for v in vs if v is None),
                   failure_policy=out.failure_policy)
    intervals.update(perfect_share=wilson(perfect, n), flaky_share=wilson(flaky, n))
    from evalcore.metrics.repeats import run_g_pass

    # mG-Pass@N: right in most of N rounds (questions with all N rounds answered)
    metrics["mg_pass_at_k"] = (run_g_pass([(t, r) for r, t in tallies], [rounds])[1][str(rounds)]
                               if rounds >= 2 else None)
    complete = [right for right, trials in tallies if trials == rounds]  # the 0..N bins
    return [sum(1 for c in complete if c == j) for j in range(rounds + 1)]


def _robustness(out: RunOutcomes, metrics: dict[str, Any], intervals: dict[str, Any]) -> list:
    """Per level: PDR, attacked accuracy, flips; returns the clean item ids."""
    from evalcore.metrics.robustness import PairedOutcome, robustness_summary

    extra = ((out.run.config or {}).get("spec") or {}).get("extra") or {}
    pairs = extra.get("pairs") or []
    rounds = metrics["rounds"]
    by_level: dict[str, list] = defaultdict(list)
    for attack_item_id, clean_id, attacked_id, _set_id, level, *_ in pairs:
        by_level[level].append(PairedOutcome(
            attack_item_id, out.verdicts.get(clean_id, [None] * rounds),
            out.verdicts.get(attacked_id, [None] * rounds)))
    all_clean, all_attacked = [], []
    flips = 0
    for level, outcomes in sorted(by_level.items()):
        summary = robustness_summary(outcomes)
        clean = [o.clean_rate for o in outcomes]
        attacked = [o.attacked_rate for o in outcomes]
        all_clean += clean
        all_attacked += attacked
        flips += len(summary.flips.right_to_wrong)
        metrics[f"pdr_{level}"] = summary.pdr
        metrics[f"accuracy_attacked_{level}"] = summary.accuracy_attacked
        metrics[f"accuracy_clean_{level}"] = summary.accuracy_clean
        metrics[f"mcnemar_p_{level}"] = summary.mcnemar.p_value
        intervals[f"accuracy_clean_{level}"] = rate_interval(clean, rounds)
        intervals[f"pdr_{level}"] = bootstrap([clean, attacked], _pdr)
        intervals[f"accuracy_attacked_{level}"] = rate_interval(attacked, rounds)
    metrics["levels"] = sorted(by_level)
    metrics["flips_right_to_wrong"] = flips
    if all_attacked:
        metrics["accuracy_attacked"] = sum(all_attacked) / len(all_attacked)
        intervals["accuracy_attacked"] = rate_interval(all_attacked, rounds)
        clean_mean = sum(all_clean) / len(all_clean)
        metrics["pdr"] = (clean_mean - metrics["accuracy_attacked"]) / clean_mean \
            if clean_mean else None
        intervals["pdr"] = bootstrap([all_clean, all_attacked], _pdr)
    return list(dict.fromkeys(p[1] for p in pairs))


def _fairness(engine: Engine, run_id: int, metrics: dict[str, Any]) -> None:
    from evalcore.report.fairness import fairness_report
    from evalcore.report.fairness_benchmarks import benchmark_summary

    report = fairness_report(engine, run_id, include_rows=False)
    metrics["bias_benchmark"] = benchmark_summary(report)
    metrics.update({k: v for k, v in report["gate_metrics"].items() if k != "accuracy"})
    metrics["bbq_accuracy"] = report["gate_metrics"].get("accuracy")
    metrics["fairness_score"] = report["score"]
    metrics["fairness_level"] = report["level"]
    metrics["fairness_verdict"] = (report.get("verdict") or {}).get("verdict")
    metrics["top_effects"] = [e for e in report.get("effects", []) if e["significant"]][:5]
    metrics["violation_keys"] = sorted({f"{v['pair_id']}:{v['metric']}"
                                        for v in report["violations"]})


def run_figures(engine: Engine, run_id: int, outcomes: Optional[RunOutcomes] = None,
                failure_policy: Optional[str] = None) -> dict[str, Any]:
    """The headline figures of one run: `run` (who, what, when), `metrics` (flat values;
    None = not measured), `intervals` ({metric: {low, high, method}}) and, for stability
    runs, `distribution` (questions right j of N times, j = 0..N)."""
    out = outcomes or load_outcomes(engine, run_id, failure_policy)
    run = out.run
    metrics = _common(out)
    intervals: dict[str, Any] = {}
    rated = list(out.verdicts)
    extra: dict[str, Any] = {}
    if run.kind == "stability":
        extra["distribution"] = _stability(out, metrics, intervals)
    elif run.kind == "robustness":
        rated = _robustness(out, metrics, intervals)
    elif run.kind == "fairness":
        try:
            _fairness(engine, run_id, metrics)
        except Exception as exc:  # noqa: BLE001 - a run without answers still lists
            metrics["fairness_error"] = str(exc)
    rates = [r for r in (out.rate(i) for i in rated
                         if any(v is not None for v in out.verdicts.get(i, ()))
                         or run.kind == "stability") if r is not None]
    has_verdicts = run.kind != "fairness" or any(
        v is not None for vs in out.verdicts.values() for v in vs)
    metrics["accuracy"] = sum(rates) / len(rates) if rates and has_verdicts else None
    intervals["accuracy"] = (rate_interval(rates, metrics["rounds"])
                             if metrics["accuracy"] is not None else None)
    if run.kind == "stability":
        metrics["mean_success_rate"] = metrics["accuracy"]
        intervals["mean_success_rate"] = intervals["accuracy"]
    return {"run": run_summary(run), "metrics": metrics, "intervals": intervals, **extra}


def run_summary(run: Any) -> dict[str, Any]:
    """Who ran what, when: the run's summary columns (never its config blob's secrets)."""
    spec = (run.config or {}).get("spec") or {}
    return {"id": int(run.id), "kind": run.kind, "status": run.status, "name": run.name,
            "model": run.model, "judge": run.judge, "dataset_id": run.dataset_id,
            "dataset": spec.get("dataset"), "rounds": run.rounds,
            "created_by": run.created_by, "created_at": run.created_at,
            "finished_at": run.finished_at}


def interval_text(value: Optional[float], interval: Optional[Mapping[str, Any]],
                  digits: int = 3) -> str:
    """"0.712 [0.650, 0.768]" or "-" for an unmeasured figure."""
    if value is None:
        return "-"
    if not interval:
        return f"{value:.{digits}f}"
    return f"{value:.{digits}f} [{interval['low']:.{digits}f}, {interval['high']:.{digits}f}]"
