"""What repeated answers reveal: G-Pass@k, answers grouped, semantic entropy, judge flicker.

Pure functions over counts, answers and verdicts (standard library only), computed from
the rounds a stability run already stored: none of them costs a model call.

- G-Pass@k_tau (Liu et al. 2024, OpenCompass "Are your LLMs capable of stable
  reasoning?"): the chance that at least ceil(tau*k) of k rounds drawn without
  replacement from the n (c right) are right, a hypergeometric tail
  `sum_{j=ceil(tau k)}^{c} C(c,j) C(n-c,k-j) / C(n,k)`. tau -> 0 gives pass@k, tau = 1
  gives pass^k. mG-Pass@k is its mean over tau in (0.5, 1]:
  `2/k * sum_{i=ceil(k/2)+1}^{k} G-Pass@k_{i/k}` (the paper's formula; for k = 1 it is an
  empty sum, so mG-Pass starts at k = 2). Exact integers and one final division.
- Answer groups: a question's replies grouped by the answer they give (the extracted
  choice or number where the task has an extractor, else the normalised text), each with
  its count, verdicts and one example reply, biggest group first.
- Semantic entropy (Kuhn et al. 2023, discrete form): `-sum p_i ln p_i` over the groups'
  shares of the rounds that gave an answer, in nats; 0 when every round gave one answer.
  Replies where the extractor found no answer are a group of their own in the table but
  stay out of the entropy (they are not one answer repeated).
- Judge flicker: a round's verdict moves because the model said something else (model
  flicker) or because the judge read the same answer differently (judge flicker). Each
  distinct answer text's verdict is the majority of all its judgements (the run's own
  verdicts of every round that gave that text, plus the re-judgements); what remains of
  the question's spread of verdicts with those majority verdicts is the model's.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable, Mapping, Optional, Sequence

from evalcore.metrics.consistency import answer_key
from evalcore.metrics.stability import MetricInputError

TAUS: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0)
"""The tau values reported (keys "0.25", "0.5", "0.75", "1.0")."""
ENTROPY_BANDS: tuple[tuple[str, float, float], ...] = (
    ("0 (one answer)", 0.0, 0.0),
    ("0-0.5", 0.0, 0.5),
    ("0.5-1.0", 0.5, 1.0),
    (">1.0", 1.0, math.inf),
)
"""(label, low, high]: band 0 holds exactly 0; the others are open below, closed above."""


# --------------------------------------------------------------------------- G-Pass@k


def _check(n: int, c: int, k: int) -> None:
    if not (n >= 1 and 0 <= c <= n and 1 <= k <= n):
        raise MetricInputError(f"G-Pass@k needs 1 <= k <= n and 0 <= c <= n; got n={n} c={c} k={k}.")


def threshold(tau: float, k: int) -> int:
    """ceil(tau * k) computed on the decimal tau ("0.1" is 1/10, not its binary neighbour)."""
    if not 0 <= tau <= 1:
        raise MetricInputError(f"tau must be in [0, 1], got {tau}.")
    return math.ceil(Fraction(repr(float(tau))) * k)


def g_pass_count(n: int, c: int, k: int, m: int) -> float:
    """The chance that at least `m` of `k` rounds drawn from `n` (c right) are right."""
    _check(n, c, k)
    m = max(m, 0)
    top = sum(math.comb(c, j) * math.comb(n - c, k - j) for j in range(m, min(c, k) + 1))
    return top / math.comb(n, k)


def g_pass_at_k(n: int, c: int, k: int, tau: float) -> float:
    """G-Pass@k_tau: at least ceil(tau*k) of k drawn rounds right (at least 1, as in
    OpenCompass: tau = 0 is pass@k, not a certainty)."""
    return g_pass_count(n, c, k, max(threshold(tau, k), 1))


def mg_pass_at_k(n: int, c: int, k: int) -> float:
    """mG-Pass@k = 2/k * sum_{i=ceil(k/2)+1}^{k} G-Pass@k_{i/k} (k >= 2), as OpenCompass
    computes it. The sum has floor(k/2) terms, so for an odd k even an always-right
    question scores 2*floor(k/2)/k (k = 3: 2/3); compare runs at the same k."""
    _check(n, c, k)
    if k < 2:
        raise MetricInputError("mG-Pass@k needs k >= 2 (for k = 1 its sum is empty).")
    total = sum(g_pass_count(n, c, k, i) for i in range(math.ceil(k / 2) + 1, k + 1))
    return 2 * total / k


def k_values(n_rounds: int) -> list[int]:
    """The k reported for a run of N rounds: 1, 2, 4, 8, ... up to N, and N itself."""
    ks = [k for k in (2 ** e for e in range(8)) if k <= n_rounds]
    return ks if ks[-1] == n_rounds else ks + [n_rounds]


def question_g_pass(n: int, c: int, ks: Sequence[int]) -> tuple[dict[str, dict[str, float]],
                                                                  dict[str, float]]:
    """({k: {tau: G-Pass}}, {k: mG-Pass}) of one question for the ks <= n."""
    g, mg = _question_g_pass(n, c, tuple(ks))
    return {k: dict(v) for k, v in g.items()}, dict(mg)


@lru_cache(maxsize=4096)
def _question_g_pass(n: int, c: int, ks: tuple[int, ...]) -> tuple[dict[str, dict[str, float]],
                                                                     dict[str, float]]:
    """Cached: a run's questions share few (n, c) pairs (at most (N+1)(N+2)/2)."""
    g = {str(k): {str(t): g_pass_at_k(n, c, k, t) for t in TAUS} for k in ks if k <= n}
    mg = {str(k): mg_pass_at_k(n, c, k) for k in ks if 2 <= k <= n}
    return g, mg


