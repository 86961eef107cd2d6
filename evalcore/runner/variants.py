"""Option-order and prompt-template sensitivity of a run: a job over its items.

A run option of the kinds that declare it (`EvalKind.run_options`: stability and
robustness take both, fairness the option order of its BBQ / CBBQ items), executed after
the run as a job (kind `variants`, like re-judging) by any worker, over the items the
kind names (`EvalKind.variant_items`: a robustness run's clean items). Each variant of an item is one call of the run's model,
scored by the task's rules and stored with the run:

- stage `variant:order:2,0,1` (the original option indices in the order shown): the
  item asked with its options reordered (`prompt.variants.orders`); the original order
  is the run's own round-1 answer, not asked again;
- stage `variant:template:NAME`: the item asked under template NAME.

The stored rows are the truth: an interrupted job resumes with the units the database
does not hold, and the report (`report.variants`) reads the figures back.
"""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Optional

import msgspec
from sqlalchemy.engine import Engine

from evalcore.errors import RunError
from evalcore.kinds import get_kind
from evalcore.prompt.render import render_prompt
from evalcore.prompt.variants import (
    REORDERED_TASKS,
    orders,
    parse_option_order,
    parse_templates,
    reordered,
)
from evalcore.providers.base import ChatRequest, ModelConfig
from evalcore.values import validated
from evalcore.runner.passes import run_pass
from evalcore.runner.plan import run_spec
from evalcore.scorers.registry import score_answer
from evalcore.store import jobs, queries, run_items
from evalcore.store.db import Bind
from evalcore.store.types import utcnow

VARIANT_STAGE = "variant:"
ORDER_STAGE = VARIANT_STAGE + "order:"
TEMPLATE_STAGE = VARIANT_STAGE + "template:"


def order_stage(order: list[int]) -> str:
    return ORDER_STAGE + ",".join(map(str, order))


def variant_units(engine: Engine, run_id: int, option_order: Optional[str],
                  templates: list[dict[str, Any]], seed: int = 0
                  ) -> list[tuple[int, str, Any, Optional[str], str]]:
    """Every (item_id, stage, question as asked, template text, style) of the pass,
    including those already stored. Option orders apply to choice items (and BBQ / CBBQ
    ones) only; the kind's `variant_items` limits the items (default all the run's)."""
    run = queries.get_run(engine, run_id)
    spec = (run.config or {}).get("spec") or {}  # the run's own template and style
    template, style = spec.get("template"), spec.get("prompt_style") or "zero"
    pick = get_kind(run.kind).variant_items
    chosen = None if pick is None else set(pick(run))
    units = []
    for item_id, q in run_items.run_questions(engine, run_id).items():
        if chosen is not None and item_id not in chosen:
            continue
        if option_order and q.task_type in REORDERED_TASKS and len(q.choices) >= 2:
            for order in orders(len(q.choices), option_order, seed, item_id)[1:]:
                units.append((item_id, order_stage(order), reordered(q, order), template,
                              style))
        for t in templates:
            units.append((item_id, TEMPLATE_STAGE + t["name"], q, t["text"], t["style"]))
    return units


def variants_todo(engine: Engine, run_id: int, params: dict[str, Any]
                  ) -> tuple[list[tuple[int, str, Any, Optional[str], str]], int]:
    """(units not stored yet, units stored already)."""
    units = variant_units(engine, run_id, params.get("option_order"), params.get("templates", []),
                          params.get("seed", 0))
    done = queries.done_units(engine, run_id)
    todo = [u for u in units if (u[0], 1, u[1]) not in done]
    return todo, len(units) - len(todo)


def variants_cost(engine: Engine, run_id: int, option_order: Optional[str],
                  templates: list[dict[str, Any]], seed: int = 0) -> dict[str, int]:
    """Extra model calls the pass will make (and those stored already), by kind."""
    todo, stored = variants_todo(engine, run_id, {"option_order": option_order,
                                                  "templates": templates, "seed": seed})
    orders = sum(1 for u in todo if u[1].startswith(ORDER_STAGE))
    return {"calls": len(todo), "order_calls": orders, "template_calls": len(todo) - orders,
            "stored": stored}


