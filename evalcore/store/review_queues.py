"""Review queues: make one, and the claim that hands its items to reviewers.

"Next" is a claim like a job's (`store.jobs.claim_job`): one transaction that takes the
first item (by position) that nobody holds, that still wants a review and that this
reviewer has not touched, `SELECT ... FOR UPDATE SKIP LOCKED` on PostgreSQL (two
reviewers never wait for or take the same row), the write lock of `BEGIN IMMEDIATE` on
SQLite. The hold lasts the queue's reservation; a lapsed hold is no hold, so the item
returns to the queue by itself, with nothing to clean up after a reviewer who vanished.
A reviewer who asks again while holding an item gets that item back (a reload resumes
where they were). An item picked for a second review wants two decisions by two people;
the second reviewer's card never carries the first verdict.
"""
from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from sqlalchemy import exists, func, insert, or_, select, update
from sqlalchemy.engine import Connection

from evalcore.errors import EvalcoreError
from evalcore.store.db import Bind, reading, transaction
from evalcore.store.jobs import now_expr
from evalcore.store.tables import (
    AttackItem,
    AttackSet,
    Call,
    ReviewAdjudication,
    ReviewDecision,
    ReviewQueue,
    ReviewQueueItem,
)
from evalcore.store.types import utcnow

ATTACK_ITEM = AttackItem.__table__
ATTACK_SET = AttackSet.__table__
CALL = Call.__table__
ADJ = ReviewAdjudication.__table__
DEC = ReviewDecision.__table__
QUEUE = ReviewQueue.__table__
QI = ReviewQueueItem.__table__

ITEMS = ("all", "flagged", "unflagged")
VERDICTS = {"attack": ("approve", "reject"), "answers": ("right", "wrong")}
"""The decisions a reviewer can give, per queue kind; `SKIP` is recorded beside them."""
SKIP = "skip"
RESERVE_S = 900.0
"""How long a reservation lasts unless the queue says otherwise (15 minutes)."""


class ReviewQueueError(EvalcoreError):
    """A queue action that cannot be done; the message says why and what to do."""


# ------------------------------------------------------------------ create


def create_queue(bind: Bind, *, attack_set_id: int | None = None,
                 run_id: int | None = None, items: str = "all",
                 sample: int | None = None, seed: int = 0, double_share: float = 0.0,
                 reserve_s: float = RESERVE_S, guidelines: str = "",
                 created_by: str = "") -> int:
    """Make a queue over an attack set's items (all, flagged or unflagged) or a run's
    judged answers, `sample` of them drawn with `seed` (a run's stratified by verdict), a
    `double_share` (0..1) of them picked with the same seed for a second, blind review."""
    if (attack_set_id is None) == (run_id is None):
        raise ReviewQueueError("a review queue needs one source: an attack set or a run")
    if items not in ITEMS:
        raise ReviewQueueError(f"items must be one of {', '.join(ITEMS)}, not {items!r}")
    if not 0.0 <= double_share <= 1.0:
        raise ReviewQueueError(f"the double-review share must be 0-100%, not {double_share:.0%}")
    if reserve_s <= 0:
        raise ReviewQueueError("the reservation must last more than 0 minutes")
    if sample is not None and sample < 1:
        raise ReviewQueueError(f"--sample must be at least 1, not {sample}")
    rng = random.Random(seed)
    with transaction(bind) as conn:
        if attack_set_id is not None:
            kind, column = "attack", "attack_item_id"
            ids = _sampled(_attack_items(conn, attack_set_id, items), sample, rng)
        else:
            kind, column = "answers", "call_id"
            ids = _stratified(_judged_calls(conn, int(run_id)), sample, rng)  # type: ignore[arg-type]
        if not ids:
            source = f"attack set {attack_set_id}" if run_id is None else f"run {run_id}"
            raise ReviewQueueError(f"{source} has no {'' if items == 'all' else items + ' '}"
                                   "items to review")
        twice = set(rng.sample(range(len(ids)), round(double_share * len(ids))))
        queue_id = int(conn.execute(QUEUE.insert().values(
            kind=kind, attack_set_id=attack_set_id, run_id=run_id, items=items, sample=sample,
            seed=seed, guidelines=guidelines, double_share=double_share, reserve_s=reserve_s,
            item_count=len(ids), created_by=created_by, created_at=utcnow())
            .returning(QUEUE.c.id)).scalar_one())
        conn.execute(insert(QI), [{"queue_id": queue_id, "position": i, column: ref,
                                   "needed": 2 if i in twice else 1, "holder": ""}
                                  for i, ref in enumerate(ids)])
    return queue_id


