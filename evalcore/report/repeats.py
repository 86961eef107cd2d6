"""The repeated-answers part of a stability report: answer groups, semantic entropy,
G-Pass@k / mG-Pass@k and, when a re-judging pass exists, judge flicker apart from model
flicker. Everything comes from the rounds the run stored: no model call.

`RepeatRounds` collects a question's rounds while `stability_report` streams them and,
once the question's last round has passed, `settle` keeps its answer groups (and judge
flicker) and lets its replies go: a million calls' replies never sit in memory together.
`add_repeats` writes the figures into the report's `stability_results` and `summary`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

from evalcore.dataset.language import detect_language
from evalcore.dataset.records import Question
from evalcore.metrics.consistency import answer_key
from evalcore.metrics.repeats import (
    _cosine,
    accuracy_by_entropy,
    group_answers,
    groups_entropy,
    groups_line,
    judge_noise,
    k_values,
    merge_groups,
    question_flicker,
    question_g_pass,
    run_g_pass,
)
from evalcore.metrics.stability import StabilitySummary
from evalcore.prompt.render import option_name
from evalcore.scorers import rules, rules_choice, rules_labels
from evalcore.scorers.meaning import MEANING_COSINE, offline_same, pair_stage
from evalcore.scorers.text import embed
from evalcore.values import validated

EXTRACTING_TASKS = frozenset({"choice", "math", "sentiment", "multi_tf"})
"""Task types whose rules scorer extracts an answer (a choice, a number, a label, a list):
their replies are grouped by it; other tasks' by their normalised text."""


@dataclass(slots=True)
class RepeatRounds:
    """One question's rounds, in round order (None where the round is missing); once
    settled only its groups and flicker (a run keeps one of these per question)."""

    item_id: int
    task_type: str
    has_reference: bool
    question: Any
    """The `Question` the extractors read choices and the reference from."""
    replies: list[str | None] | None
    extracted: list[str | None] | None
    verdicts: list[bool | None] | None
    """The rounds' replies, extracted answers and verdicts; None once settled."""
    groups: list[Any] | None = None
    """The answer groups (`metrics.repeats.group_answers`), once settled."""
    flicker: Any = None
    """The judge flicker (`metrics.repeats.question_flicker`), once settled with a
    re-judging pass."""

    @classmethod
    def empty(cls, row: dict[str, Any], rounds: int) -> "RepeatRounds":
        """From the first `iter_verdicts` row of an item."""
        reference = row["reference"]
        question = validated(Question, {  # a stored row: checked, not trusted
            "idx": row["item_idx"], "question": row["question"] or "", "reference": reference,
            "choices": list(row.get("choices") or []),
            "language": detect_language(row["question"] or ""),  # the prompt's option names
            "task_type": row["task_type"] if row["task_type"] in EXTRACTING_TASKS else "open"})
        return cls(row["item_id"], row["task_type"], bool(reference and str(reference).strip()),
                   question, [None] * rounds, [None] * rounds, [None] * rounds)

    def _rounds(self) -> tuple[list[str | None], list[str | None], list[bool | None]]:
        if self.replies is None or self.extracted is None or self.verdicts is None:
            raise ValueError(f"item {self.item_id}: its rounds were settled and let go")
        return self.replies, self.extracted, self.verdicts

    def add(self, row: dict[str, Any]) -> None:
        """One merged (item, round) row of `iter_verdicts`."""
        replies, extracted, verdicts = self._rounds()
        pos = row["round"] - 1
        replies[pos] = row["answer"]
        if row["answer"] is not None and self.task_type in EXTRACTING_TASKS:
            stored = row.get("extracted")  # the rules scorer's, when the run stored one
            extracted[pos] = (self._option(stored) if self.task_type == "choice" else stored) \
                if stored is not None else extract_answer(row["answer"], self.question)
        verdicts[pos] = None if row["errored"] or row["correct"] is None \
            else bool(row["correct"])

    def settle(self, rejudged: dict[int, list[bool | None]] | None = None,
               key: Callable[[str], str] = answer_key) -> None:
        """Compute the question's answer groups (answers compared by `key`), and its judge
        flicker when `rejudged` (round index -> re-judgements; `rejudged_rounds`) is
        given, then drop its replies."""
        replies, extracted, verdicts = self._rounds()
        self.groups = group_answers(replies, verdicts,
                                    extracted if self.task_type in EXTRACTING_TASKS else None,
                                    key=key)
        if rejudged is not None:
            self.flicker = question_flicker(replies, verdicts, rejudged)
        self.replies = self.extracted = self.verdicts = self.question = None

    def _option(self, index: str) -> str:
        return option_label(index, self.question)


