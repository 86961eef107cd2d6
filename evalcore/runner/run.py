"""Execute one run on the current asyncio loop: ask, judge, store, count.

Shape of a run: answer workers (as many as the answer model's concurrency) pull
(item, round) units from one ordered stream and call the model; with a judge model
they hand each answer to judge workers (the judge model's own concurrency), so answer
and judge calls are pipelined, each against its own model's limits. One writer task
stores finished calls, adds progress, beats the heartbeat and notices cancel requests,
all in the database, so any page or process can follow the run. A call keeps its slot
until its reply is stored (group commit: the writer stores whatever finished while its
last transaction ran, in one transaction), so a killed process loses at most the calls
that were in flight: no answered call is paid for twice.
"""
from __future__ import annotations

import asyncio
import logging
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

import msgspec
from sqlalchemy.engine import Engine

from evalcore.prompt import render_prompt
from evalcore.providers.client import get_client
from evalcore.runner.budget_guard import run_budget
from evalcore.runner.disk_full import disk_full_error, is_disk_full, lacks_room
from evalcore.runner.outage import database
from evalcore.dataset.records import Question
from evalcore.providers.base import ChatReply, ChatRequest, ModelConfig
from evalcore.values import validated
from evalcore.runner.plan import RunSpec, Unit, by_question, plan_units, run_spec
from evalcore.scorers.base import Score
from evalcore.scorers.judge import judge_request, parse_verdict
from evalcore.scorers.registry import score_answer
from evalcore.store import queries, run_items
from evalcore.store.jobs import LeaseLost
from evalcore.store.types import utcnow

log = logging.getLogger(__name__)

FLUSH_INTERVAL_S = 0.25
GATHER_S = 0.02
"""Longest a finished call waits for the others in flight before the writer stores it:
one transaction for the calls that end together, not one each (CPU), while a slot is
held at most this much longer (throughput)."""
MAX_FLUSH_FAILURES = 10
"""Failed attempts at the last flush before the run gives up (its job is then retried)."""


@dataclass
class RunProgress:
    """A snapshot handed to progress callbacks (the CLI's bar); the database has the same."""

    run_id: int
    done: int
    total: int
    errors: int
    retries: int


@dataclass
class _Tally:
    done: int = 0
    errors: int = 0
    retries: int = 0

    def take(self) -> tuple[int, int, int]:
        out = (self.done, self.errors, self.retries)
        self.done = self.errors = self.retries = 0
        return out