def _attack_items(conn: Connection, attack_set_id: int, items: str) -> list[int]:
    rows = conn.execute(select(ATTACK_ITEM.c.id, ATTACK_ITEM.c.flags)
                        .where(ATTACK_ITEM.c.attack_set_id == attack_set_id)
                        .order_by(ATTACK_ITEM.c.source_item_id)).all()
    if not rows and conn.execute(select(ATTACK_SET.c.id).where(
            ATTACK_SET.c.id == attack_set_id)).first() is None:
        raise ReviewQueueError(f"attack set {attack_set_id} not found; list them with "
                               "`python -m evalcore attacks list`")
    keep = {"all": lambda f: True, "flagged": bool, "unflagged": lambda f: not f}[items]
    return [int(i) for i, flags in rows if keep(flags or [])]


def _judged_calls(conn: Connection, run_id: int) -> dict[bool, list[int]]:
    """{verdict: call ids} of the run's judged answers: per (item, round) the judge call
    when there is one (its verdict overrides the answer's), else the answer call."""
    rows = conn.execute(select(CALL.c.id, CALL.c.item_id, CALL.c.round, CALL.c.stage,
                               CALL.c.correct)
                        .where(CALL.c.run_id == run_id, CALL.c.correct.is_not(None))
                        .order_by(CALL.c.id)).all()
    best: dict[tuple[int, int], Any] = {}
    for row in rows:
        key = (row.item_id, row.round)
        if key not in best or row.stage == "judge":
            best[key] = row
    strata: dict[bool, list[int]] = {True: [], False: []}
    for key in sorted(best):
        strata[bool(best[key].correct)].append(int(best[key].id))
    return strata


def _sampled(ids: list[int], sample: int | None, rng: random.Random) -> list[int]:
    if sample is None or sample >= len(ids):
        return ids
    return sorted(rng.sample(ids, sample))


def _stratified(strata: dict[bool, list[int]], sample: int | None,
                rng: random.Random) -> list[int]:
    """A sample with each verdict in its share of the run (so the judge's accuracy over
    the sample estimates its accuracy over the run), in a seeded, mixed order."""
    total = sum(len(ids) for ids in strata.values())
    if sample is None or sample >= total:
        picked = [i for ids in strata.values() for i in ids]
    else:
        right = round(sample * len(strata[True]) / total) if total else 0
        picked = rng.sample(strata[True], right) + rng.sample(strata[False], sample - right)
    rng.shuffle(picked)
    return picked


# ------------------------------------------------------------------ the claim


def get_queue(bind: Bind, queue_id: int) -> Any:
    """The queue row; ReviewQueueError when there is none."""
    with reading(bind) as conn:
        return _queue(conn, queue_id)


def _queue(conn: Connection, queue_id: int) -> Any:
    row = conn.execute(select(QUEUE).where(QUEUE.c.id == queue_id)).first()
    if row is None:
        raise ReviewQueueError(f"review queue {queue_id} not found; list them with "
                               "`python -m evalcore review list`")
    return row


def _decided() -> Any:
    """Decisions (skips aside) an item has."""
    return (select(func.count(DEC.c.id)).where(DEC.c.queue_item_id == QI.c.id,
                                              DEC.c.verdict != SKIP).scalar_subquery())


def _touched_by(reviewer: str) -> Any:
    return exists().where(DEC.c.queue_item_id == QI.c.id, DEC.c.reviewer == reviewer)


def _free(now: Any) -> Any:
    return or_(QI.c.holder == "", QI.c.held_until.is_(None), QI.c.held_until <= now)


def next_item(bind: Bind, queue_id: int, reviewer: str) -> int | None:
    """The item `reviewer` holds in the queue, else the first one free for them, reserved
    for them now; None when nothing is left for this reviewer."""
    return claim(bind, queue_id, reviewer)[0]


def claim(bind: Bind, queue_id: int, reviewer: str) -> tuple[int | None, bool]:
    """`next_item`, and whether the hold is new (a page asks again at every redraw: only
    a new hold is worth an audit event)."""
    if not reviewer:
        raise ReviewQueueError("a reviewer needs a name (EVALCORE_USER or the sign-in)")
    with transaction(bind) as conn:
        queue = _queue(conn, queue_id)
        now = now_expr(conn)
        held = conn.execute(select(QI.c.id).where(
            QI.c.queue_id == queue_id, QI.c.holder == reviewer, QI.c.held_until > now,
            ~_touched_by(reviewer)).order_by(QI.c.position).limit(1)).scalar_one_or_none()
        if held is not None:
            return int(held), False
        # PostgreSQL re-checks a row changed since the statement's snapshot on its new
        # version when it locks it, but not the subqueries (decisions), which still read
        # the old snapshot: an item decided and committed just before our lock looks
        # undecided. So the row we locked is asked about again in a new statement (a new
        # snapshot, after that commit; a decision locks the row first, so none is
        # half-way) and passed over if it no longer qualifies.
        passed: list[int] = []
        while True:
            wanted = [QI.c.queue_id == queue_id, _free(now), _decided() < QI.c.needed,
                      ~_touched_by(reviewer)]
            picked = conn.execute(
                select(QI.c.id).where(*wanted, QI.c.id.not_in(passed))
                .order_by(QI.c.position).limit(1).with_for_update(skip_locked=True, of=QI)
            ).scalar_one_or_none()
            if picked is None:
                return None, False
            if conn.dialect.name != "postgresql" or conn.execute(
                    select(QI.c.id).where(QI.c.id == picked, *wanted)).first() is not None:
                break
            passed.append(int(picked))
        _hold(conn, int(picked), reviewer, float(queue.reserve_s))
    return int(picked), True


