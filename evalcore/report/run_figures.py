"""One run's headline figures, for any kind, with their intervals: the numbers that
compare, the leaderboard, the trend, the gate and the trust report all share.

`load_outcomes` reads a run's outcome counts (a finished run's stored summary, else its
calls' verdict columns, never prompt or answer text) into per-item verdict lists;
`run_figures` turns them into a flat `metrics` dict plus an `intervals` dict:

- accuracy: the mean of per-item success rates (over the items the kind rates, e.g. the
  clean ones of an attack run). Rounds without a verdict follow the failure policy
  (`RunOutcomes`), the kind's own (`EvalKind.counting`), as its report counts
  them. Interval: Wilson when each item was asked once (a plain proportion),
  else a percentile bootstrap over items (rounds of one item are not independent, so a
  Wilson interval on all rounds pooled would be too narrow), except when every item has
  the same rate: the bootstrap then collapses to a point, and the pooled Wilson is used.
- the kind's own headline figures (`EvalKind.figures`, in its module under
  `evalcore/kinds/`), with their intervals, and the figures it names after another
  (`MetricSpec.same_as`).
- errors, tokens, cost (`metrics.cost`), mean latency, for every kind.

A round's verdict is the judge call's when the run had a judge model, else the answer
call's; a failed answer call has no verdict (None, counted as wrong).
Bootstraps use a fixed seed (`SEED`) and `RESAMPLES` resamples, so figures repeat.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from sqlalchemy.engine import Engine

from evalcore.kinds import Metric, find_kind, run_metrics
from evalcore.metrics.cost import run_cost
from evalcore.metrics.stability import wilson_interval
from evalcore.metrics.uncertainty import clustered_accuracy
from evalcore.store import queries
from evalcore.store import run_summary as summaries
from evalcore.store.run_reads import outcome_rows

SEED = 20240601
RESAMPLES = 1000
CONFIDENCE = 0.95
Verdict = Optional[bool]
COUNTING = 2
"""What a finished run's stored counts and figures (`store.run_summary`) were counted
under; raised when that changes (a judge error became "no verdict"), so counts stored
under the old rule are counted again instead of read."""


@dataclass
class RunOutcomes:
    """A stored run's result, read once (`load_outcomes`): the run row (its rounds, model
    snapshot with prices), per item its verdicts (item id -> one entry per round), the
    calls, errors, tokens per model and latency. Every figure of the run is computed from
    this (`run_figures`), whatever view shows it."""

    run: Any
    verdicts: dict[int, list[Verdict]] = field(default_factory=dict)
    tokens_by_model: dict[str, tuple[int, int]] = field(default_factory=dict)
    calls: int = 0
    errors: int = 0
    latency_sum: float = 0.0
    latency_n: int = 0

    failure_policy: str = "as_wrong"
    """How rounds without a verdict count (`metrics.stability` FailurePolicy): `exclude`
    (rates over answered rounds) or `as_wrong`; by default the kind's own."""

    def counts(self, item_id: int) -> tuple[int, int]:
        """(right, rounds that count) of one item under the failure policy: the answered
        rounds (`exclude`) or all the run's rounds (`as_wrong`)."""
        verdicts = self.verdicts.get(item_id) or []
        right = verdicts.count(True)  # (list.count: a million verdicts are read here)
        if self.failure_policy == "exclude":
            return right, len(verdicts) - verdicts.count(None)
        return right, max(int(self.run.rounds or 1), 1)

    def rate(self, item_id: int) -> Optional[float]:
        """Success rate of one item: right / the rounds that count (None when none does)."""
        right, rounds = self.counts(item_id)
        return right / rounds if rounds else None

    def tallies(self) -> dict[int, tuple[int, int]]:
        """{item id: (right, answered rounds)} of every item with a verdict list: the
        per-item counts every per-question figure is computed from (whatever the policy;
        `metrics.stability.summary_from_counts`)."""
        return {item: (vs.count(True), len(vs) - vs.count(None))
                for item, vs in self.verdicts.items()}

    def all_counts(self) -> dict[int, tuple[int, int]]:
        """{item id: (right, rounds)} of every item with a verdict list (`counts`)."""
        return {item: self.counts(item) for item in self.verdicts}


def default_policy(kind: str) -> str:
    """The kind's own failure policy (`EvalKind.counting`); `as_wrong` for a kind no
    module registered."""
    found = find_kind(kind)
    return found.counting.failure_policy if found else "as_wrong"