def option_label(index: str, question: Any) -> str:
    """A stored choice index as the prompt named that option ("1" -> "choice 1")."""
    return option_name(index, question.language) if index.isdigit() else index


def extract_answer(reply: str, question: Any) -> Optional[str]:
    """The answer the task's rules extractor reads in `reply` (None: none found): the
    number, the option letter, the sentiment label or the 0/1 list. Read again from the
    reply, so runs judged by a model (which store no extraction) group the same way."""
    kind = question.task_type
    if kind == "math":
        found = rules.extract_number(reply)
        return None if found is None else found.text
    if kind == "choice":
        index, _ = rules_choice.extract_choice(reply, question.choices, question.question)
        return None if index is None else option_label(str(index), question)
    if kind == "sentiment":
        return rules_labels.extract_sentiment(reply)[0]
    return rules_labels.multi_tf(reply, question).extracted


Meaning = Union[bool, str]
"""How open answers are grouped: False by their text; True (or "offline") by meaning
offline (lexical cues, then e5: `scorers.meaning.offline_same`); "judge:MODEL" by the
stored "same meaning?" verdicts of that judge model (`runner.meaning_judge`)."""


def parse_meaning(value: Meaning) -> tuple[str, Optional[str]]:
    """("text" | "offline" | "judge", judge model) of a `Meaning`; ValueError if unknown."""
    if value is False or value in ("", "text", None):
        return "text", None
    if value is True or value == "offline":
        return "offline", None
    if isinstance(value, str) and value.startswith("judge:") and value[6:].strip():
        return "judge", value[6:].strip()
    raise ValueError(f"unknown answer grouping {value!r} (use offline or judge:MODEL)")