def _hold(conn: Connection, item_id: int, reviewer: str, reserve_s: float) -> None:
    conn.execute(update(QI).where(QI.c.id == item_id).values(
        holder=reviewer, held_until=now_expr(conn) + timedelta(seconds=reserve_s)))


def _check_verdict(queue: Any, verdict: str) -> None:
    if verdict not in VERDICTS[queue.kind]:
        raise ReviewQueueError(f"a verdict on queue {queue.id} is one of "
                               f"{', '.join(VERDICTS[queue.kind])}, not {verdict!r}")


def _locked_item(conn: Connection, queue_id: int, item_id: int) -> Any:
    row = conn.execute(select(QI).where(QI.c.id == item_id, QI.c.queue_id == queue_id)
                       .with_for_update()).first()
    if row is None:
        raise ReviewQueueError(f"item {item_id} is not in review queue {queue_id}")
    return row


def _held_by_other(conn: Connection, item: Any, reviewer: str) -> bool:
    if item.holder in ("", reviewer) or item.held_until is None:
        return False
    return conn.execute(select(QI.c.id).where(
        QI.c.id == item.id, QI.c.held_until > now_expr(conn))).first() is not None


def submit(bind: Bind, queue_id: int, item_id: int, reviewer: str, verdict: str, *,
           question: str | None = None, options: dict[int, str] | None = None) -> None:
    """Record `reviewer`'s decision on an item and end their hold. Refused when someone
    else holds it, when they decided it already (undo first), or when it has its
    reviews; an item whose hold lapsed can still be decided by the one who held it."""
    with transaction(bind) as conn:
        queue = _queue(conn, queue_id)
        _check_verdict(queue, verdict)
        if queue.kind != "attack" and (question or options):
            raise ReviewQueueError("answers are judged right or wrong; only attacked "
                                   "questions can be edited")
        item = _locked_item(conn, queue_id, item_id)
        mine = conn.execute(select(DEC.c.verdict).where(
            DEC.c.queue_item_id == item_id, DEC.c.reviewer == reviewer)).scalar_one_or_none()
        if mine is not None and mine != SKIP:
            raise ReviewQueueError(f"you decided item {item_id} already ({mine}); undo it "
                                   "first to change it")
        if _held_by_other(conn, item, reviewer):
            raise ReviewQueueError(f"item {item_id} is reserved by {item.holder}; take "
                                   "your next item with `review next`")
        decided = conn.execute(select(func.count(DEC.c.id)).where(
            DEC.c.queue_item_id == item_id, DEC.c.verdict != SKIP)).scalar_one()
        if decided >= item.needed:
            raise ReviewQueueError(f"item {item_id} has its {item.needed} review(s) already")
        values = {"verdict": verdict, "question": question,
                  "options": {str(k): v for k, v in (options or {}).items()}, "at": utcnow()}
        _write_decision(conn, queue_id, item_id, reviewer, values, replace=mine == SKIP)
        _release(conn, item_id, reviewer)


def _write_decision(conn: Connection, queue_id: int, item_id: int, reviewer: str,
                    values: dict[str, Any], *, replace: bool) -> None:
    if replace:
        conn.execute(update(DEC).where(DEC.c.queue_item_id == item_id,
                                       DEC.c.reviewer == reviewer).values(**values))
    else:
        conn.execute(DEC.insert().values(queue_id=queue_id, queue_item_id=item_id,
                                         reviewer=reviewer, **values))


def _release(conn: Connection, item_id: int, reviewer: str) -> None:
    conn.execute(update(QI).where(QI.c.id == item_id, QI.c.holder == reviewer)
                 .values(holder="", held_until=None))


