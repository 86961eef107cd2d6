"""A stored stability run as the method reports it: verdict rows, the JSON, the CSV.

A round's verdict is its judge call when the run had a judge model, else the answer
call's rules score. A round whose answer call or judge call failed (after all retries)
has no verdict: the failure policy (`exclude`, the default, or `as_wrong`, the seed's
failure = 0; see `metrics.stability`) decides how it counts, and the JSON and CSV say
which was used and how many rounds it concerned. Everything streams from the store
ordered by item then round, so exports of 100,000-call runs do not sit in memory.

The per-question figures (distribution, classes, mean, std) come from the run's result
(`run_figures.load_outcomes`: a finished run's stored counts), the counts compare, the
leaderboard and the gate read; the rows walked here give only the text, the answers and
which rounds were asked.
"""
from __future__ import annotations

import functools
from itertools import groupby
from typing import Any, Iterator, Optional, TextIO

from sqlalchemy.engine import Engine

from evalcore.metrics.consistency import (
    Consistency,
    answer_consistency,
    answer_key,
    consistency_of,
)
from evalcore.metrics.stability import POLICY_RULES, FailurePolicy, round_json, summary_from_counts
from evalcore.report import repeats as repeats_figures
from evalcore.report.export import write_stability_csv
from evalcore.report.missed_answers import MissedTally
from evalcore.report.repeats import RepeatRounds
from evalcore.report.run_figures import (
    UNCERTAINTY_KEYS,
    RunOutcomes,
    accuracy_figures,
    load_outcomes,
)
from evalcore.report.variants import add_variants  # the run options' figures
from evalcore.runner.meaning_judge import stored_verdicts
from evalcore.runner.rejudge import rejudge_passes
from evalcore.scorers.rules import is_unread_reason, unparsed_counts
from evalcore.store import call_usage, queries, run_items


def iter_verdicts(engine: Engine, run_id: int) -> Iterator[dict[str, Any]]:
    """One dict per (item, round): item_id, item_idx, question, reference, task_type, round,
    answer, extracted, score, correct, reason, error, judge_error, errored (no verdict: the
    answer or the judge call failed); ordered by item then round."""
    rows = queries.iter_call_rows(engine, run_id)
    for _, unit in groupby(rows, key=lambda r: (r["item_id"], r["round"])):
        merged: Optional[dict[str, Any]] = None
        for row in unit:  # 'answer' sorts before 'judge'
            if row["stage"] not in ("answer", "judge"):
                continue  # a re-judgement or a "same meaning?" verdict stored on the unit
            if merged is None:
                merged = dict(row)
                merged["judge_error"] = None
            elif row["stage"] == "judge":
                merged.update(score=row["score"], correct=row["correct"], reason=row["reason"])
                if row["error"] or (row["reason"] or "").startswith("judge error"):
                    merged["judge_error"] = row["error"] or row["reason"]
        if merged is not None:
            merged["errored"] = bool(merged["error"] or merged["judge_error"])
            yield merged


