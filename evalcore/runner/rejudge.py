"""Judge reliability: re-judge a sample of a run's answers J times to tell judge noise
from model noise. A pass is a job (`create_rejudge_job`) executed by any worker
(`runner.passes`); each re-judgement is stored as a call of stage `rejudge<j>:<job id>`,
so every pass is kept apart (another judge, another sample), the figures can be
recomputed, and an interrupted pass resumes without resending.

A failed judgement (provider error, no readable 0/1) is counted and shown, never read
as a verdict: flip rate and kappas use only the answers whose every judgement is valid,
and are None when fewer than one such answer exists. A kappa that is n/a says why
(`kappa_note`), and a judge that gives one reason or one verdict for every answer is
flagged (`degenerate`): its zero flip rate means it is not reading the answers.
"""
from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any, Optional

import msgspec
from sqlalchemy.engine import Engine

from evalcore.dataset.numbering import item_positions
from evalcore.errors import RunError
from evalcore.metrics.agreement import degenerate_judge, judge_reliability, kappa_note
from evalcore.providers.base import ModelConfig
from evalcore.providers.registry import get_model
from evalcore.runner.passes import run_pass
from evalcore.runner.run import model_snapshot
from evalcore.scorers.judge import judge_request, parse_verdict
from evalcore.store import jobs, queries, run_items
from evalcore.store.types import utcnow
from evalcore.values import validated

REJUDGE_PREFIX = "rejudge"


def create_rejudge_job(engine: Engine, run_id: int, judge: str, *, models_path: Path,
                       sample: int = 20, passes: int = 3, seed: int = 0,
                       temperature: Optional[float] = None, created_by: str = "") -> int:
    """Queue a re-judge pass of `run_id` by the judge model `judge`; returns the job id.

    The judge's settings are snapshotted (env var names only) so any worker can run it.
    `temperature` overrides the judge's (the rubric asks at 0.0; raise it to probe how
    much the verdicts move)."""
    queries.get_run(engine, run_id)
    if sample < 1 or passes < 1:
        raise RunError(f"re-judging needs at least 1 answer and 1 pass (got sample={sample}, "
                       f"passes={passes})")
    config = get_model(models_path, judge)
    params = {"judge": model_snapshot(config), "sample": sample, "passes": passes,
              "seed": seed, "temperature": temperature}
    return jobs.create_job(engine, "rejudge", run_id=run_id, params=params,
                           label=f"re-judge run {run_id} with {judge}", created_by=created_by,
                           total=sample * passes)


def rejudge_todo(engine: Engine, run_id: int, *, sample: int, passes: int,
                 seed: int, job_id: int) -> tuple[list[tuple[Any, int]], int]:
    """([(answer call, pass number)] still to judge, how many are stored already): the
    same seeded sample every time, so a resumed pass completes the same answers."""
    answered = [c for c in queries.run_calls(engine, run_id, "answer")
                if c.error is None and c.answer is not None]
    answered.sort(key=lambda c: (c.item_id, c.round))
    picked = random.Random(seed).sample(answered, min(sample, len(answered)))
    done = queries.done_units(engine, run_id)
    wanted = [(c, j) for c in picked for j in range(1, passes + 1)]
    todo = [(c, j) for c, j in wanted if (c.item_id, c.round, stage_of(j, job_id)) not in done]
    return todo, len(wanted) - len(todo)


def stage_of(j: int, job_id: int) -> str:
    """The call stage of judgement `j` of the pass `job_id`."""
    return f"{REJUDGE_PREFIX}{j}:{job_id}"


async def rejudge_job(ctx: Any) -> dict[str, Any]:
    """The job handler: judge the sample's answers not judged yet, store them as they come."""
    params = ctx.job.params
    run_id = int(ctx.job.run_id)
    judge = validated(ModelConfig, params["judge"])
    questions = await asyncio.to_thread(run_items.run_questions, ctx.engine, run_id)
    todo, already = await asyncio.to_thread(rejudge_todo, ctx.engine, run_id,
                                            sample=params["sample"], passes=params["passes"],
                                            seed=params.get("seed", 0), job_id=ctx.fence.job_id)

    async def one(client: Any, entry: tuple[Any, int]) -> dict[str, Any]:
        call, j = entry
        request = judge_request(questions[call.item_id], call.answer,
                                structured=judge.supports_json_schema)
        if params.get("temperature") is not None:
            request = msgspec.structs.replace(request, temperature=params["temperature"])
        reply = await client.chat(request)
        verdict = parse_verdict(reply.text) if reply.ok else None
        return {"run_id": run_id, "item_id": call.item_id, "round": call.round,
                "stage": stage_of(j, ctx.fence.job_id), "model": judge.name,
                "prompt": request.messages[-1]["content"],
                "answer": reply.text if reply.ok else None,
                "score": verdict.value if verdict else None,
                "correct": verdict.correct if verdict else None,
                "reason": verdict.reason if verdict else f"judge error: {reply.error}",
                "latency_ms": reply.latency_ms, "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens, "error": reply.error,
                "attempts": reply.attempts, "created_at": utcnow()}

    counts = await run_pass(ctx, judge, todo, one, already=already)
    passes = await asyncio.to_thread(rejudge_passes, ctx.engine, run_id)
    mine = next((p for p in passes if p["job_id"] == ctx.fence.job_id), None)
    if mine is not None:
        mine.pop("detail", None)
    return {"judged": counts["stored"], "already": already, "reliability": mine}


