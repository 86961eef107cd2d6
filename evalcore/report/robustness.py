"""A stored robustness run as a report: accuracy clean vs attacked per level, PDR, flips,
McNemar, the paired test, answer similarity and the most fragile questions.

`intervals` (per level, per set and over every pair) holds accuracy clean and attacked
with their 95% intervals and the paired difference attacked minus clean (`diff`,
`diff_se`, `diff_ci`, `n`, `moved`), clustered by clean question
(`metrics.robustness_intervals`), and the same in words.

The pairs come from the run's spec (`extra["pairs"]`, frozen at creation); verdicts from
the run's result (`run_figures.load_outcomes`, the counts its headline figures come
from), answers from its calls. A round's verdict is its judge call when the run had a
judge model, else the answer call's rules score; a round without one (a failed call, a
round not asked) counts as wrong. Texts
(original, attacked, pairs, flags) are read from the attack items at report time;
`edited_after_run` marks items whose attacked text a reviewer changed after the run, and
`asked_attacked` is the text as approved when the run was created.
"""
from __future__ import annotations

import difflib
import re
from collections import defaultdict
from typing import Any, Optional

from sqlalchemy.engine import Engine

from evalcore.errors import RunError
from evalcore.metrics.robustness import (accuracy, answer_similarity, mean_similarity,
                                         PairedOutcome, robustness_summary)
from evalcore.metrics.robustness_intervals import clean_vs_attacked, drop_words
from evalcore.perturb.review import option_changes
from evalcore.report.missed_answers import missed_answers
from evalcore.report.run_figures import load_outcomes
from evalcore.report.variants import variant_figures
from evalcore.scorers.registry import score_answer
from evalcore.scorers.rules import unparsed_summary
from evalcore.scorers.text import detect_language
from evalcore.store import call_usage, queries, run_items
from evalcore.store.attack_sets import items_and_sets

FRAGILE_LIMIT = 20


def text_diff(original: str, attacked: str) -> list[list[str]]:
    """[[op, text], ...] with op 'equal', 'delete' or 'insert': characters for Chinese,
    words (with their spaces) otherwise."""
    def split(text: str) -> list[str]:
        if detect_language(original + attacked) == "zh":
            return list(text)
        return [t for t in re.split(r"(\s+)", text) if t]

    a, b = split(original), split(attacked)
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    # a lone space kept between two changed words reads as noise: fold it into the change
    spans: list[tuple[bool, list[str], list[str]]] = []
    for n, (tag, i1, i2, j1, j2) in enumerate(ops):
        equal = tag == "equal" and not (
            0 < n < len(ops) - 1 and not "".join(a[i1:i2]).strip())
        if spans and not equal and not spans[-1][0]:
            spans[-1][1].extend(a[i1:i2])
            spans[-1][2].extend(b[j1:j2])
        else:
            spans.append((equal, list(a[i1:i2]), list(b[j1:j2])))
    out: list[list[str]] = []
    for equal, old, new in spans:
        if equal:
            out.append(["equal", "".join(old)])
            continue
        if old:
            out.append(["delete", "".join(old)])
        if new:
            out.append(["insert", "".join(new)])
    return out


def _answers(engine: Engine, run: Any, reasons: Optional[list] = None,
             answered: Optional[list] = None) -> dict[int, list]:
    """{item_id: [answer per round]} from the stored calls; the rules' reason of each
    answered round is appended to `reasons`, and (item_id, answer, correct) to `answered`
    (rules runs). The verdicts are the run's result's (`run_figures.load_outcomes`)."""
    judged = run.judge != "rules"
    answers: dict[int, list] = defaultdict(lambda: [None] * run.rounds)
    for call in queries.iter_calls(engine, run.id, stage="answer"):
        if not 1 <= call.round <= run.rounds:
            continue
        answers[call.item_id][call.round - 1] = call.answer
        if reasons is not None and not judged and call.answer is not None:
            reasons.append(call.reason)
        if answered is not None and not judged and call.answer is not None:
            answered.append((call.item_id, call.answer, call.correct))
    return answers


