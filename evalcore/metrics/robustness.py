"""Robustness of a model to attacked questions: clean vs attacked, paired per question.

Pure functions over verdicts and answers; no model, store or file I/O. scipy (tests) and
the text scorers (answer similarity) are imported inside the functions that use them.

The input is one `PairedOutcome` per (clean question, attacked version): the N round
verdicts of the clean item and the N of its attacked item, from the same run (same
model, prompt and scorer). Rules, made precise:

- A round without a verdict (model error, judge failure) counts as wrong, as in
  `metrics.stability`. Success rate = correct rounds / N; accuracy = correct rounds /
  all rounds, over the questions paired at that level.
- PDR (performance drop rate) = 1 - acc_attacked / acc_clean. It is undefined (None, with
  `why_none`) when the clean accuracy is 0: nothing can drop. It is negative when the
  attacked questions did better.
- Flips use each question's MAJORITY verdict: right when correct in more than half of its
  rounds (2c > N). A tie (N even, c = N/2) counts as wrong: a coin flip is not "right".
  With N = 1 the majority verdict is the verdict.
- McNemar's exact test on the majority verdicts: only discordant questions inform it
  (b = right -> wrong, c = wrong -> right); under H0 b ~ Binomial(b + c, 1/2). Two-sided
  p from `scipy.stats.binomtest` (p = 1 when b + c = 0).
- When N > 1 the per-question success rates get a paired test too: the Wilcoxon
  signed-rank test on (clean rate - attacked rate). Why Wilcoxon, not a paired t-test:
  the rates are bounded, discrete (k/N) and pile up at 0 and 1, so their differences
  are far from normal; the signed-rank test needs only symmetry under H0. Zero
  differences (questions whose rate did not move, usually most of them) are dropped
  first (Wilcoxon's original rule, scipy's "wilcox"): like McNemar, the test is then
  conditional on the questions that moved, the only ones that carry a direction. (Pratt's
  variant ranks the zeros too; on a few changed questions among many unchanged ones it
  gives markedly smaller p-values from the normal approximation, which we do not want to
  report as evidence.) Exact p for up to 50 changed questions without tied |differences|,
  else the normal approximation; the method is reported. No change at all: p = 1, no test.
- Answer similarity (the method's consistency between clean and attacked answers): for
  each round where both calls produced an answer, ROUGE-L F of the attacked answer
  against the clean one (jieba words for Chinese), optionally the e5 embedding cosine,
  and whether the extracted final answers (number, option ...) are the same.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Iterable, Optional, Sequence

from evalcore.metrics.consistency import normalize_answer
from evalcore.metrics.stability import MetricInputError, Verdict


def _correct(verdicts: Sequence[Verdict]) -> int:
    """Correct rounds; a verdict other than 0, 1 or None (2, NaN) is refused, as stability
    refuses it, instead of silently counting as wrong."""
    correct = 0
    for pos, value in enumerate(verdicts):
        if value is None:
            continue
        if value not in (0, 1):  # NaN is not in (0, 1) either
            raise MetricInputError(f"round {pos + 1}: verdict {value!r} is not 0, 1 or None; "
                                   "fix the scorer output or drop the round.")
        correct += int(value)
    return correct


def success_rate(verdicts: Sequence[Verdict]) -> float:
    """Correct rounds / rounds (a missing verdict counts as wrong)."""
    if not verdicts:
        raise MetricInputError("a question needs at least one round to have a success rate.")
    return _correct(verdicts) / len(verdicts)


def majority_correct(verdicts: Sequence[Verdict]) -> bool:
    """Right in more than half of the rounds; a tie counts as wrong."""
    if not verdicts:
        raise MetricInputError("a question needs at least one round to have a majority verdict.")
    return 2 * _correct(verdicts) > len(verdicts)


@dataclass(frozen=True)
class PairedOutcome:
    """The round verdicts of one clean question and of its attacked version."""

    key: Any
    """What identifies the pair in reports (the attack item id)."""
    clean: Sequence[Verdict]
    attacked: Sequence[Verdict]

    def __post_init__(self) -> None:
        if not self.clean or len(self.clean) != len(self.attacked):
            raise MetricInputError(
                f"pair {self.key!r}: clean and attacked need the same number of rounds (>= 1), "
                f"got {len(self.clean)} and {len(self.attacked)}.")

    @property
    def clean_rate(self) -> float:
        return success_rate(self.clean)

    @property
    def attacked_rate(self) -> float:
        return success_rate(self.attacked)

    @property
    def drop(self) -> float:
        """Clean success rate minus attacked success rate (positive = the attack hurt)."""
        return self.clean_rate - self.attacked_rate

    @property
    def flip(self) -> Optional[str]:
        """'right_to_wrong', 'wrong_to_right' or None on the majority verdicts."""
        before, after = majority_correct(self.clean), majority_correct(self.attacked)
        if before == after:
            return None
        return "right_to_wrong" if before else "wrong_to_right"


def accuracy(rows: Iterable[Sequence[Verdict]]) -> Optional[float]:
    """Correct rounds / all rounds over the questions; None when there are none."""
    correct = total = 0
    for verdicts in rows:
        correct += _correct(verdicts)
        total += len(verdicts)
    return correct / total if total else None


def performance_drop_rate(acc_clean: Optional[float],
                          acc_attacked: Optional[float]) -> tuple[Optional[float], str]:
    """(PDR = 1 - acc_attacked / acc_clean, why it is None); None when acc_clean is 0 or missing."""
    if acc_clean is None or acc_attacked is None:
        return None, "no paired questions"
    if acc_clean == 0:
        return None, "clean accuracy is 0: there is nothing to drop"
    return 1.0 - acc_attacked / acc_clean, ""


@dataclass(frozen=True)
class Flips:
    """Questions whose majority verdict changed under attack, and the concordant counts."""

    right_to_wrong: list[Any] = field(default_factory=list)
    wrong_to_right: list[Any] = field(default_factory=list)
    both_right: int = 0
    both_wrong: int = 0

    def to_json_dict(self) -> dict[str, Any]:
        return {"right_to_wrong": list(self.right_to_wrong),
                "wrong_to_right": list(self.wrong_to_right),
                "counts": {"right_to_wrong": len(self.right_to_wrong),
                           "wrong_to_right": len(self.wrong_to_right),
                           "both_right": self.both_right, "both_wrong": self.both_wrong}}


def find_flips(pairs: Sequence[PairedOutcome]) -> Flips:
    """Split the pairs by (clean majority, attacked majority)."""
    r2w, w2r = [], []
    both_right = both_wrong = 0
    for pair in pairs:
        before, after = majority_correct(pair.clean), majority_correct(pair.attacked)
        if before and not after:
            r2w.append(pair.key)
        elif after and not before:
            w2r.append(pair.key)
        elif before:
            both_right += 1
        else:
            both_wrong += 1
    return Flips(r2w, w2r, both_right, both_wrong)


@dataclass(frozen=True)
class McNemarResult:
    """McNemar's exact test on paired right/wrong outcomes."""

    right_to_wrong: int
    """b: right on the clean question, wrong on the attacked one."""
    wrong_to_right: int
    """c: the other discordant cell."""
    p_value: float
    method: str = "exact binomial on discordant pairs, two-sided"

    @property
    def discordant(self) -> int:
        return self.right_to_wrong + self.wrong_to_right

    def to_json_dict(self) -> dict[str, Any]:
        return {"b_right_to_wrong": self.right_to_wrong, "c_wrong_to_right": self.wrong_to_right,
                "discordant": self.discordant, "p_value": self.p_value, "method": self.method}


