"""Stability of a model: ask each question N times, judge each answer 0/1, study the counts.

Pure functions over verdicts; no model, store or file I/O. Standard library only, so the
CLI can import this at start-up.

Rules (the method's, made precise):

- A round that did not produce a verdict (model error after all retries, judge failure,
  round not run: `None` or missing from the list) is never silently a wrong answer. The
  failure policy decides, and the report names it:
  `exclude` (default): a question's rate is `correct / answered`, over the rounds that
  have a verdict; Wilson interval, class and risk use the same `answered` trials. A
  question with no verdict at all has no rate (None) and is counted as `unanswered`.
  `as_wrong` (the method's seed rule, failure = 0): the rate is `correct / n_rounds`.
  Either way every question reports `answered` and `errored` (= n_rounds - answered).
- The 0..N distribution counts the questions whose N rounds all have a verdict (under
  `as_wrong`: every question). Under `exclude` a question with errored rounds cannot sit
  in a bin "right j times out of N", so it is counted once as `incomplete` instead; the
  bins and `incomplete` add up to all questions (percentages too). Its rate over the
  answered rounds still enters the mean, variance, classes and risk.
- Classes on the rate r: perfect r = 1; high 0.8 <= r < 1; unstable 0.5 <= r < 0.8;
  severe 0 < r < 0.5; failed r = 0. Decided on integers (5c >= 4n, 2c >= n), so no
  floating-point rounding can move a question across a boundary.
- Risk levels (the method's names): high_risk r < 0.5; borderline 0.5 <= r < 0.8; trusted r >= 0.8 (includes
  perfect); perfect r = 1. Trusted and perfect overlap on purpose: the method reports both.
- Mean and variance of the per-question rates are over the population of questions
  evaluated that have a rate (variance with ddof=0, numpy's default): these questions are the whole
  set under test, not a sample of a larger one.
- pass@k = 1 - C(n-c, k) / C(n, k): the unbiased chance that at least one of k answers
  drawn without replacement from the n is right (Chen et al. 2021, "Codex" paper).
  pass^k = C(c, k) / C(n, k): the chance that all k drawn are right (tau-bench). Both
  are computed with exact integers and one final division, then averaged over questions.
  A question enters pass@k / pass^k with its own trials (n = answered under `exclude`)
  when it has at least k of them; a k no question reaches is None.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, Callable, Literal, Mapping, Optional, Sequence, Union

from evalcore.errors import EvalcoreError

StabilityClass = Literal["perfect", "high", "unstable", "severe", "failed"]
CLASSES: tuple[StabilityClass, ...] = ("perfect", "high", "unstable", "severe", "failed")
RISK_LEVELS: tuple[str, ...] = ("high_risk", "borderline", "trusted", "perfect")
MAX_ROUNDS = 100
"""The method asks each question 1 to 100 times."""
FailurePolicy = Literal["exclude", "as_wrong"]
FAILURE_POLICIES: tuple[FailurePolicy, ...] = ("exclude", "as_wrong")
NO_VERDICT = "rounds without a verdict (model or judge error)"
POLICY_RULES: dict[str, str] = {
    "exclude": "are left out: each question's success rate is over its answered rounds",
    "as_wrong": "count as wrong answers (the method's seed rule, failure = 0)",
}
"""What each failure policy does with the rounds without a verdict (the CLI's summary line
puts their count in between)."""
POLICY_NOTES: dict[str, str] = {k: f"{NO_VERDICT} {v}" for k, v in POLICY_RULES.items()}
"""What each failure policy means, in the words the report and the page show."""

Verdict = Union[bool, int, None]
"""1/True right, 0/False wrong, None no verdict (error): see the failure policy."""
VerdictRows = Union[Sequence[Sequence[Verdict]], Mapping[Any, Sequence[Verdict]], Any]
"""Per-question verdict lists: a list of lists, a 2-D array, or a mapping item_idx -> list."""


class MetricInputError(EvalcoreError, ValueError):
    """The verdicts handed to a metric cannot be summarised (empty, ragged, out of range)."""


# --------------------------------------------------------------------------- per question


def wilson_interval(correct: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for `correct` successes in `n` trials.

    Why Wilson: with n as small as 1-10 and rates at 0 or 1 (common here), the normal
    interval collapses to a point; Wilson stays inside [0, 1] and keeps its coverage.
    Equals `scipy.stats.binomtest(correct, n).proportion_ci(method="wilson")`.
    """
    if n <= 0:
        raise MetricInputError(f"Wilson interval needs n >= 1 trials, got n={n}.")
    if not 0 <= correct <= n:
        raise MetricInputError(f"correct={correct} is outside 0..n={n}.")
    if not 0 < confidence < 1:
        raise MetricInputError(f"confidence must be in (0, 1), got {confidence}.")
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = correct / n
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(p * (1 - p) / n + z2n / (4 * n))
    low = 0.0 if correct == 0 else max(0.0, centre - half)
    high = 1.0 if correct == n else min(1.0, centre + half)
    return low, high