def load_outcomes(engine: Engine, run_id: int, failure_policy: Optional[str] = None
                  ) -> RunOutcomes:
    """Read a run's outcome counts into `RunOutcomes`: a finished run's stored summary
    (`store.run_summary`, counted once), else counted from its calls (`count_outcomes`).

    The verdict lists hold right, wrong and no-verdict rounds in that order, not in round
    order, which every figure here ignores.
    """
    run = queries.get_run(engine, run_id)
    rounds = max(int(run.rounds or 1), 1)
    out = RunOutcomes(run=run, failure_policy=failure_policy or default_policy(run.kind))
    counted = summaries.summary(engine, run, "outcomes", lambda: count_outcomes(engine, run))
    if counted.get("counting") != COUNTING:  # stored under an older rule
        counted = count_outcomes(engine, run)
        summaries.store(engine, run_id, "outcomes", summaries.state_key(engine, run), counted)
    for model, calls, prompt, completion in counted["usage"]:
        previous = out.tokens_by_model.get(model or run.model, (0, 0))
        out.tokens_by_model[model or run.model] = (previous[0] + int(prompt),
                                                   previous[1] + int(completion))
        out.calls += int(calls)
    errors, latency_sum, latency_n = counted["answered"]
    out.errors, out.latency_sum, out.latency_n = int(errors), float(latency_sum), int(latency_n)
    for item_id, right, wrong, unanswered in counted["items"]:
        out.verdicts[int(item_id)] = [True] * right + [False] * wrong + [None] * unanswered
    if _counts_unasked(run.kind):  # an item never answered still counts (as wrong)
        for item_id in (run.config or {}).get("item_ids") or []:
            out.verdicts.setdefault(int(item_id), [None] * rounds)
    return out


def count_outcomes(engine: Engine, run: Any) -> dict[str, Any]:
    """Count a run's calls (verdict columns only, no prompt or answer text): `usage`
    [(model, calls, prompt tokens, completion tokens)], `answered` (errors, latency sum,
    calls with a latency) and `items` [(item id, right, wrong, no-verdict rounds)].

    Usage totals and, for a run scored by rules, the verdicts are counted in SQL (one row
    per item, not per call). A judged run reads its calls to pair judge and answer.
    """
    rounds = max(int(run.rounds or 1), 1)
    judged = run.judge != "rules"
    rows = outcome_rows(engine, int(run.id), rounds, judged=judged)
    verdicts: dict[int, list[Verdict]] = {}
    if judged:
        _judged_verdicts(rows["verdicts"], rounds, verdicts)
    else:
        _count_verdicts(rows["verdicts"], rounds, verdicts)
    items = [[int(item_id), sum(1 for v in vs if v), sum(1 for v in vs if v is False),
              sum(1 for v in vs if v is None)] for item_id, vs in verdicts.items()]
    return {"usage": [[model, int(calls), int(prompt), int(completion)]
                      for model, calls, prompt, completion in rows["usage"]],
            "answered": [int(rows["answered"][0]), float(rows["answered"][1]),
                         int(rows["answered"][2])],
            "items": items, "counting": COUNTING}


def _count_verdicts(counts: Sequence[tuple[Any, ...]], rounds: int,
                    out: dict[int, list[Verdict]]) -> None:
    """Rules verdicts counted per item in SQL, (item, right, errors, stored): right, wrong,
    then no verdict (a failed call or a round not stored)."""
    for item_id, right, errors, stored in counts:
        right, errors = int(right or 0), int(errors or 0)
        wrong = max(int(stored) - right - errors, 0)
        out[item_id] = [True] * right + [False] * wrong + [None] * max(rounds - right - wrong, 0)


def _judged_verdicts(calls: Sequence[tuple[Any, ...]], rounds: int,
                     out: dict[int, list[Verdict]]) -> None:
    """Judge verdicts, except where the answer or the judge call failed (no verdict, as
    the stability report counts it: a judge error is not a wrong answer)."""
    answer_error: set[tuple[int, int]] = set()
    judge_verdict: dict[tuple[int, int], Verdict] = {}
    for item_id, rnd, stage, correct, error, failed in calls:
        out.setdefault(item_id, [None] * rounds)
        if stage == "answer" and error is not None:
            answer_error.add((item_id, rnd))
        elif stage == "judge":
            judge_verdict[(item_id, rnd)] = None if error is not None or failed else correct
    for (item_id, rnd), verdict in judge_verdict.items():
        if (item_id, rnd) not in answer_error:
            out[item_id][rnd - 1] = verdict


# ------------------------------------------------------------------ intervals


def wilson(count: int, n: int) -> Optional[dict[str, Any]]:
    """A Wilson interval as {low, high, method}; None without observations."""
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