def mcnemar_exact(right_to_wrong: int, wrong_to_right: int) -> McNemarResult:
    """Exact McNemar: two-sided binomial test of b against Binomial(b + c, 1/2)."""
    b, c = int(right_to_wrong), int(wrong_to_right)
    if b < 0 or c < 0:
        raise MetricInputError(f"discordant counts must be >= 0, got b={b}, c={c}.")
    if b + c == 0:
        return McNemarResult(b, c, 1.0)
    from scipy.stats import binomtest

    return McNemarResult(b, c, float(binomtest(b, b + c, 0.5).pvalue))


@dataclass(frozen=True)
class PairedTestResult:
    """Wilcoxon signed-rank test of clean vs attacked per-question success rates."""

    questions: int
    changed: int
    """Questions whose success rate moved (non-zero difference)."""
    mean_drop: float
    """Mean of clean rate - attacked rate over all questions."""
    statistic: Optional[float]
    p_value: float
    method: str

    def to_json_dict(self) -> dict[str, Any]:
        return {"test": "wilcoxon signed-rank", "zero_method": "wilcox (zeros dropped)",
                "questions": self.questions, "changed": self.changed,
                "mean_drop": self.mean_drop, "statistic": self.statistic,
                "p_value": self.p_value, "method": self.method}