def add_repeats(report: dict[str, Any], summary: StabilitySummary,
                rounds: dict[int, RepeatRounds], rejudge: Optional[dict[str, Any]],
                meaning: Meaning = False,
                verdicts: Optional[dict[str, Optional[bool]]] = None) -> None:
    """Write answer groups, entropy, G-Pass and (with `rejudge`, the latest pass with its
    per-answer detail) judge flicker into `report` in place. `meaning`: how open answers
    are grouped (`Meaning`); with a judge, `verdicts` are its stored ones (stage ->
    same?): pairs it has not judged yet stay apart and are counted. `rounds` is
    consumed: each question's groups are let go once written (emptied on return)."""
    results = report["stability_results"]
    ks = k_values(summary.n_rounds)
    if rejudge is not None and rejudge.get("degenerate"):
        # a judge that says the same for everything is not reading the answers: its
        # verdicts would split the spread by its bias, so judge noise is not measured
        report["summary"]["judge_noise_withheld"] = {
            "judge": rejudge["judge"], "reasons": list(rejudge["degenerate"])}
        rejudge = None
    by_item = rejudged_rounds(rejudge, summary.n_rounds)
    for r in rounds.values():  # those `stability_report` has not settled as it streamed
        if r.groups is None:
            r.settle(None if by_item is None else by_item.get(r.item_id, {}))
    entropies: list[tuple[Any, float]] = []
    banded: list[tuple[float, float]] = []
    flickers = []
    grouped = {key: r.groups or [] for key, r in rounds.items()}
    how, judge = parse_meaning(meaning)
    if how == "offline":
        grouped = _by_meaning(grouped, rounds)
        report["summary"]["answer_grouping"] = (
            "open answers by meaning offline (yes/no, negation, number and swapped-word "
            f"cues, then e5 cosine >= {MEANING_COSINE})")
    elif how == "judge":
        grouped, figures = _by_judge(grouped, rounds, str(judge), verdicts or {})
        report["summary"]["answer_grouping"] = f"open answers by meaning, judged by {judge}"
        report["summary"]["meaning_judge"] = figures
    else:
        report["summary"]["answer_grouping"] = ("by extracted answer, open answers by "
                                                "normalised text")
    # (trials, right) -> G-Pass figures: one object per pair, shared by the questions
    # with those counts (a few hundred pairs, not one copy per question; read, not written)
    g_pass: dict[tuple[int, int], tuple[dict[str, Any], dict[str, Any]]] = {}
    for q in summary.questions:
        entry = results[str(q.key)]
        r = rounds.pop(q.key, None)
        if r is None:
            continue
        groups = grouped.pop(q.key)  # with `r`, the last reference to its group objects
        entry["answer_groups"] = [g.to_json_dict() for g in groups]
        entry["answers_line"] = groups_line(entry["answer_groups"])
        entropy = groups_entropy(groups)
        entry["semantic_entropy"] = entropy
        if entropy is not None:
            entropies.append((q.key, entropy))
            if r.has_reference and q.success_rate is not None:
                banded.append((entropy, q.success_rate))
        pair = (q.trials, q.correct_count)
        if pair not in g_pass:
            g_pass[pair] = question_g_pass(*pair, ks) if q.trials else ({}, {})
        entry["g_pass_at_k"], entry["mg_pass_at_k"] = g_pass[pair]
        if rejudge is not None:
            flicker = r.flicker
            entry["judge_flicker"] = flicker.to_json_dict()
            flickers.append(flicker)
    rounds.clear()
    g_run, mg_run = run_g_pass([(q.trials, q.correct_count) for q in summary.questions], ks)
    out = report["summary"]
    out["g_pass_at_k"] = g_run
    out["mg_pass_at_k"] = mg_run
    out["semantic_entropy_mean"] = (math.fsum(h for _, h in entropies) / len(entropies)
                                    if entropies else None)
    out["entropy_ranking"] = [str(k) for k, _ in sorted(entropies, key=lambda e: -e[1])]
    out["accuracy_by_entropy"] = accuracy_by_entropy(banded)
    if rejudge is not None:
        out["judge_noise"] = {**judge_noise(flickers), "judge": rejudge["judge"],
                              "passes": rejudge["passes"], "answers": rejudge["answers"]}


def _by_judge(grouped: dict[int, list[Any]], rounds: dict[int, RepeatRounds], judge: str,
              verdicts: dict[str, Optional[bool]]) -> tuple[dict[int, list[Any]], dict[str, Any]]:
    """Open questions' text groups merged by the judge's stored verdicts, replaying the
    job's merge; a pair not judged yet keeps its groups apart and is counted."""
    missing = used = failed = 0
    out = dict(grouped)

    def same(kept: Any, g: Any) -> bool:
        nonlocal missing, used, failed
        stage = pair_stage(judge, kept.answer, g.answer)
        if stage not in verdicts:
            missing += 1
            return False
        used += 1
        failed += verdicts[stage] is None
        return bool(verdicts[stage])

    for k, r in rounds.items():
        if r.task_type not in EXTRACTING_TASKS and \
                sum(g.answer is not None for g in grouped[k]) > 1:
            out[k] = merge_groups(grouped[k], same)
    return out, {"judge": judge, "verdicts_used": used, "unreadable_or_failed": failed,
                 "pairs_not_judged": missing}


def _by_meaning(grouped: dict[int, list[Any]], rounds: dict[int, RepeatRounds]
                ) -> dict[int, list[Any]]:
    """Open questions' text groups merged offline: lexical cues, then the e5 cosine of
    their example replies (all embedded in one call; repeated texts once, and from the
    e5 vector store)."""
    open_keys = [k for k, r in rounds.items() if r.task_type not in EXTRACTING_TASKS
                 and sum(g.answer is not None for g in grouped[k]) > 1]
    texts = [g.example for k in open_keys for g in grouped[k] if g.answer is not None]
    if not texts:
        return grouped
    vectors = dict(zip(texts, embed(texts).tolist()))
    out = dict(grouped)
    for k in open_keys:
        out[k] = merge_groups(grouped[k], lambda kept, g: offline_same(
            kept.example, g.example, _cosine(vectors[kept.example], vectors[g.example]))[0])
    return out