@dataclass
class _Job:
    """Everything the workers share for one run."""

    run_id: int
    spec: RunSpec
    questions: dict[int, Question]
    prompts: dict[int, str]
    """The rendered prompt of each item (stored once per run in run_item)."""
    model: ModelConfig
    judge: Optional[ModelConfig]
    units: Iterator[Unit]
    left: int
    """Answer calls not yet taken from the stream."""
    questions_left: Iterator[tuple[int, list[int]]]
    """The same units grouped by question (the `sequential` schedule's stream)."""
    slots: int
    """Calls in flight this run asks for (its --concurrency, else the model's); the model's
    own `concurrency` stays the budget that every run on it shares (and the limit of the
    process's client for it)."""
    fence: Any
    rows: list[dict[str, Any]] = field(default_factory=list)
    tally: _Tally = field(default_factory=_Tally)
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    drained: bool = False
    """A unit was left for another worker because this one is stopping."""
    budget: Any = None
    """The run's spending limit (`runner.budget_guard.Budget`)."""
    asked: int = 0
    """Answer calls taken from the stream and not ended: in flight or waiting for a slot.
    With `left`, what the model share may want at most (the calls waiting count: with
    only those in flight, a run whose calls all waited for slots claimed one)."""
    waiters: list[asyncio.Future] = field(default_factory=list)
    """One future per row in `rows`: resolved once the writer stored it."""
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the first row waits to be stored, when every call holding a slot waits
    for the store, or when the run ends: the writer's moments to start gathering a flush
    and to stop waiting for more (not once a call: each wake costs the writer a task)."""
    calling: int = 0
    """Calls holding a slot (answer or judge): when all of them wait for the store, the
    writer has nothing more to wait for."""

    async def stored(self) -> None:
        """Wait until the rows appended so far are in the database; the caller keeps its
        slot meanwhile, so no new call is paid for while an answered one could be lost."""
        waiter = asyncio.get_running_loop().create_future()
        self.waiters.append(waiter)
        if len(self.waiters) == 1 or len(self.waiters) >= self.calling:
            self.wake.set()  # the writer's two moments: the first row, and the last call
        await waiter


def model_snapshot(config: ModelConfig) -> dict[str, Any]:
    """What a run keeps of a model's settings: everything but secrets (there are none: only env var names).
    JSON-ready, a copy (no list shared); read back with `validated(ModelConfig, ...)`."""
    return msgspec.to_builtins(config)


@dataclass(frozen=True)
class Outcome:
    """How a run ended as the runner decides it: 'done', 'failed', 'cancelled' (with the
    error or the budget's reason), or 'drained' (the worker stops; the job is released).
    The job layer stores it on the run's job in its fenced `finish_job`: the one write of
    a run's end (`store.run_state` derives the run's status from it)."""

    status: str
    error: Optional[str] = None


async def execute_run(engine: Engine, run_id: int, *, ctx: Any,
                      on_progress: Optional[Callable[[RunProgress], None]] = None) -> Outcome:
    """Run (or resume) `run_id` to the end on this loop for the job `ctx` holds; returns
    its outcome, which the caller stores on the job (the runner writes no status).

    Calls already stored are never sent again. Provider failures are stored per call and
    never stop the run; a run whose every answer failed ends `failed` with the first
    error. Every write is fenced by the job's lease: if another worker took the job over,
    this one stops (LeaseLost) without writing. An exception fails the job with its text;
    a cancelled task (the worker stopping) leaves the end to the job layer, which releases
    the run to the queue.
    """
    run = await asyncio.to_thread(queries.get_run, engine, run_id)
    job = await asyncio.to_thread(_prepare, engine, run, ctx.fence)
    return await _drive(engine, job, ctx, on_progress)


def _now():  # noqa: ANN202 - tiny alias keeps call sites short

    return utcnow()


def _prepare(engine: Engine, run: Any, fence: Any) -> _Job:
    """Load the questions, the model snapshots and what is already stored (blocking I/O)."""
    spec = run_spec(run.config["spec"])
    models = {name: validated(ModelConfig, cfg) for name, cfg in run.config["models"].items()}
    model = models[spec.model]
    slots = spec.concurrency or model.concurrency
    if spec.temperature is not None:
        model = msgspec.structs.replace(model, temperature=spec.temperature)
    judge = models.get(spec.judge) if spec.judge != "rules" else None
    questions = run_items.run_questions(engine, run.id)
    prompts = run_items.run_prompts(engine, run.id)
    if len(prompts) < len(questions):  # a run made before prompts were stored

        prompts = {i: prompts.get(i) or render_prompt(q, spec.template, style=spec.prompt_style)
                   for i, q in questions.items()}
    done = queries.done_units(engine, run.id)
    answered = {(item, rnd) for item, rnd, stage in done if stage == "answer"}
    units = plan_units(questions.keys(), spec.rounds, spec.schedule, answered)
    questions_left = by_question(units)  # shares `units`: a run uses one or the other
    queries.recount_progress(engine, run.id, judged=judge is not None)
    # progress only: the run's status is its job's (running since the claim)
    queries.update_run(engine, run.id, heartbeat_at=_now(), started_at=run.started_at or _now(),
                       total=len(questions) * spec.rounds)

    budget = run_budget(engine, run, spec.budget)
    return _Job(budget=budget, run_id=run.id, spec=spec, questions=questions, prompts=prompts,
                model=model, judge=judge,
                units=units, left=max(len(questions) * spec.rounds - len(answered), 0),
                questions_left=questions_left, fence=fence, slots=slots)


async def _drive(engine: Engine, job: _Job, ctx: Any,
                 on_progress: Optional[Callable[[RunProgress], None]]) -> Outcome:
    answer_client = get_client(job.model)
    judge_client = get_client(job.judge) if job.judge else None
    judge_queue: asyncio.Queue = asyncio.Queue(maxsize=max(2 * (job.judge.concurrency if job.judge else 1), 4))
    if judge_client is not None:
        for item_id, rnd, answer in await asyncio.to_thread(queries.unjudged_answers, engine, job.run_id):
            await judge_queue.put((item_id, rnd, answer))  # resumed: judge what was answered

    async with AsyncExitStack() as shares:
        answer_share = ctx.share(job.model, "answer", want=job.slots)
        answer_slots = await shares.enter_async_context(answer_share)
        judge_slots = (await shares.enter_async_context(ctx.share(job.judge, "judge"))
                       if job.judge else None)

        async def ask(item_id: int, rnd: int) -> bool:
            """One answer call (and its hand-over to the judges); False to stop."""
            if job.cancelled.is_set():
                return False
            if ctx.draining.is_set():  # the worker stops: this unit waits for the next
                job.drained = True
                return False
            if not job.budget.allows(job.prompts[item_id], job.model):
                job.cancelled.set()  # the next call would pass the run's budget
                return False
            job.left -= 1
            job.asked += 1
            try:
                answer_share.want_at_most(max(job.left, 0) + job.asked)  # >= 1: this call
                async with answer_slots:
                    job.calling += 1
                    try:
                        to_judge = await _answer(job, answer_client, item_id, rnd,
                                                 judge_client is not None)
                    finally:
                        job.calling -= 1
            finally:
                job.asked -= 1
            if to_judge is not None:
                await judge_queue.put(to_judge)
            return True

        async def answer_worker() -> None:
            if job.spec.schedule == "sequential":  # a question's rounds, one after another
                for item_id, rounds in job.questions_left:
                    for rnd in rounds:
                        if not await ask(item_id, rnd):
                            return
                return
            for item_id, rnd in job.units:
                if not await ask(item_id, rnd):
                    return

        async def judge_worker() -> None:
            while True:
                item_id, rnd, answer = await judge_queue.get()
                try:
                    async with judge_slots:
                        job.calling += 1
                        try:
                            await _judge(job, judge_client, item_id, rnd, answer)
                        finally:
                            job.calling -= 1
                finally:
                    judge_queue.task_done()

        stop = asyncio.Event()
        writer = asyncio.create_task(_writer(engine, job, stop, on_progress))
        judges = ([asyncio.create_task(judge_worker()) for _ in range(job.judge.concurrency)]
                  if job.judge else [])
        answers = [asyncio.create_task(answer_worker()) for _ in range(job.slots)]
        try:
            await asyncio.gather(*answers)
            if judges:
                await judge_queue.join()
        finally:
            for task in answers + judges:
                task.cancel()
            await asyncio.gather(*answers, *judges, return_exceptions=True)
            stop.set()
            job.wake.set()
            await writer  # its last flush stores every finished call (or finds the lease lost)
    await asyncio.to_thread(queries.recount_progress, engine, job.run_id,
                            judged=job.judge is not None)
    if job.drained and not job.cancelled.is_set():
        return Outcome("drained")  # the job layer releases the run to the queue
    if job.cancelled.is_set():
        return Outcome("cancelled", job.budget.reason() if job.budget.reached else None)
    calls, failed, first = await asyncio.to_thread(queries.answer_outcome, engine, job.run_id)
    if calls and failed == calls:
        return Outcome("failed", f"all {calls} answer calls failed; the first: {first}")
    return Outcome("done")


async def _answer(job: _Job, client: Any, item_id: int, rnd: int,
                  judged: bool) -> Optional[tuple[int, int, str]]:
    """Ask one (item, round); returns what the judge must rate next, if anything."""
    question = job.questions[item_id]
    reply: ChatReply = await client.chat(ChatRequest.user(job.prompts[item_id]))
    job.budget.add(reply, job.model)
    job.tally.retries += reply.attempts - 1
    if not reply.ok:
        score: Optional[Score] = Score(value=0.0, correct=False, reason=f"model error: {reply.error}")
    elif not judged:
        score = score_answer(reply.text, question)
    else:
        score = None  # the judge row carries the verdict
    # the prompt is in run_item, once per run: the call row does not repeat it
    job.rows.append(_row(job, item_id, rnd, "answer", job.model.name, "", reply, score))
    if not (judged and reply.ok):
        job.tally.done += 1
        job.tally.errors += 0 if reply.ok else 1
    await job.stored()
    return (item_id, rnd, reply.text) if judged and reply.ok else None


async def _judge(job: _Job, client: Any, item_id: int, rnd: int, answer: str) -> None:
    assert job.judge is not None
    request = judge_request(job.questions[item_id], answer, structured=job.judge.supports_json_schema)
    reply: ChatReply = await client.chat(request)
    job.budget.add(reply, job.judge)
    job.tally.retries += reply.attempts - 1
    if reply.ok:
        score = parse_verdict(reply.text)
    else:
        score = Score(value=0.0, correct=False, reason=f"judge error: {reply.error}")
    prompt = request.messages[-1]["content"]
    job.rows.append(_row(job, item_id, rnd, "judge", job.judge.name, prompt, reply, score))
    job.tally.done += 1
    await job.stored()


def _row(job: _Job, item_id: int, rnd: int, stage: str, model: str, prompt: str,
         reply: ChatReply, score: Optional[Score]) -> dict[str, Any]:
    return {
        "run_id": job.run_id, "item_id": item_id, "round": rnd, "stage": stage, "model": model,
        "prompt": prompt, "answer": reply.text if reply.ok else None,
        "score": score.value if score else None, "correct": score.correct if score else None,
        "reason": score.reason if score else None,
        "extracted": score.extracted if score else None, "latency_ms": reply.latency_ms,
        "prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
        "error": reply.error, "attempts": reply.attempts, "created_at": _now(),
    }


async def _writer(engine: Engine, job: _Job, stop: asyncio.Event,
                  on_progress: Optional[Callable[[RunProgress], None]]) -> None:
    """Store finished calls as soon as there are any (and every FLUSH_INTERVAL_S, to renew
    the lease and notice a cancel), once more after `stop`; the only task that writes
    calls, so flushes never overlap, and the calls that finish during one flush go
    together into the next (one transaction each: ~20 us a call on SQLite). A failed
    flush keeps its rows for the next one (a database that went away), their calls
    still holding their slots; a lost lease stops the run at once."""
    failures = 0
    shown = 0.0
    loop = asyncio.get_running_loop()
    while True:
        if not stop.is_set():
            try:  # wake when a call finished, at the interval, or at once when the run ends
                await asyncio.wait_for(job.wake.wait(), FLUSH_INTERVAL_S)
            except asyncio.TimeoutError:
                pass
            await _gather(job, stop, loop.time() + GATHER_S)
        job.wake.clear()
        stopping = stop.is_set()  # set only after every worker is done: this flush is the last
        # Taken here, on the loop that appends to them: in the thread, a call's row could
        # land in the list just stored (append bound before the swap, called after it).
        rows, waiters, counts = job.rows, job.waiters, job.tally.take()
        job.rows, job.waiters = [], []
        try:
            if rows and lacks_room(engine, _row_bytes(rows) * len(rows)):
                raise disk_full_error(engine, job.run_id)  # stop before the last byte
            cancel = await asyncio.to_thread(_flush, engine, job, rows, counts)
        except LeaseLost as exc:
            job.cancelled.set()
            _settle(waiters, exc)
            raise
        except Exception as exc:  # noqa: BLE001 - retried; the lease tells others if we die
            if is_disk_full(exc):  # waiting does not free space: stop, paying no more calls
                full = disk_full_error(engine, job.run_id,
                                       calls_left=max(job.left, 0) + job.asked + len(rows),
                                       bytes_per_call=_row_bytes(rows))
                job.cancelled.set()
                _settle(waiters + job.waiters, full)
                raise full from None
            job.rows[:0] = rows  # back to the buffer for the next flush
            job.waiters[:0] = waiters
            job.tally.done += counts[0]
            job.tally.errors += counts[1]
            job.tally.retries += counts[2]
            failures += 1
            database(engine).failed(f"run {job.run_id} stored its calls", exc)
            if stopping and failures >= MAX_FLUSH_FAILURES:
                raise
            await asyncio.sleep(min(failures, 5))
            continue
        failures = 0
        database(engine).ok()
        _settle(waiters, None)
        if cancel:
            job.cancelled.set()
        if on_progress and (stopping or loop.time() - shown >= FLUSH_INTERVAL_S):
            shown = loop.time()  # a bar needs no more than the interval's pace
            on_progress(await asyncio.to_thread(_snapshot, engine, job.run_id))
        if stopping:
            return


async def _gather(job: _Job, stop: asyncio.Event, until: float) -> None:
    """Let the calls finishing about now join the flush: wait until every call holding a
    slot waits for the store, the run ends, or `until` (loop time)."""
    loop = asyncio.get_running_loop()
    while len(job.waiters) < job.calling and not stop.is_set():
        left = until - loop.time()
        if left <= 0:
            return
        job.wake.clear()
        try:
            await asyncio.wait_for(job.wake.wait(), left)
        except asyncio.TimeoutError:
            return


ROW_BYTES = 200
"""A stored call's bytes besides its texts (numbers, names, times, index entries)."""
_TEXTS = ("prompt", "answer", "reason", "extracted", "error")