def classify(correct: int, n: int) -> StabilityClass:
    """The stability class of a question right `correct` times out of `n` (see module doc)."""
    if n <= 0 or not 0 <= correct <= n:
        raise MetricInputError(f"cannot classify correct={correct} of n={n} rounds.")
    if correct == n:
        return "perfect"
    if 5 * correct >= 4 * n:
        return "high"
    if 2 * correct >= n:
        return "unstable"
    if correct > 0:
        return "severe"
    return "failed"


def risk_levels(correct: int, n: int) -> tuple[str, ...]:
    """The risk levels a question falls in; `trusted` and `perfect` may both apply."""
    if 2 * correct < n:
        return ("high_risk",)
    if 5 * correct < 4 * n:
        return ("borderline",)
    return ("trusted", "perfect") if correct == n else ("trusted",)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: chance at least one of k of the n answers (c right) is right."""
    _check_nck(n, c, k)
    total = math.comb(n, k)
    return (total - math.comb(n - c, k)) / total


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: chance all k answers drawn from the n (c right) are right."""
    _check_nck(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def _check_nck(n: int, c: int, k: int) -> None:
    if not (n >= 1 and 0 <= c <= n and 1 <= k <= n):
        raise MetricInputError(f"pass@k needs 1 <= k <= n and 0 <= c <= n; got n={n} c={c} k={k}.")


def check_policy(failure_policy: str) -> FailurePolicy:
    """The policy if known, else a `MetricInputError` naming the choices."""
    if failure_policy not in FAILURE_POLICIES:
        raise MetricInputError(f"failure_policy must be one of {', '.join(FAILURE_POLICIES)}; "
                               f"got {failure_policy!r}.")
    return failure_policy  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class QuestionStability:
    """One question's verdicts summarised."""

    key: Any
    """The item index (or the key of the mapping passed in)."""
    correct_count: int
    answered: int
    """Rounds that produced a verdict (right or wrong); n_rounds - answered were errors."""
    n_rounds: int
    success_rate: Optional[float]
    """correct / trials; None when the question has no trials (no verdict under `exclude`)."""
    ci_low: Optional[float]
    ci_high: Optional[float]
    stability_class: Optional[StabilityClass]
    failure_policy: FailurePolicy = "exclude"

    @property
    def errored(self) -> int:
        """Rounds without a verdict (model or judge error, or not run)."""
        return self.n_rounds - self.answered

    @property
    def trials(self) -> int:
        """The rounds the rate is over: answered ones (`exclude`) or all N (`as_wrong`)."""
        return self.answered if self.failure_policy == "exclude" else self.n_rounds

    def to_json_dict(self) -> dict[str, Any]:
        """The numeric fields of one `stability_results` entry (the lead adds the text)."""
        return {
            "correct_count": self.correct_count,
            "answered": self.answered,
            "errored": self.errored,
            "success_rate": self.success_rate,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "class": self.stability_class,
        }


def question_stability(verdicts: Sequence[Verdict], n_rounds: int, key: Any = None,
                       confidence: float = 0.95,
                       failure_policy: FailurePolicy = "exclude") -> QuestionStability:
    """Summarise one question's verdicts; rounds without a verdict per `failure_policy`."""
    _check_rounds(n_rounds)
    check_policy(failure_policy)
    values = list(verdicts)
    if len(values) > n_rounds:
        raise MetricInputError(
            f"question {key!r} has {len(values)} verdicts but the run has {n_rounds} rounds; "
            "pass the run's round count or drop the extra rounds.")
    correct = answered = 0
    for pos, value in enumerate(values):
        if value is None:
            continue
        if value not in (0, 1):  # True/False and numpy ints compare equal to 0/1
            raise MetricInputError(
                f"question {key!r} round {pos + 1}: verdict {value!r} is not 0, 1 or None.")
        answered += 1
        correct += int(value)
    return question_from_counts(correct, answered, n_rounds, key, confidence, failure_policy)


def question_from_counts(correct: int, answered: int, n_rounds: int, key: Any = None,
                         confidence: float = 0.95,
                         failure_policy: FailurePolicy = "exclude") -> QuestionStability:
    """One question's figures from its counts: right `correct` times in `answered`
    rounds with a verdict, of `n_rounds` (every figure depends on these counts only)."""
    if not 0 <= correct <= answered <= n_rounds:
        raise MetricInputError(f"question {key!r}: right {correct} of {answered} answered "
                               f"rounds is not possible in {n_rounds} rounds.")
    trials = answered if failure_policy == "exclude" else n_rounds
    if trials == 0:
        return QuestionStability(key=key, correct_count=0, answered=0, n_rounds=n_rounds,
                                 success_rate=None, ci_low=None, ci_high=None,
                                 stability_class=None, failure_policy=failure_policy)
    low, high = wilson_interval(correct, trials, confidence)
    return QuestionStability(key=key, correct_count=correct, answered=answered,
                             n_rounds=n_rounds, success_rate=correct / trials,
                             ci_low=low, ci_high=high,
                             stability_class=classify(correct, trials),
                             failure_policy=failure_policy)


def _check_rounds(n_rounds: int) -> None:
    if not isinstance(n_rounds, int) or not 1 <= n_rounds <= MAX_ROUNDS:
        raise MetricInputError(f"n_rounds must be an integer 1..{MAX_ROUNDS}, got {n_rounds!r}.")


# --------------------------------------------------------------------------- the whole run


@dataclass(frozen=True)
class StabilitySummary:
    """A run's stability: per-question results and the figures over all questions."""

    n_rounds: int
    questions: list[QuestionStability]
    distribution_counts: dict[str, int]
    """Questions right exactly j times out of N judged rounds, keyed "0".."N"."""
    distribution_percent: dict[str, float]
    """Of all questions (the bins and `incomplete` add up to 100)."""
    mean: Optional[float]
    """Mean of the per-question success rates (None: no question has a rate)."""
    variance: Optional[float]
    """Population variance (ddof=0) of the per-question success rates."""
    classes: dict[str, int]
    risk: dict[str, int]
    pass_at_k: dict[str, Optional[float]]
    """pass@k averaged over questions with at least k trials, keyed "1".."N"."""
    pass_hat_k: dict[str, Optional[float]]
    """pass^k averaged over questions with at least k trials, keyed "1".."N"."""
    errored_rounds: int = 0
    """Rounds without a verdict over all questions."""
    failure_policy: FailurePolicy = "exclude"
    incomplete: int = 0
    """Questions outside the 0..N bins: some rounds without a verdict (`exclude` only)."""
    unanswered: int = 0
    """Questions without a single verdict: no rate, no class (`exclude` only)."""
    questions_with_errors: int = 0
    """Questions with at least one round without a verdict (under either policy)."""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def total_questions(self) -> int:
        return len(self.questions)

    def distribution_json(self) -> dict[str, Any]:
        """The `distribution` block of the stability JSON."""
        total = self.total_questions
        return {
            "distribution_counts": dict(self.distribution_counts),
            "distribution_percent": dict(self.distribution_percent),
            "incomplete": self.incomplete,
            "incomplete_percent": 100.0 * self.incomplete / total if total else 0.0,
            "total_questions": total,
            "repetition_count": self.n_rounds,
        }

    def summary_json(self) -> dict[str, Any]:
        """The `summary` block of the stability JSON."""
        return {
            "mean": self.mean,
            "variance": self.variance,
            "std": None if self.variance is None else math.sqrt(self.variance),
            "classes": dict(self.classes),
            "risk": {name: self.risk[name] for name in RISK_LEVELS},
            "failure_policy": self.failure_policy,
            "failure_policy_note": POLICY_NOTES[self.failure_policy],
            "errored_rounds": self.errored_rounds,
            "questions_with_errors": self.questions_with_errors,
            "incomplete_questions": self.incomplete,
            "unanswered_questions": self.unanswered,
            "pass_at_k": dict(self.pass_at_k),
            "pass_hat_k": dict(self.pass_hat_k),
        }

    def results_json(self, items: Optional[Mapping[Any, Mapping[str, Any]]] = None
                     ) -> dict[str, dict[str, Any]]:
        """The `stability_results` block keyed by str(item index).

        `items` maps the same keys to the text fields (`question`, `standard_answer`,
        `type`, `rounds`; see `round_json`); they are merged in front of the numbers.
        """
        out: dict[str, dict[str, Any]] = {}
        for q in self.questions:
            text = dict(items.get(q.key, {})) if items is not None else {}
            out[str(q.key)] = {**text, **q.to_json_dict()}
        return out

    def to_json_dict(self, items: Optional[Mapping[Any, Mapping[str, Any]]] = None
                     ) -> dict[str, Any]:
        """`distribution`, `stability_results` and `summary`; the lead adds run, model, timing."""
        return {
            "distribution": self.distribution_json(),
            "stability_results": self.results_json(items),
            "summary": self.summary_json(),
        }


def round_json(round_no: int, answer: Optional[str], correct: Optional[bool],
               score: Optional[float] = None, reason: Optional[str] = None,
               errored: bool = False, failure_policy: FailurePolicy = "as_wrong"
               ) -> dict[str, Any]:
    """One entry of a question's `rounds` list.

    `score` defaults to the 0/1 verdict, the value the method counts. A round without a
    verdict (`errored`, or `correct` None) is written correct=false, score 0 under
    `as_wrong`, and correct=null, score=null under `exclude`; `errored` says which it is.
    """
    errored = errored or correct is None
    if errored and failure_policy == "exclude":
        return {"round": round_no, "answer": answer, "correct": None, "score": None,
                "reason": reason, "errored": True}
    verdict = bool(correct) and not errored
    return {"round": round_no, "answer": answer, "correct": verdict,
            "score": float(verdict) if score is None or errored else score, "reason": reason,
            "errored": errored}


def _rows_with_keys(rows: VerdictRows) -> list[tuple[Any, Sequence[Verdict]]]:
    if isinstance(rows, Mapping):
        return list(rows.items())
    if hasattr(rows, "tolist") and callable(rows.tolist):  # numpy array without importing numpy
        shape = getattr(rows, "shape", ())
        if len(shape) != 2 and not (len(shape) == 1 and shape[0] == 0):
            raise MetricInputError(f"a verdict matrix must be 2-D (questions x rounds), got {shape}.")
        rows = rows.tolist()
    return list(enumerate(rows))


def stability_summary(rows: VerdictRows, n_rounds: int, confidence: float = 0.95,
                      failure_policy: FailurePolicy = "exclude") -> StabilitySummary:
    """Summarise a stability run: the single entry point for pages, CLI and reports.

    Args:
        rows: per question, its verdicts in round order (1/0/True/False/None); a
            list of lists, a 2-D array (questions x rounds) or a mapping item_idx -> list.
            Lists shorter than `n_rounds` (rounds errored or not run) miss those rounds.
        n_rounds: N, the rounds each question was meant to get (1..100).
        confidence: level of the per-question Wilson intervals.
        failure_policy: `exclude` (rates over answered rounds) or `as_wrong` (a round
            without a verdict is wrong, the seed's rule); see the module doc.
    """
    _check_rounds(n_rounds)
    check_policy(failure_policy)
    keyed = _rows_with_keys(rows)
    if not keyed:
        raise MetricInputError(
            "no questions to summarise: the run has no judged answers yet. "
            "Wait for the run to finish some calls, or check that it has items.")
    questions = [question_stability(v, n_rounds, key, confidence, failure_policy)
                 for key, v in keyed]
    return summarise_questions(questions, n_rounds)


def summary_from_counts(counts: Mapping[Any, tuple[int, int]], n_rounds: int,
                        confidence: float = 0.95, failure_policy: FailurePolicy = "exclude"
                        ) -> StabilitySummary:
    """`stability_summary` from per-question counts {key: (right, answered rounds)}, as
    a run's result holds them (`report.run_figures.RunOutcomes.tallies`): the verdicts
    are counted once, wherever the summary is shown."""
    _check_rounds(n_rounds)
    check_policy(failure_policy)
    if not counts:
        raise MetricInputError(
            "no questions to summarise: the run has no judged answers yet. "
            "Wait for the run to finish some calls, or check that it has items.")
    questions = [question_from_counts(right, answered, n_rounds, key, confidence,
                                      failure_policy)
                 for key, (right, answered) in counts.items()]
    return summarise_questions(questions, n_rounds)


def _mean_over(groups: Counter[tuple[int, int]], value: Callable[[int, int], float]
               ) -> Optional[float]:
    """Mean of value(trials, correct) over the questions counted in `groups` (None if none)."""
    total = sum(groups.values())
    if not total:
        return None
    return math.fsum(n_q * value(t, c) for (t, c), n_q in groups.items()) / total


def summarise_questions(questions: Sequence[QuestionStability], n_rounds: int) -> StabilitySummary:
    """The run-level figures from per-question results (same `n_rounds` and failure policy)."""
    _check_rounds(n_rounds)
    if not questions:
        raise MetricInputError("no questions to summarise (empty input).")
    policy = questions[0].failure_policy
    counts = [0] * (n_rounds + 1)
    classes = dict.fromkeys(CLASSES, 0)
    risk = dict.fromkeys(RISK_LEVELS, 0)
    groups: Counter[tuple[int, int]] = Counter()
    """(trials, correct) -> questions: every figure below depends only on these pairs, so
    the cost is O(N^2) per distinct pair, whatever the question count."""
    errored = incomplete = unanswered = with_errors = 0
    for q in questions:
        if q.n_rounds != n_rounds:
            raise MetricInputError(f"question {q.key!r} has n_rounds={q.n_rounds}, expected {n_rounds}.")
        if q.failure_policy != policy:
            raise MetricInputError(f"question {q.key!r} uses failure_policy={q.failure_policy!r}, "
                                   f"the others {policy!r}; summarise them with one policy.")
        errored += q.errored
        with_errors += q.errored > 0
        trials = q.trials
        if trials == 0:
            unanswered += 1
            incomplete += 1
            continue
        groups[(trials, q.correct_count)] += 1
        classes[classify(q.correct_count, trials)] += 1
        for level in risk_levels(q.correct_count, trials):
            risk[level] += 1
        if trials == n_rounds:
            counts[q.correct_count] += 1
        else:
            incomplete += 1
    total = len(questions)
    mean = _mean_over(groups, lambda t, c: c / t)
    variance = (None if mean is None
                else _mean_over(groups, lambda t, c: (c / t - mean) ** 2))
    pass_k: dict[str, Optional[float]] = {}
    hat_k: dict[str, Optional[float]] = {}
    for k in range(1, n_rounds + 1):
        eligible = Counter({tc: n_q for tc, n_q in groups.items() if tc[0] >= k})
        pass_k[str(k)] = _mean_over(eligible, lambda t, c: pass_at_k(t, c, k))
        hat_k[str(k)] = _mean_over(eligible, lambda t, c: pass_hat_k(t, c, k))
    return StabilitySummary(
        n_rounds=n_rounds,
        questions=list(questions),
        distribution_counts={str(j): n_j for j, n_j in enumerate(counts)},
        distribution_percent={str(j): 100.0 * n_j / total for j, n_j in enumerate(counts)},
        mean=mean, variance=variance, classes=classes, risk=risk,
        pass_at_k=pass_k, pass_hat_k=hat_k, errored_rounds=errored, failure_policy=policy,
        incomplete=incomplete, unanswered=unanswered, questions_with_errors=with_errors)