def run_g_pass(pairs: Sequence[tuple[int, int]], ks: Sequence[int]
               ) -> tuple[dict[str, dict[str, Optional[float]]], dict[str, Optional[float]]]:
    """Over questions given as (trials, correct): G-Pass and mG-Pass averaged over the
    questions with at least k trials (None for a k that none reaches), like pass@k."""
    groups = Counter(p for p in pairs if p[0] >= 1)
    g: dict[str, dict[str, Optional[float]]] = {}
    mg: dict[str, Optional[float]] = {}
    for k in ks:
        eligible = {tc: q for tc, q in groups.items() if tc[0] >= k}
        g[str(k)] = {str(tau): _mean(eligible, lambda t, c, k=k, tau=tau:
                                     g_pass_at_k(t, c, k, tau)) for tau in TAUS}
        if k >= 2:
            mg[str(k)] = _mean(eligible, lambda t, c, k=k: mg_pass_at_k(t, c, k))
    return g, mg


def _mean(eligible: Mapping[tuple[int, int], int], fn: Callable[[int, int], float]
          ) -> Optional[float]:
    """Mean of fn(trials, correct) over questions counted by (trials, correct)."""
    total = sum(eligible.values())
    if not total:
        return None
    return math.fsum(q * fn(t, c) for (t, c), q in eligible.items()) / total


# --------------------------------------------------------------------------- answer groups


@dataclass(slots=True)
class AnswerGroup:
    """Rounds that gave one answer: how many, their verdicts, one reply as it came.
    (Slots, and no `forms` for extracted answers: a run keeps every question's groups.)"""

    answer: Optional[str]
    """The extracted answer as first read, or the normalised text of an open reply;
    None: the extractor found no answer in these replies."""
    count: int = 0
    correct: int = 0
    """Rounds of this group judged right."""
    wrong: int = 0
    """Rounds judged wrong (count - correct - wrong have no verdict)."""
    example: str = ""
    first: int = 0
    forms: Counter[str] | None = field(default=None, repr=False)
    """Open replies: each reply as given (stripped) and how often; `label` shows one
    (None for extracted answers)."""

    @property
    def label(self) -> Optional[str]:
        """What the group is shown as: the most frequent reply as given (ties: first seen)
        for open replies, whose `answer` is a normalised key ('if i don t have ...') fit
        for grouping only; the extracted answer as first read otherwise."""
        if self.answer is None or not self.forms:
            return self.answer
        top = max(self.forms.values())
        return next(form for form, n in self.forms.items() if n == top)

    def to_json_dict(self) -> dict[str, Any]:
        return {"answer": self.answer, "label": self.label, "count": self.count,
                "correct": self.correct, "wrong": self.wrong, "example": self.example}


