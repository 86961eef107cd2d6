"""One model's concurrency shared by every job on every worker (`model_budget` rows).

Each job that calls a model holds a row: the slots it may fill. `sync_share`, called by
the holder every second or so, recomputes its share in one transaction serialised per
model (an advisory lock on PostgreSQL, the write lock on SQLite): rows past their expiry
(dead workers) are dropped; every live holder that wants slots gets an equal share of
the capacity (the remainder to the first holders by name, and what a holder does not
want goes to the others); a holder above its share shrinks, but never below its calls in
flight, and a holder only grows into slots nobody holds. So the recorded slots never add
up to more than the capacity, and each holder's calls in flight never exceed its slots:
the provider never sees more than `concurrency` calls of that model at once.
"""
from __future__ import annotations

from datetime import timedelta
from typing import NamedTuple

from sqlalchemy import delete, select, text
from sqlalchemy.engine import Engine

from evalcore.store.jobs import now_expr
from evalcore.store.tables import ModelBudget

MODEL_BUDGET = ModelBudget.__table__

BUDGET_LEASE_S = 5.0
"""A holder row not synced for this long belongs to a dead worker."""


class Grant(NamedTuple):
    """What one sync gives a holder."""

    allowed: int
    """Calls it may have in flight now (0: wait; fewer than its calls in flight: start none
    until enough have finished)."""
    share: int
    """Its fair share: `allowed` is below it while others still hold slots they are giving
    back, the time to sync again soon."""


def sync_share(engine: Engine, model: str, holder: str, *, capacity: int, want: int,
                in_flight: int, lease_s: float = BUDGET_LEASE_S) -> Grant:
    """Record `holder`'s claim on `model` and return what it may have in flight now."""
    table = MODEL_BUDGET
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:m))"), {"m": model})
        now = now_expr(conn)
        conn.execute(delete(table).where(table.c.model == model, table.c.expires_at < now))
        rows = conn.execute(select(table.c.holder, table.c.capacity, table.c.want,
                                   table.c.slots).where(table.c.model == model)).all()
        others = [r for r in rows if r.holder != holder]
        capacity = min([capacity, *(r.capacity for r in others)])
        shares = fair_shares(capacity, {**{r.holder: r.want for r in others}, holder: want})
        free = capacity - sum(r.slots for r in others)
        allowed = max(min(shares[holder], free), 0)
        slots = max(allowed, in_flight)
        conn.execute(delete(table).where(table.c.model == model, table.c.holder == holder))
        conn.execute(table.insert().values(model=model, holder=holder, capacity=capacity,
                                           want=want, slots=slots,
                                           expires_at=now + timedelta(seconds=lease_s)))
    return Grant(allowed, shares[holder])


def drop_share(engine: Engine, model: str, holder: str) -> None:
    """Give every slot back (the holder's job ended or stopped)."""
    table = MODEL_BUDGET
    with engine.begin() as conn:
        conn.execute(delete(table).where(table.c.model == model, table.c.holder == holder))


def fair_shares(capacity: int, wants: dict[str, int]) -> dict[str, int]:
    """Max-min fair split of `capacity` among holders wanting `wants` slots: nobody gets
    more than it wants, what one does not want goes to the others, and leftover single
    slots go to the first holders by name (deterministic, so every holder computes the
    same split)."""
    shares = {h: 0 for h in wants}
    left = capacity
    hungry = sorted(h for h, w in wants.items() if w > 0)
    while left > 0 and hungry:
        each = left // len(hungry)
        if each == 0:
            for h in hungry[:left]:
                shares[h] += 1
            break
        for h in hungry:
            take = min(each, wants[h] - shares[h])
            shares[h] += take
            left -= take
        hungry = [h for h in hungry if shares[h] < wants[h]]
    return shares