def robustness_report(engine: Engine, run_id: int, *, embeddings: bool = False,
                      fragile_limit: int = FRAGILE_LIMIT) -> dict[str, Any]:
    """The robustness JSON of a run (see the module docstring); `embeddings` adds the e5
    cosine between clean and attacked answers (slower: a model call per answer)."""
    run = queries.get_run(engine, run_id)
    extra = (run.config.get("spec") or {}).get("extra") or {}
    pairs = extra.get("pairs")
    if run.kind != "robustness" or not pairs:
        raise RunError(f"run {run_id} is a {run.kind!r} run without attack pairs; open it in "
                       "the results for its kind, or start a robustness run")
    questions = run_items.run_questions(engine, run_id)
    reasons: list = []
    answered: list = []
    answers = _answers(engine, run, reasons, answered)
    # per item its verdicts, counted once (a finished run's stored counts): the same
    # counts as the headline figures compare, the leaderboard and the gate read; a round
    # without a verdict counts as wrong here (`metrics.robustness.success_rate`)
    verdicts = load_outcomes(engine, run_id).verdicts
    unparsed = unparsed_summary(reasons)
    missed = missed_answers(
        {"answer": answer, "correct": correct, "reference": questions[item_id].reference,
         "task_type": questions[item_id].task_type}
        for item_id, answer, correct in answered if item_id in questions)
    attack_items, sets = items_and_sets(engine, list(extra.get("attack_set_ids") or []))

    def verdict_list(item_id: int) -> list:
        return list(verdicts[item_id]) if item_id in verdicts else [None] * run.rounds

    rows: list[dict[str, Any]] = []
    by_level: dict[str, list[PairedOutcome]] = defaultdict(list)
    by_set: dict[int, list[PairedOutcome]] = defaultdict(list)
    sims_by_level: dict[str, list] = defaultdict(list)
    sims_by_set: dict[int, list] = defaultdict(list)
    for attack_item_id, clean_id, attacked_id, set_id, level, *asked in pairs:
        outcome = PairedOutcome(attack_item_id, verdict_list(clean_id), verdict_list(attacked_id))
        by_level[level].append(outcome)
        by_set[set_id].append(outcome)
        question = questions[clean_id]

        def extract(text: str, q: Any = question) -> Optional[str]:
            return score_answer(text, q).extracted

        clean_answers = list(answers.get(clean_id) or [None] * run.rounds)
        attacked_answers = list(answers.get(attacked_id) or [None] * run.rounds)
        sim = answer_similarity(clean_answers, attacked_answers, extract=extract,
                                embeddings=embeddings)
        sims_by_level[level].append(sim)
        sims_by_set[set_id].append(sim)
        item = attack_items.get(attack_item_id)
        original = item.original if item else question.question
        attacked = item.attacked if item else questions[attacked_id].question
        edited_after = bool(item and item.edited and item.reviewed_at
                            and item.reviewed_at.replace(tzinfo=None)
                            > run.created_at.replace(tzinfo=None))
        rows.append({
            "attack_item_id": attack_item_id, "attack_set_id": set_id, "level": level,
            "item_idx": question.idx, "question": question.idx + 1,
            "clean_item_id": clean_id, "attacked_item_id": attacked_id,
            "original": original, "attacked": attacked,
            "asked_attacked": asked[0] if asked else questions[attacked_id].question,
            "reference": question.reference, "task_type": question.task_type,
            "pairs": item.pairs if item else [], "flags": item.flags if item else [],
            "options": [list(o) for o in option_changes(list(question.choices or []), list(
                questions[attacked_id].choices or []))],  # [index, original, attacked]
            "question_similarity": item.similarity if item else None,
            "edited_after_run": edited_after,
            "clean_correct": sum(1 for v in outcome.clean if v), "attacked_correct":
            sum(1 for v in outcome.attacked if v), "clean_rate": outcome.clean_rate,
            "attacked_rate": outcome.attacked_rate, "drop": outcome.drop, "flip": outcome.flip,
            "clean_answers": clean_answers, "attacked_answers": attacked_answers,
            "answer_similarity": sim.to_json_dict()})

    clean_of = {p[0]: p[1] for p in pairs}  # attack item -> its clean question (the cluster)

    def intervals(outcomes: list[PairedOutcome]) -> dict[str, Any]:
        figures = clean_vs_attacked(outcomes, [clean_of[o.key] for o in outcomes])
        return {**figures, "words": drop_words(figures["paired"])}

    def block(outcomes: list[PairedOutcome], sims: list) -> dict[str, Any]:
        data = robustness_summary(outcomes).to_json_dict()
        data["consistency"] = mean_similarity(sims)
        data["intervals"] = intervals(outcomes)
        return data

    levels = {}
    for level in sorted(by_level, key=_level_order):
        levels[level] = {"attack_set_ids": sorted({p[3] for p in pairs if p[4] == level}),
                         **block(by_level[level], sims_by_level[level])}
    per_set = {}
    for set_id, outcomes in by_set.items():
        attack_set = sets.get(set_id)
        per_set[str(set_id)] = {"name": attack_set.name if attack_set else str(set_id),
                                "level": attack_set.level if attack_set else None,
                                **block(outcomes, sims_by_set[set_id])}
    clean_ids = list(dict.fromkeys(p[1] for p in pairs))
    fragile = sorted((r for r in rows if r["drop"] > 0 or r["flip"] == "right_to_wrong"),
                     key=lambda r: (-r["drop"], r["flip"] != "right_to_wrong", r["item_idx"]))
    stats = call_usage.call_stats(engine, run_id)
    return {
        "run_id": run.id, "status": run.status, "kind": run.kind, "model": run.model,
        "judge": run.judge, "rounds": run.rounds, "dataset_id": run.dataset_id,
        "attack_set_ids": extra.get("attack_set_ids") or [],
        "clean_questions": len(clean_ids), "pairs": len(pairs),
        "nothing_to_attack": _nothing_to_attack(attack_items.values()),
        "accuracy_clean_all": accuracy(verdict_list(i) for i in clean_ids),
        "intervals": intervals([o for outcomes in by_level.values() for o in outcomes]),
        "levels": levels, "sets": per_set,
        "unparsed": {k: v for k, v in unparsed.items() if k != "warning"},
        "missed_answers": {k: v for k, v in missed.items() if k != "warning"},
        "warnings": [w for w in (unparsed["warning"], missed["warning"]) if w]
        + [f"{level}: {data['warning']}" for level, data in levels.items() if data["warning"]],
        "flips": {
            "right_to_wrong": [_flip_row(r) for r in rows if r["flip"] == "right_to_wrong"],
            "wrong_to_right": [_flip_row(r) for r in rows if r["flip"] == "wrong_to_right"]},
        "fragile": [{**r, "diff": text_diff(r["original"], r["attacked"])}
                    for r in fragile[:fragile_limit]],
        "questions": [{k: r[k] for k in ("attack_item_id", "attack_set_id", "level", "item_idx",
                                         "question", "clean_rate", "attacked_rate", "drop", "flip")}
                      for r in rows],
        "timing": {"calls": stats["calls"], "errors": stats["errors"], "retries": run.retries,
                   "tokens": stats["tokens"], "mean_latency_ms": stats["mean_latency_ms"]},
        "variants": variant_figures(engine, run_id),  # the clean items' option orders ...
    }


def _nothing_to_attack(items: Any) -> dict[str, int]:
    """How many items of the run's sets the attack could not change (flag `unchanged`:
    every word protected or without a safe synonym), of how many. They are never approved
    by `approve --unflagged`, so they stay out of the PDR; the count says how much of the
    dataset the PDR speaks for."""
    items = list(items)
    return {"items": sum(1 for a in items if "unchanged" in (a.flags or [])),
            "of": len(items)}


def _flip_row(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in ("attack_item_id", "level", "item_idx", "question", "original",
                                "attacked",
                                "reference", "clean_answers", "attacked_answers",
                                "clean_rate", "attacked_rate")}


def _level_order(level: str) -> tuple[int, str]:
    order = {"char": 0, "word": 1, "sentence": 2}
    return order.get(level, 9), level