def exact_rate(value: float, max_denominator: int = 10_000) -> Fraction:
    """A success rate k/N back as the exact fraction it came from (N up to 10 000 rounds),
    so two equal count differences are equal, not 1e-17 apart."""
    return Fraction(value).limit_denominator(max_denominator)


def paired_rate_test(clean_rates: Sequence[float],
                     attacked_rates: Sequence[float]) -> PairedTestResult:
    """Wilcoxon signed-rank, two-sided, on per-question success rates: the one paired test
    of evalcore (robustness clean vs attacked, Results' run comparison).

    Differences are exact fractions; unchanged questions are dropped first (Wilcoxon's
    "wilcox" zero method) and the test runs on the changed ones: exact distribution when
    at most 50 changed and no two |differences| tie, else the normal approximation with
    tie correction (scipy's `wilcoxon`).
    """
    if len(clean_rates) != len(attacked_rates) or not clean_rates:
        raise MetricInputError(f"the paired test needs two equally long, non-empty lists of "
                               f"rates; got {len(clean_rates)} and {len(attacked_rates)}.")
    diffs = [exact_rate(a) - exact_rate(b) for a, b in zip(clean_rates, attacked_rates)]
    moved = [d for d in diffs if d != 0]
    mean_drop = float(sum(diffs, Fraction(0)) / len(diffs))
    if not moved:
        return PairedTestResult(len(diffs), 0, mean_drop, None, 1.0,
                                "no test: no question's success rate changed")
    from scipy.stats import wilcoxon

    sizes = [abs(d) for d in moved]
    method = "exact" if len(moved) <= 50 and len(set(sizes)) == len(sizes) else "approx"
    result = wilcoxon([float(d) for d in moved], method=method)
    return PairedTestResult(len(diffs), len(moved), mean_drop, float(result.statistic),
                            float(result.pvalue), method)


# --------------------------------------------------------------------------- answers


@dataclass(frozen=True)
class AnswerSimilarity:
    """How alike the clean and attacked answers of one question are, round by round."""

    compared: int
    """Rounds where both calls produced an answer."""
    rouge_l: Optional[float]
    embedding_cosine: Optional[float] = None
    same_answer: Optional[float] = None
    """Share of compared rounds with the same extracted final answer (None without extractor)."""

    def to_json_dict(self) -> dict[str, Any]:
        return {"compared": self.compared, "rouge_l": self.rouge_l,
                "embedding_cosine": self.embedding_cosine, "same_answer": self.same_answer}