def rejudge_passes(engine: Engine, run_id: int) -> list[dict[str, Any]]:
    """Every re-judging pass of a run, oldest first: its judge, sample and time, the
    failed judgements (count and share), the agreement of the valid ones with the run's
    own verdicts, flip rate and kappas over the answers whose every judgement is valid
    (None when there is none: a pass whose judgements all failed measures nothing), and
    per answer (`item_idx`: its 0-based place in the dataset, shown as "Q1") the run's
    verdict and each re-judgement with its reason."""
    by_pass: dict[str, dict[tuple[int, int], dict[int, Any]]] = {}
    meta: dict[str, dict[str, Any]] = {}
    for call in queries.iter_calls(engine, run_id, stage_prefix=REJUDGE_PREFIX):
        head, _, job = call.stage.removeprefix(REJUDGE_PREFIX).partition(":")
        if not head.isdigit():
            continue
        key = job or "legacy"
        valid = call.error is None and not (call.reason or "").startswith("judge error") \
            and call.correct is not None
        by_pass.setdefault(key, {}).setdefault((call.item_id, call.round), {})[int(head)] = (
            bool(call.correct) if valid else None, call.reason)
        info = meta.setdefault(key, {"judge": call.model, "at": call.created_at})
        info["at"] = max(info["at"], call.created_at)
    if not by_pass:
        return []
    own = _run_verdicts(engine, run_id, {k for answers in by_pass.values() for k in answers})
    out = [_pass_figures(key, answers, own, meta[key]) for key, answers in by_pass.items()]
    positions = item_positions(engine, {d["item_id"] for p in out for d in p["detail"]})
    for p in out:
        for d in p["detail"]:
            d["item_idx"] = positions.get(d["item_id"])
    return sorted(out, key=lambda p: (p["job_id"] is not None, p["job_id"] or 0))


def _run_verdicts(engine: Engine, run_id: int, rejudged: set[tuple[int, int]]
                  ) -> dict[tuple[int, int], Optional[bool]]:
    """(item, round) -> the run's own verdict (its judge's, else the rules scorer's), for
    the `rejudged` answers only: a sample's, not every call of a million-call run."""
    verdicts: dict[tuple[int, int], Optional[bool]] = {}
    for stage in ("answer", "judge"):  # a judge verdict overrides the (empty) answer one
        for call in queries.iter_calls(engine, run_id, stage=stage):
            key = (call.item_id, call.round)
            if key in rejudged and (stage == "judge" or key not in verdicts):
                verdicts[key] = call.correct
    return verdicts


def _pass_figures(key: str, answers: dict[tuple[int, int], dict[int, Any]],
                  own: dict[tuple[int, int], Optional[bool]],
                  info: dict[str, Any]) -> dict[str, Any]:
    passes = max(max(v) for v in answers.values())
    rows = {unit: [v.get(j, (None, "not judged"))[0] for j in range(1, passes + 1)]
            for unit, v in answers.items()}
    judgements = len(rows) * passes
    failed = sum(v is None for row in rows.values() for v in row)
    complete = [row for row in rows.values() if all(v is not None for v in row)]
    figures: dict[str, Any] = {"flips": None, "flip_rate": None, "cohen_kappa": None,
                               "mean_pairwise_cohen_kappa": None, "fleiss_kappa": None}
    if complete and passes >= 2:
        measured = judge_reliability(complete).to_json_dict()
        figures.update({k: measured[k] for k in figures})
    columns = list(zip(*complete)) if complete and passes >= 2 else [(), ()]
    every = [judgement for v in answers.values() for judgement in v.values()]
    pairs = [(v, own[unit]) for unit, row in rows.items() for v in row
             if v is not None and own.get(unit) is not None]
    detail = [{"item_id": item, "round": rnd, "run_verdict": own.get((item, rnd)),
               "verdicts": [answers[(item, rnd)].get(j, (None, None))[0]
                            for j in range(1, passes + 1)],
               "reasons": [answers[(item, rnd)].get(j, (None, None))[1]
                           for j in range(1, passes + 1)]}
              for item, rnd in sorted(rows)]
    return {"job_id": None if key == "legacy" else int(key), "judge": info["judge"],
            "at": info["at"].isoformat(), "answers": len(rows), "passes": passes,
            "judgements": judgements, "failed": failed,
            "failed_share": failed / judgements if judgements else None,
            "measured_answers": len(complete),
            "agreement_with_run": (sum(v == o for v, o in pairs) / len(pairs)) if pairs else None,
            **figures,
            "kappa_note": (kappa_note(columns[0], columns[1])
                           if figures["cohen_kappa"] is None else None),
            "degenerate": degenerate_judge([v for v, _ in every], [r for _, r in every]),
            "detail": detail}


def reliability_line(rel: dict[str, Any]) -> str:
    """Flip rate, kappa and agreement with the run, or why they are not measured."""
    if rel["flip_rate"] is None:
        return ("not measured: no answer has two valid judgements (choose a judge model "
                "that answers the 0/1 rubric)")
    kappa, agree = rel["cohen_kappa"], rel["agreement_with_run"]
    note = rel.get("kappa_note")
    kappa_text = f"{kappa:.3f}" if kappa is not None else f"n/a ({note})" if note else "n/a"
    line = (f"flip rate {rel['flip_rate']:.3f} over {rel['measured_answers']} answers, "
            f"Cohen's kappa {kappa_text}, agreement with "
            f"the run's verdicts {'n/a' if agree is None else f'{agree:.3f}'}")
    flags = rel.get("degenerate") or []
    if flags:
        line += ("; DEGENERATE JUDGE (it is not reading the answers: choose another judge "
                 "model): " + "; ".join(flags))
    return line