def group_answers(replies: Sequence[Optional[str]], verdicts: Sequence[Optional[bool]],
                  extracted: Optional[Sequence[Optional[str]]] = None,
                  key: Callable[[str], str] = answer_key) -> list[AnswerGroup]:
    """A question's replies grouped by answer, biggest group first (ties: first seen).

    `replies[r]` is round r's reply (None: the call failed, left out); `extracted`, when
    the task has an extractor, the answer found in it (None: no answer found, grouped
    as no answer); without it, the reply's normalised text is the answer.
    """
    if extracted is not None and len(extracted) != len(replies):
        raise MetricInputError("extracted answers and replies differ in length.")
    if len(verdicts) != len(replies):
        raise MetricInputError("verdicts and replies differ in length.")
    groups: dict[Optional[str], AnswerGroup] = {}
    for pos, reply in enumerate(replies):
        if reply is None:
            continue
        raw = extracted[pos] if extracted is not None else reply
        name = None if raw is None or not str(raw).strip() else key(str(raw))
        group = groups.get(name)
        if group is None:  # an extracted answer shown as first read ("A", "1,200")
            label = name if extracted is None or raw is None else str(raw).strip()
            group = groups[name] = AnswerGroup(answer=label, example=reply, first=pos)
        if extracted is None and name is not None:
            if group.forms is None:
                group.forms = Counter()
            group.forms[reply.strip()] += 1
        group.count += 1
        verdict = verdicts[pos]
        if verdict is not None:
            group.correct += bool(verdict)
            group.wrong += not bool(verdict)
    return sorted(groups.values(), key=lambda g: (-g.count, g.first))


def semantic_entropy(counts: Sequence[int]) -> Optional[float]:
    """-sum p ln p (nats) over the groups' shares; None when there is no answer."""
    total = sum(counts)
    if total <= 0:
        return None
    return -math.fsum(c / total * math.log(c / total) for c in counts if c > 0) + 0.0


def groups_entropy(groups: Sequence[AnswerGroup]) -> Optional[float]:
    """Semantic entropy over the groups that hold an answer (no-answer replies left out)."""
    return semantic_entropy([g.count for g in groups if g.answer is not None])


def groups_line(groups: Sequence[Mapping[str, Any]], limit: int = 4) -> str:
    """"3 answers: 6x '42', 3x '41', 1x no answer" (the biggest `limit` groups named)."""
    if not groups:
        return "no answer"
    named = sum(1 for g in groups if g["answer"] is not None)
    if not named:  # not "0 answers: 2x no answer"
        return f"no answer in {sum(int(g['count']) for g in groups)} rounds"
    parts = [f"{g['count']}x " + (repr(_short(g.get("label") or g["answer"]))
                                  if g["answer"] is not None else "no answer")
             for g in groups[:limit]]
    more = len(groups) - limit
    return (f"{named} answer{'s' if named != 1 else ''}: " + ", ".join(parts)
            + (f", +{more} more" if more > 0 else ""))


def _short(text: str, width: int = 30) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def entropy_band(value: float) -> str:
    """The label of the `ENTROPY_BANDS` band holding `value`."""
    for label, low, high in ENTROPY_BANDS:
        if (value == 0.0 and high == 0.0) or low < value <= high:
            return label
    raise MetricInputError(f"entropy {value} is negative.")


def accuracy_by_entropy(rows: Sequence[tuple[float, float]]) -> list[dict[str, Any]]:
    """Per entropy band: questions and their mean success rate, from (entropy, rate)."""
    out = []
    for label, _, _ in ENTROPY_BANDS:
        rates = [rate for h, rate in rows if entropy_band(h) == label]
        out.append({"band": label, "questions": len(rates),
                    "accuracy": math.fsum(rates) / len(rates) if rates else None})
    return out