def answer_similarity(clean: Sequence[Optional[str]], attacked: Sequence[Optional[str]], *,
                      extract: Optional[Callable[[str], Optional[str]]] = None,
                      embeddings: bool = False) -> AnswerSimilarity:
    """Round-by-round similarity of the attacked answers to the clean answers.

    `extract` maps a raw answer to its final answer (the scorer's extraction); two
    answers with no extractable final answer are not "the same".
    """
    if len(clean) != len(attacked):
        raise MetricInputError(f"{len(clean)} clean answers but {len(attacked)} attacked ones; "
                               "pass one answer (or None) per round on each side.")
    both = [(c, a) for c, a in zip(clean, attacked) if c is not None and a is not None]
    if not both:
        return AnswerSimilarity(0, None)
    from evalcore.scorers.text import detect_language, embedding_cosine_batch, rouge

    def language(c: str, a: str) -> Any:
        """Chinese tokens when either side is Chinese: "12" vs "答案是12个" is 0.4 both ways."""
        return "zh" if "zh" in (detect_language(c), detect_language(a)) else "en"

    rouge_l = math.fsum(rouge(a, c, language(c, a))["rougeL"] for c, a in both) / len(both)
    cosine = None
    if embeddings:
        cosine = math.fsum(embedding_cosine_batch([a for _, a in both],
                                                  [c for c, _ in both])) / len(both)
    same = None
    if extract is not None:
        def final(text: str) -> Optional[str]:
            value = extract(text)
            return None if value is None else normalize_answer(str(value))

        same = sum(1 for c, a in both if final(c) is not None and final(c) == final(a)) / len(both)
    return AnswerSimilarity(len(both), rouge_l, cosine, same)


def mean_similarity(items: Sequence[AnswerSimilarity]) -> dict[str, Optional[float]]:
    """Means over questions of each similarity (questions without a value are left out)."""
    def mean(values: list[Optional[float]]) -> Optional[float]:
        kept = [v for v in values if v is not None]
        return math.fsum(kept) / len(kept) if kept else None

    return {"rouge_l": mean([s.rouge_l for s in items]),
            "embedding_cosine": mean([s.embedding_cosine for s in items]),
            "same_answer": mean([s.same_answer for s in items]),
            "questions_compared": sum(1 for s in items if s.compared)}


# --------------------------------------------------------------------------- summary


@dataclass(frozen=True)
class RobustnessSummary:
    """Every figure of one attack level (or set) over its paired questions."""

    questions: int
    rounds: int
    accuracy_clean: Optional[float]
    accuracy_attacked: Optional[float]
    pdr: Optional[float]
    pdr_why_none: str
    flips: Flips
    mcnemar: McNemarResult
    paired_test: Optional[PairedTestResult]
    """None when N = 1: the verdicts are 0/1 and McNemar already is the paired test."""

    def to_json_dict(self) -> dict[str, Any]:
        return {"questions": self.questions, "rounds": self.rounds,
                "accuracy_clean": self.accuracy_clean,
                "accuracy_attacked": self.accuracy_attacked,
                "accuracy_drop": (None if self.accuracy_clean is None
                                  or self.accuracy_attacked is None
                                  else self.accuracy_clean - self.accuracy_attacked),
                "pdr": self.pdr, "pdr_why_none": self.pdr_why_none,
                "flips": self.flips.to_json_dict(), "mcnemar": self.mcnemar.to_json_dict(),
                "paired_test": self.paired_test.to_json_dict() if self.paired_test else None}


def robustness_summary(pairs: Sequence[PairedOutcome]) -> RobustnessSummary:
    """Accuracy clean vs attacked, PDR, flips, McNemar and (N > 1) the Wilcoxon test."""
    if not pairs:
        raise MetricInputError("no paired questions to summarise: approve attacked items "
                               "and run them with their clean questions first.")
    rounds = {len(p.clean) for p in pairs}
    if len(rounds) != 1:
        raise MetricInputError(f"all pairs need the same number of rounds, got {sorted(rounds)}.")
    n = rounds.pop()
    acc_clean = accuracy(p.clean for p in pairs)
    acc_attacked = accuracy(p.attacked for p in pairs)
    pdr, why = performance_drop_rate(acc_clean, acc_attacked)
    flips = find_flips(pairs)
    mcnemar = mcnemar_exact(len(flips.right_to_wrong), len(flips.wrong_to_right))
    paired = (paired_rate_test([p.clean_rate for p in pairs], [p.attacked_rate for p in pairs])
              if n > 1 else None)
    return RobustnessSummary(len(pairs), n, acc_clean, acc_attacked, pdr, why, flips,
                             mcnemar, paired)