def rejudged_rounds(rejudge: dict[str, Any] | None, n_rounds: int
                    ) -> dict[int, dict[int, list[bool | None]]] | None:
    """item id -> round index -> re-judgements of the latest re-judging pass (with its
    `detail`); None without a pass or when its judge is degenerate (judge noise is then
    not measured, see `add_repeats`)."""
    if rejudge is None or rejudge.get("degenerate"):
        return None
    by_item: dict[int, dict[int, list[bool | None]]] = {}
    for d in rejudge.get("detail", []):
        if 1 <= d["round"] <= n_rounds:
            by_item.setdefault(d["item_id"], {})[d["round"] - 1] = list(d["verdicts"])
    return by_item


def top_entropy(report: dict[str, Any], limit: int = 10) -> list[tuple[str, float, str]]:
    """(item, entropy, answers line) of the `limit` questions with the most spread answers."""
    results = report["stability_results"]
    ranking: Sequence[str] = report["summary"].get("entropy_ranking", [])
    return [(key, results[key]["semantic_entropy"], results[key]["answers_line"])
            for key in ranking[:limit]]


def _fmt(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def judge_noise_line(noise: dict[str, Any]) -> str:
    """One sentence on the judge's part of the verdicts' spread."""
    share = noise["judge_share_of_spread"]
    head = ("no verdict spread to split" if share is None
            else f"{share:.1%} of the verdicts' spread across rounds is the judge's")
    return (f"{head}; {noise['flicker_answers']} answers judged both right and wrong "
            f"(in {noise['questions_with_judge_flicker']} questions), re-judged by "
            f"{noise['judge']} x{noise['passes']}")


def withheld_line(withheld: dict[str, Any]) -> str:
    """Why judge noise is not measured: the re-judging judge is degenerate."""
    return (f"not measured: the re-judging judge {withheld['judge']} is degenerate "
            f"({'; '.join(withheld['reasons'])}); re-judge with another judge model")


def grouping_line(summary: dict[str, Any]) -> str:
    """How answers were grouped, with a meaning judge's verdicts counted (CLI and page)."""
    grouping = summary.get("answer_grouping") or ""
    judged = summary.get("meaning_judge")
    if grouping and judged:
        grouping += (f" ({judged['verdicts_used']} verdicts, {judged['unreadable_or_failed']} "
                     f"unreadable or failed, {judged['pairs_not_judged']} pairs not judged yet)")
    return grouping


def repeats_lines(report: dict[str, Any], top: int = 5) -> list[str]:
    """The CLI's lines on repeated answers: G-Pass / mG-Pass at the largest k, entropy,
    the most spread questions with their answer groups, judge noise."""
    summary = report["summary"]
    if "g_pass_at_k" not in summary:
        return []
    lines = []
    ks = list(summary["g_pass_at_k"])
    k = ks[-1]
    taus = ", ".join(f"tau {t} {_fmt(v)}" for t, v in summary["g_pass_at_k"][k].items())
    mg = ", ".join(f"k={kk} {_fmt(v)}" for kk, v in summary["mg_pass_at_k"].items())
    lines.append(f"G-Pass@{k} (at least ceil(tau*k) of k rounds right): {taus}")
    if mg:
        lines.append(f"mG-Pass@k (mean G-Pass over tau in (0.5, 1]): {mg}")
    lines.append(f"semantic entropy: mean {_fmt(summary['semantic_entropy_mean'])} nats "
                 "(0 = every round gave one answer)")
    grouping = grouping_line(summary)
    if grouping:
        lines.append(f"answer grouping: {grouping}")
    for key, entropy, line in top_entropy(report, top):
        if entropy:
            lines.append(f"  #{key}: {entropy:.3f} nats, {line}")
    bands = [b for b in summary.get("accuracy_by_entropy", []) if b["questions"]]
    if bands:
        lines.append("accuracy by entropy band: " + ", ".join(
            f"{b['band']}: {_fmt(b['accuracy'])} ({b['questions']} q)" for b in bands))
    if summary.get("judge_noise"):
        lines.append("judge noise: " + judge_noise_line(summary["judge_noise"]))
    if summary.get("judge_noise_withheld"):
        lines.append("judge noise: " + withheld_line(summary["judge_noise_withheld"]))
    return lines