# --------------------------------------------------------------------------- judge flicker


def majority(votes: Sequence[bool]) -> Optional[bool]:
    """True/False by strict majority; None on a tie or no vote."""
    right = sum(votes)
    wrong = len(votes) - right
    return None if right == wrong else right > wrong


def spread(verdicts: Sequence[float]) -> float:
    """Population variance of a question's verdicts (p(1-p) for 0/1 ones): 0 when every
    round agrees, 0.25 at a 50/50 split."""
    if not verdicts:
        return 0.0
    mean = math.fsum(verdicts) / len(verdicts)
    return math.fsum((v - mean) ** 2 for v in verdicts) / len(verdicts)


@dataclass
class Flicker:
    """One question's verdict spread split into the judge's part and the model's."""

    observed: float
    """Spread p(1-p) of the run's verdicts over the rounds with a verdict."""
    model: float
    """Spread when each round's verdict is its answer text's judges' majority (a tie
    counts 1/2: the judges cannot tell, and identical texts still agree)."""
    flicker_answers: list[dict[str, Any]] = field(default_factory=list)
    """Answer texts whose judgements disagree: text, rounds, right and wrong judgements."""

    @property
    def judge_share(self) -> Optional[float]:
        """Share of the observed spread that is the judge's (None: no spread)."""
        if self.observed <= 0:
            return None
        return min(1.0, max(0.0, (self.observed - self.model) / self.observed))

    def to_json_dict(self) -> dict[str, Any]:
        return {"observed_spread": self.observed, "model_spread": self.model,
                "judge_share": self.judge_share, "flicker_answers": self.flicker_answers}


def question_flicker(replies: Sequence[Optional[str]], verdicts: Sequence[Optional[bool]],
                     rejudged: Mapping[int, Sequence[Optional[bool]]],
                     key: Callable[[str], str] = answer_key) -> Flicker:
    """Split a question's verdict spread into judge and model flicker.

    `rejudged[r]`: round r's re-judgements (None: a failed one, left out). The same
    answer text in several rounds counts once: all its judgements are pooled.
    """
    votes: dict[str, list[bool]] = {}
    rounds: dict[str, list[int]] = {}
    texts: dict[int, str] = {}
    forms: dict[str, Counter[str]] = {}
    for r, (reply, verdict) in enumerate(zip(replies, verdicts)):
        if reply is None or verdict is None:
            continue
        text = key(reply)
        texts[r] = text
        forms.setdefault(text, Counter())[reply.strip()] += 1
        rounds.setdefault(text, []).append(r + 1)
        votes.setdefault(text, []).append(bool(verdict))
        votes[text].extend(bool(v) for v in rejudged.get(r, ()) if v is not None)
    own = [float(bool(verdicts[r])) for r in texts]
    denoised = []
    for text in texts.values():
        vote = majority(votes[text])
        denoised.append(0.5 if vote is None else float(vote))
    flickering = [{"answer": text, "label": forms[text].most_common(1)[0][0],
                   "rounds": rounds[text], "right": sum(v), "wrong": len(v) - sum(v)}
                  for text, v in votes.items() if 0 < sum(v) < len(v)]
    return Flicker(observed=spread(own), model=spread(denoised), flicker_answers=flickering)


def judge_noise(flickers: Sequence[Flicker]) -> dict[str, Any]:
    """Run-level judge noise: the share of all questions' verdict spread that is the
    judge's, and how many answer texts got disagreeing judgements."""
    observed = math.fsum(f.observed for f in flickers)
    model = math.fsum(f.model for f in flickers)
    answers = sum(len(f.flicker_answers) for f in flickers)
    return {"judge_share_of_spread": (min(1.0, max(0.0, (observed - model) / observed))
                                      if observed > 0 else None),
            "observed_spread": observed, "model_spread": model,
            "flicker_answers": answers,
            "questions_with_judge_flicker": sum(1 for f in flickers if f.flicker_answers)}


# --------------------------------------------------------------------------- by meaning