def skip(bind: Bind, queue_id: int, item_id: int, reviewer: str) -> None:
    """Pass an item on: `reviewer` will not get it again, others will."""
    with transaction(bind) as conn:
        _queue(conn, queue_id)
        item = _locked_item(conn, queue_id, item_id)
        if _held_by_other(conn, item, reviewer):
            raise ReviewQueueError(f"item {item_id} is reserved by {item.holder}")
        mine = conn.execute(select(DEC.c.id).where(
            DEC.c.queue_item_id == item_id, DEC.c.reviewer == reviewer)).first()
        if mine is None:
            conn.execute(DEC.insert().values(queue_id=queue_id, queue_item_id=item_id,
                                             reviewer=reviewer, verdict=SKIP, options={},
                                             at=utcnow()))
        _release(conn, item_id, reviewer)


def undo(bind: Bind, queue_id: int, reviewer: str) -> int | None:
    """Take back `reviewer`'s latest decision or skip in the queue and hold that item
    for them again (unless someone else holds it now); its id, None if nothing to undo.
    A decision already adjudicated stays: the adjudication was made on it."""
    with transaction(bind) as conn:
        queue = _queue(conn, queue_id)
        last = conn.execute(select(DEC.c.id, DEC.c.queue_item_id).where(
            DEC.c.queue_id == queue_id, DEC.c.reviewer == reviewer)
            .order_by(DEC.c.at.desc(), DEC.c.id.desc()).limit(1)).first()
        if last is None:
            return None
        item_id = int(last.queue_item_id)
        if conn.execute(select(ADJ.c.id).where(ADJ.c.queue_item_id == item_id)).first():
            raise ReviewQueueError(f"item {item_id} was adjudicated; its decisions stay")
        item = _locked_item(conn, queue_id, item_id)
        conn.execute(DEC.delete().where(DEC.c.id == last.id))
        if not _held_by_other(conn, item, reviewer):
            conn.execute(update(QI).where(QI.c.holder == reviewer, QI.c.queue_id == queue_id)
                         .values(holder="", held_until=None))
            _hold(conn, item_id, reviewer, float(queue.reserve_s))
    return item_id


def adjudicate(bind: Bind, queue_id: int, item_id: int, adjudicator: str, verdict: str,
               note: str = "") -> None:
    """The final verdict on an item, kept beside the reviewers' decisions; adjudicating
    again replaces the earlier adjudication."""
    with transaction(bind) as conn:
        queue = _queue(conn, queue_id)
        _check_verdict(queue, verdict)
        _locked_item(conn, queue_id, item_id)
        conn.execute(ADJ.delete().where(ADJ.c.queue_item_id == item_id))
        conn.execute(ADJ.insert().values(queue_id=queue_id, queue_item_id=item_id,
                                         verdict=verdict, adjudicator=adjudicator, note=note,
                                         at=utcnow()))


# ------------------------------------------------------------------ reads


def queue_items(bind: Bind, queue_id: int) -> list[Any]:
    """The queue's items in order (id, position, attack_item_id, call_id, needed, holder,
    held_until)."""
    with reading(bind) as conn:
        return list(conn.execute(select(QI).where(QI.c.queue_id == queue_id)
                                 .order_by(QI.c.position)).all())


def decisions(bind: Bind, queue_id: int, *, with_skips: bool = False) -> list[Any]:
    """Every decision of the queue (queue_item_id, reviewer, verdict, question, options,
    at), oldest first."""
    query = select(DEC).where(DEC.c.queue_id == queue_id).order_by(DEC.c.at, DEC.c.id)
    if not with_skips:
        query = query.where(DEC.c.verdict != SKIP)
    with reading(bind) as conn:
        return list(conn.execute(query).all())


def adjudications(bind: Bind, queue_id: int) -> dict[int, Any]:
    """{queue item id: its adjudication row}."""
    with reading(bind) as conn:
        return {int(r.queue_item_id): r for r in conn.execute(
            select(ADJ).where(ADJ.c.queue_id == queue_id))}


def list_queues(bind: Bind, *, attack_set_id: int | None = None,
                run_id: int | None = None) -> list[Any]:
    """Queues, newest first, optionally of one attack set or run."""
    query = select(QUEUE).order_by(QUEUE.c.id.desc())
    if attack_set_id is not None:
        query = query.where(QUEUE.c.attack_set_id == attack_set_id)
    if run_id is not None:
        query = query.where(QUEUE.c.run_id == run_id)
    with reading(bind) as conn:
        return list(conn.execute(query).all())


def held_items(bind: Bind, queue_id: int) -> dict[int, str]:
    """{item id: holder} of the holds in force now."""
    with reading(bind) as conn:
        now = now_expr(conn)
        return {int(i): str(h) for i, h in conn.execute(select(QI.c.id, QI.c.holder).where(
            QI.c.queue_id == queue_id, QI.c.holder != "", QI.c.held_until > now))}