def cost_line(cost: dict[str, int]) -> str:
    """The pass's cost in one sentence, said before it starts (page and CLI)."""
    return (f"option order and templates: {cost['calls']} extra model calls "
            f"({cost['order_calls']} for option orders, {cost['template_calls']} for "
            f"templates; {cost['stored']} stored already)")


OPTION_FLAGS = {"option_order": "--option-order", "templates": "--templates"}


def check_options(kind: str, option_order: Optional[str], templates: list[Any],
                  what: str = "the run") -> None:
    """RunError when `kind` does not take an option asked (`EvalKind.run_options`)."""
    allowed = get_kind(kind).run_options
    asked = [name for name, value in (("option_order", option_order), ("templates", templates))
             if value]
    refused = [OPTION_FLAGS[name] for name in asked if name not in allowed]
    if refused:
        takes = " and ".join(OPTION_FLAGS[n] for n in allowed) or "neither"
        raise RunError(f"{what} is a {kind} run, which takes {takes}, not "
                       f"{' or '.join(refused)}")


def template_params(templates: list[Any]) -> list[dict[str, Any]]:
    """`prompt.variants.Template`s as job parameters (the texts travel with the job)."""
    return [{"name": t.name, "text": t.text, "style": t.style} for t in templates]


def create_variants_job(engine: Engine, run_id: int, *, option_order: Optional[str],
                        templates: list[dict[str, Any]], seed: int = 0,
                        created_by: str = "", into: Optional["Bind"] = None) -> int:
    """Queue the option-order / template pass of `run_id` with the run's model (its job
    written `into` the caller's transaction when given: the action's)."""
    if option_order:
        parse_option_order(option_order)
    if not option_order and not templates:
        raise RunError("nothing to vary: give --option-order and/or --templates")
    run = queries.get_run(engine, run_id)
    check_options(run.kind, option_order, templates, f"run {run_id}")
    cost = variants_cost(engine, run_id, option_order, templates, seed)
    if not cost["calls"] + cost["stored"]:
        raise RunError(f"run {run_id} has no item to ask again: option orders reorder "
                       "choice items (and BBQ / CBBQ ones) only")
    params = {"option_order": option_order, "templates": templates, "seed": seed}
    return jobs.create_job(into if into is not None else engine, "variants", run_id=run_id,
                           params=params,
                           label=f"option order / templates of run {run_id}",
                           created_by=created_by, total=cost["calls"] + cost["stored"])


async def variants_job(ctx: Any) -> dict[str, Any]:
    """The job handler: ask every variant not stored yet with the run's model."""
    run_id = int(ctx.job.run_id)
    run = await asyncio.to_thread(queries.get_run, ctx.engine, run_id)
    spec = run_spec(run.config["spec"])
    model = validated(ModelConfig, run.config["models"][spec.model])
    if spec.temperature is not None:
        model = msgspec.structs.replace(model, temperature=spec.temperature)
    todo, already = await asyncio.to_thread(variants_todo, ctx.engine, run_id, ctx.job.params)

    async def one(client: Any, unit: tuple[int, str, Any, Optional[str], str]) -> dict[str, Any]:
        item_id, stage, question, template, style = unit
        prompt = render_prompt(question, template, style=style)  # type: ignore[arg-type]
        reply = await client.chat(ChatRequest.user(prompt))
        score = score_answer(reply.text, question) if reply.ok else None
        return {"run_id": run_id, "item_id": item_id, "round": 1, "stage": stage,
                "model": model.name, "prompt": prompt,
                "answer": reply.text if reply.ok else None,
                "score": score.value if score else None,
                "correct": score.correct if score else None,
                "reason": score.reason if score else f"model error: {reply.error}",
                "extracted": score.extracted if score else None,
                "latency_ms": reply.latency_ms, "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens, "error": reply.error,
                "attempts": reply.attempts, "created_at": utcnow()}

    counts = await run_pass(ctx, model, todo, one, already=already)
    if ctx.draining.is_set():
        return {"status": "drained"}
    return {"asked": counts["stored"], "errors": counts["errors"], "already": already}


def read_templates(value: str, base: Optional[Path] = None) -> list[dict[str, Any]]:
    """`--templates zero,few,FILE` as job parameters (VariantError if unusable)."""
    return template_params(parse_templates(value, base))