MEANING_THRESHOLD = 0.945
"""e5 cosine at or above which two open answers are one meaning. Calibrated on 40
labelled answer pairs (tests/metrics/meaning_pairs.json: 20 paraphrases, 20 different
answers on the same topic): 0.945 classifies 34 of 40 right (85%), the best of 0.800 to
0.990 in steps of 0.005. e5 puts any two related sentences near 0.9 and cannot see a
negation ("Yes, it is safe" / "No, it is not safe": 0.993), so meaning grouping is an
option, never the default: it can merge a contradiction. On a blind reviewer's fresh 40
pairs it is right on only half (docs/audits/): a hint.
e5 alone; reports group with lexical cues first (`scorers.meaning.offline_same`) or a
judge model's verdicts (`runner.meaning_judge`)."""


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = math.fsum(x * y for x, y in zip(a, b))
    norm = math.sqrt(math.fsum(x * x for x in a) * math.fsum(y * y for y in b))
    return dot / norm if norm else 0.0


def merge_by_meaning(groups: Sequence[AnswerGroup], vectors: Mapping[Optional[str], Sequence[float]],
                     threshold: float = MEANING_THRESHOLD) -> list[AnswerGroup]:
    """Groups whose answers' vectors have a cosine >= `threshold` merged (`merge_groups`).
    `vectors` maps a group's answer to its embedding."""
    return merge_groups(groups, lambda kept, g: _cosine(vectors[kept.answer],
                                                        vectors[g.answer]) >= threshold)


SameMeaning = Callable[[AnswerGroup, AnswerGroup], Optional[bool]]
"""same(kept group, new group): True when the two answers mean the same (None: unknown,
kept apart)."""


def merge_groups(groups: Sequence[AnswerGroup], same: SameMeaning) -> list[AnswerGroup]:
    """Groups that mean the same merged, biggest first, with few comparisons: each group,
    in order of size, is compared with the kept groups' representatives (biggest first)
    and joins the first that `same` says means the same; the kept group's answer and
    example stay. A group that joins none is kept as a new representative, so n groups
    of one meaning cost n - 1 comparisons and n different ones n(n-1)/2. The merge is
    transitive through the representatives. The no-answer group never merges."""
    kept: list[AnswerGroup] = []
    for g in sorted(groups, key=lambda g: (-g.count, g.first)):
        target = None
        if g.answer is not None:
            target = next((k for k in kept if k.answer is not None and same(k, g)), None)
        if target is None:
            kept.append(AnswerGroup(g.answer, g.count, g.correct, g.wrong, g.example, g.first,
                                    Counter(g.forms or ())))
        else:
            if target.forms is None:
                target.forms = Counter()
            target.forms.update(g.forms or ())
            target.count += g.count
            target.correct += g.correct
            target.wrong += g.wrong
    return sorted(kept, key=lambda g: (-g.count, g.first))


class _Unknown(Exception):
    def __init__(self, pair: tuple[AnswerGroup, AnswerGroup]) -> None:
        self.pair = pair


def next_comparison(groups: Sequence[AnswerGroup],
                    known: Callable[[AnswerGroup, AnswerGroup], Optional[bool]],
                    ) -> Optional[tuple[AnswerGroup, AnswerGroup]]:
    """The next (representative, group) pair `merge_groups` must compare that `known`
    cannot answer (it raises KeyError for an unknown pair), or None when the merge is
    decided: ask it, store the verdict, ask again. Each pair asked is one that the
    merge with every verdict in hand compares, so none is wasted."""
    def same(kept: AnswerGroup, g: AnswerGroup) -> Optional[bool]:
        try:
            return known(kept, g)
        except KeyError:
            raise _Unknown((kept, g)) from None

    try:
        merge_groups(groups, same)
    except _Unknown as unknown:
        return unknown.pair
    return None


def comparisons_bounds(distinct: int) -> tuple[int, int]:
    """(fewest, most) comparisons `merge_groups` makes over `distinct` answers: n - 1
    when all mean one thing, n(n-1)/2 when all differ."""
    return max(distinct - 1, 0), distinct * (distinct - 1) // 2