def pdr(clean: Any, attacked: Any, axis: int = -1) -> Any:
    """Performance drop rate (clean - attacked) / clean, for `bootstrap` (robustness)."""
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
    run = out.run
    prompt = sum(p for p, _ in out.tokens_by_model.values())
    completion = sum(c for _, c in out.tokens_by_model.values())
    return {"items": len(out.verdicts), "calls": out.calls, "errors": out.errors,
            "prompt_tokens": prompt, "completion_tokens": completion,
            "tokens": prompt + completion,
            "cost": run_cost(out.tokens_by_model, (run.config or {}).get("models") or {}),
            "mean_latency_ms": out.latency_sum / out.latency_n if out.latency_n else None,
            "rounds": int(run.rounds or 1)}


def run_figures(engine: Engine, run_id: int, outcomes: Optional[RunOutcomes] = None,
                failure_policy: Optional[str] = None) -> dict[str, Any]:
    """The headline figures of one run: `run` (who, what, when), `metrics` (flat values;
    None = not measured), `intervals` ({metric: {low, high, method}}) and what the kind's
    figures add (e.g. `distribution`, questions right j of N times, j = 0..N).

    Without `outcomes`, a finished run's figures are computed once and stored
    (`store.run_summary`): the bootstrap of a 10,000-question run costs a second."""
    if outcomes is not None:
        return {"run": run_summary(outcomes.run), **_figures(engine, outcomes)}
    run = queries.get_run(engine, run_id)
    policy = failure_policy or default_policy(run.kind)
    name = f"figures:{policy}"
    body = summaries.summary(engine, run, name,
                             lambda: _figures(engine, load_outcomes(engine, run_id, policy)))
    if body.get("counting") != COUNTING:  # stored under an older rule
        body = _figures(engine, load_outcomes(engine, run_id, policy))
        summaries.store(engine, run_id, name, summaries.state_key(engine, run), body)
    return {"run": run_summary(run), **body}


def _figures(engine: Engine, out: RunOutcomes) -> dict[str, Any]:
    """`run_figures` without the `run` part (what is stored)."""
    run = out.run
    kind = find_kind(run.kind)
    metrics = _common(out)
    intervals: dict[str, Any] = {}
    extra: dict[str, Any] = dict((kind.figures(engine, out, metrics, intervals) or {})
                                 if kind and kind.figures else {})
    accuracy = accuracy_figures(out, extra.pop("rated", None))
    rates = accuracy.pop("rates")
    metrics.update(accuracy)
    intervals["accuracy"] = (rate_interval(rates, metrics["rounds"])
                             if metrics["accuracy"] is not None else None)
    for spec in (kind.metrics if kind else ()):  # a figure under the kind's own name
        if spec.same_as:
            metrics[spec.name] = metrics.get(spec.same_as)
            intervals[spec.name] = intervals.get(spec.same_as)
    return {"metrics": metrics, "intervals": intervals, **extra, "counting": COUNTING}


UNCERTAINTY_KEYS = ("accuracy_se", "accuracy_ci", "variance_within", "variance_between",
                    "within_share")
"""The accuracy's question-clustered standard error, interval and variance split
(`metrics.uncertainty.clustered_accuracy`), beside the accuracy of every run."""


def accuracy_figures(out: RunOutcomes, rated: Optional[Sequence[int]] = None
                     ) -> dict[str, Any]:
    """The accuracy of a run, the one place it is computed: the mean of per-item success
    rates over the `rated` items (default all; robustness: the clean ones) that have a
    verdict (or every one, for a kind that counts unasked items), each under the run's
    failure policy; with its uncertainty (UNCERTAINTY_KEYS) and the `rates` themselves.
    None (not measured) for a kind whose accuracy needs a verdict when no round has one."""
    kind = find_kind(out.run.kind)
    unasked = bool(kind and kind.counting.counts_unasked)
    items = list(out.verdicts) if rated is None else rated
    counts = [out.counts(i) for i in items
              if unasked or any(v is not None for v in out.verdicts.get(i, ()))]
    counts = [(right, rounds) for right, rounds in counts if rounds]
    has_verdicts = not (kind and kind.counting.accuracy_needs_verdicts) or any(
        v is not None for vs in out.verdicts.values() for v in vs)
    figures = clustered_accuracy(counts if has_verdicts else [])
    return {"accuracy": figures["accuracy"], **{k: figures[k] for k in UNCERTAINTY_KEYS},
            "rates": [right / rounds for right, rounds in counts]}


def figure_metrics(figures: Mapping[str, Any]) -> list[Metric]:
    """A run's figures (`run_figures`) as the `Metric`s its kind declares: what compare,
    the leaderboard, the trend, the gate and the trust report read."""
    return run_metrics(figures["run"]["kind"], figures["metrics"], figures["intervals"])


def _counts_unasked(kind: str) -> bool:
    found = find_kind(kind)
    return bool(found and found.counting.counts_unasked)


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