_SAMPLE_ROWS = 32
"""Rows `_row_bytes` reads: an estimate of a flush's bytes needs no more."""


def _row_bytes(rows: list[dict[str, Any]]) -> float:
    """Bytes a stored call takes, about (the mean over the first rows): its texts and the
    rest."""
    sample = rows[:_SAMPLE_ROWS]
    if not sample:
        return 0.0
    texts = sum(len(row[key] or "") for row in sample for key in _TEXTS)
    return ROW_BYTES + texts / len(sample)


def _settle(waiters: list[asyncio.Future], error: Optional[BaseException]) -> None:
    """Tell the calls waiting for a flush that it is done (or why it never will be)."""
    for waiter in waiters:
        if waiter.done():  # its call was cancelled meanwhile (a worker stopping)
            continue
        if error is None:
            waiter.set_result(None)
        else:
            waiter.set_exception(error)


def _flush(engine: Engine, job: _Job, rows: list[dict[str, Any]],
           counts: tuple[int, int, int]) -> bool:
    """Write `rows` (taken from the buffer) and the progress `counts` (done, errors,
    retries) in one fenced transaction; returns whether a cancel was requested
    (LeaseLost if the job was taken over: nothing is written). Runs in a thread: it
    never touches the buffer, which the loop owns."""
    done, errors, retries = counts
    return queries.flush_run(engine, job.run_id, rows, fence=job.fence, done=done,
                             errors=errors, retries=retries)


def _snapshot(engine: Engine, run_id: int) -> RunProgress:
    run = queries.get_run(engine, run_id)
    return RunProgress(run_id=run_id, done=run.done, total=run.total, errors=run.errors,
                       retries=run.retries)