def stability_report(engine: Engine, run_id: int, timing: Optional[dict[str, Any]] = None,
                     failure_policy: FailurePolicy = "exclude", meaning: bool | str = False,
                     with_rounds: bool = True) -> dict[str, Any]:
    """The stability JSON of a run: ids, distribution, per-question results, summary, timing.

    `failure_policy`: how rounds without a verdict count (see the module doc); the
    report names it at the top and in `summary`. `with_rounds` False leaves out each
    question's `rounds` (a million calls' worth of JSON; `stability_summary.report_figures`
    stores the rest). `meaning`: group open answers by meaning
    offline (True; costs e5 time) or by a judge's stored verdicts ("judge:MODEL"; see
    `report.repeats.Meaning`): never a model call here.
    """
    run = queries.get_run(engine, run_id)
    outcomes = load_outcomes(engine, run_id, failure_policy)  # the verdicts, counted once
    tallies, accuracy = outcomes.tallies(), _accuracy(outcomes)
    del outcomes  # a verdict per call: not held while the rounds stream
    passes = rejudge_passes(engine, run_id)
    latest = passes[-1] if passes else None
    rejudged = repeats_figures.rejudged_rounds(latest, run.rounds)
    item_ids: dict[int, int] = {}  # item index -> item id
    items: dict[int, dict[str, Any]] = {}
    repeats: dict[int, RepeatRounds] = {}  # settled: each question's groups, not its replies
    agreement: list[Consistency] = []
    model_errors = judge_errors = 0
    asked: dict[int, int] = {}  # item index -> rounds with a stored call
    failed: dict[int, int] = {}  # item index -> rounds whose answer or judge call failed
    # a rules run's answered rounds and those whose reply the rules could not read;
    # replies judged wrong that contain their reference are tallied, not kept
    rules_answered = rules_unread = 0
    missed = MissedTally()
    for idx, rows in groupby(iter_verdicts(engine, run_id), key=lambda r: r["item_idx"]):
        answers: list[str | None] = [None] * run.rounds  # this question's, then let go
        for row in rows:
            if run.judge == "rules" and row["answer"] is not None:
                rules_answered += 1
                rules_unread += is_unread_reason(row["reason"])
                missed.add(row)
            if idx not in items:
                items[idx] = {"question": row["question"], "standard_answer": row["reference"],
                              "type": row["task_type"], **({"rounds": []} if with_rounds else {})}
                item_ids[idx] = row["item_id"]
                repeats[idx] = RepeatRounds.empty(row, run.rounds)
            repeats[idx].add(row)
            if with_rounds:
                items[idx]["rounds"].append(round_json(
                    row["round"], row["answer"], row["correct"], row["score"], row["reason"],
                    row["errored"], failure_policy))
            asked[idx] = asked.get(idx, 0) + 1
            failed[idx] = failed.get(idx, 0) + bool(row["errored"])  # calls, not verdicts
            answers[row["round"] - 1] = row["extracted"] or row["answer"]
            model_errors += row["error"] is not None
            judge_errors += row["judge_error"] is not None
        key = functools.cache(answer_key)  # each reply normalised once for both figures
        agreement.append(answer_consistency(answers, key=key))
        repeats[idx].settle(None if rejudged is None else rejudged.get(item_ids[idx], {}),
                            key=key)
    counts = {idx: tallies.get(item_id, (0, 0)) for idx, item_id in item_ids.items()}
    summary = summary_from_counts(counts, run.rounds, failure_policy=failure_policy)
    unparsed = unparsed_counts(rules_unread, rules_answered)
    missed = missed.result()
    consistency = consistency_of(agreement)
    del agreement  # each question's figures are in `consistency` now
    for idx, figures in zip(items, consistency["questions"]):
        items[idx]["consistency"] = figures
    computed = summary.to_json_dict(items)  # after `items` got their consistency
    computed["summary"].update(_asked_and_failed(engine, run, asked, failed))
    computed["summary"].update(accuracy)
    items.clear()  # merged into `computed`
    stats = call_usage.call_stats(engine, run_id)

    reliability = None if latest is None else {k: v for k, v in latest.items() if k != "detail"}
    report = {
        "run_id": run.id,
        "status": run.status,
        "model": run.model,
        "judge_model": None if run.judge == "rules" else run.judge,
        "judge": run.judge,
        "repetition_count": run.rounds,
        "failure_policy": failure_policy,
        **computed,
        "consistency": {"mean_distinct": consistency["mean_distinct"],
                        "mean_top_share": consistency["mean_top_share"]},
        "judge_reliability": reliability,
        "unparsed": {k: v for k, v in unparsed.items() if k != "warning"},
        "missed_answers": {k: v for k, v in missed.items() if k != "warning"},
        "warnings": [w for w in (unparsed["warning"], missed["warning"]) if w],
        "timing": {"calls": stats["calls"], "errors": model_errors,
                   "judge_errors": judge_errors, "retries": run.retries,
                   "tokens": stats["tokens"], "mean_latency_ms": stats["mean_latency_ms"],
                   **(timing or {})},
    }
    how, judge = repeats_figures.parse_meaning(meaning)
    verdicts = None
    if how == "judge":
        verdicts = stored_verdicts(engine, run_id, str(judge))
    repeats_figures.add_repeats(report, summary, repeats, latest, meaning=meaning,
                                verdicts=verdicts)

    add_variants(report, engine, run_id)
    return report


NOT_ASKED_WHY = {"cancelled": "cancelled", "failed": "the run failed",
                 "queued": "not yet", "running": "not yet"}
"""Why a run has rounds it never asked, by its status (the words after "not asked")."""


def _accuracy(outcomes: RunOutcomes) -> dict[str, Any]:
    """The mean success rate and its question-clustered uncertainty as every other view
    reads them: from the run's result (`run_figures.accuracy_figures`), not recounted
    from the rows this report walks."""
    figures = accuracy_figures(outcomes)
    return {"mean": figures["accuracy"], **{key: figures[key] for key in UNCERTAINTY_KEYS}}


def _asked_and_failed(engine: Engine, run: Any, asked: dict[int, int],
                      failed: dict[int, int]) -> dict[str, Any]:
    """The run's questions (`run_questions`, asked or not) and its rounds without a verdict
    split by cause: `errored_rounds` (a call was made and
    failed after its retries) and `not_asked_rounds` (no call: the run was cancelled or
    has not got there). A cancelled run's unasked rounds are not model or judge errors.

    The figures still count an unasked round as one without a verdict (the failure
    policy's rule); this only says which it was.
    """
    run_questions = len(run_items.run_item_ids(engine, int(run.id)))
    unseen = max(run_questions - len(asked), 0)
    missing = [run.rounds - n for n in asked.values() if n < run.rounds]
    return {
        "run_questions": run_questions,
        "errored_rounds": sum(failed.values()),
        "questions_with_errors": sum(1 for n in failed.values() if n),
        "not_asked_rounds": sum(missing) + unseen * run.rounds,
        "not_asked_questions": len(missing) + unseen,
        "not_asked_why": NOT_ASKED_WHY.get(run.status, "not yet"),
    }


def not_asked_line(summary: dict[str, Any]) -> str | None:
    """'3 rounds in 2 questions not asked (cancelled): ...', the same words on the page and
    in the CLI summary; None when every round was asked."""
    rounds = summary.get("not_asked_rounds", 0)
    if not rounds:
        return None
    policy = summary["failure_policy"]
    return (f"{rounds} rounds in {summary['not_asked_questions']} questions not asked "
            f"({summary['not_asked_why']}); like rounds without a verdict they "
            f"{POLICY_RULES[policy]}")


def write_run_csv(engine: Engine, run_id: int, out: TextIO | str, lang: str = "zh",
                  failure_policy: FailurePolicy = "exclude") -> int:
    """Stream a run's CSV in the method's layout; returns the number of questions written."""
    run = queries.get_run(engine, run_id)
    return write_stability_csv(iter_verdicts(engine, run_id), run.rounds, out, lang=lang,  # type: ignore[arg-type]
                               failure_policy=failure_policy)
