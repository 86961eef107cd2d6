"""What a finished run's figures need, computed once (`RunSummary`): a run of a million
calls is counted when it is first read after it ended, and every later read (its page,
`runs show`, compare, leaderboard, trend, the trust report) reads one row.

A row is keyed by the run's state: status, progress (done, errors, retries), when it
finished, and its newest call's id. Calls are only ever added (a re-judging pass adds
its verdicts, a resume or a retry of failed calls adds the calls it makes, and a retry
first sets the failed ones aside and requeues the run, which ends again later) and are
deleted only with their run, so any change to what the figures count changes the key,
and the next read computes again: a stale row is not used. The newest id is one index
lookup; a count of the calls would read a million index entries at every read. (What the
newest id cannot see: two processes adding calls to one finished run at once on
PostgreSQL, whose ids may commit out of order; a read between the two commits stores
figures without the earlier one's calls until the run's next call: only passes that
add verdicts to a finished run, a re-judge or a meaning judge, run at the same time.)
Runs still going are always computed (their key changes with every call).

What compares several finished runs (their paired tests) is stored too, under the
first run, keyed by every run's state (`pair_summary`).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import msgspec
from sqlalchemy import and_, delete, func, insert, or_, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from evalcore.store.db import reading, transaction
from evalcore.store.tables import Call, RunSummary

CALL = Call.__table__
RUN_SUMMARY = RunSummary.__table__

FINISHED = ("done", "failed", "cancelled")


def state_key(engine: Engine, run: Any) -> str:
    """The run's state as a string: what stored figures must have been computed at."""
    with reading(engine) as conn:
        newest = conn.execute(select(func.max(CALL.c.id)).where(CALL.c.run_id == run.id)
                              ).scalar()
    return "|".join(str(x) for x in (run.status, run.done, run.errors, run.retries,
                                     run.finished_at, newest))


CHUNK_CHARS = 1_000_000
"""A summary longer than this is stored over several rows (`name`, then `name#00001`,
...): the JSON of a 10,000-question report is written a piece at a time, never as one
text beside the report (and the database driver's copies of it). The first row's state
then says how many rows there are (`_first_state`): a summary missing its last row is
computed again, and a reader that knows only one row per name finds none in its state."""


def _first_state(key: str, rows: int) -> str:
    return key if rows == 1 else f"{key}#{rows}"


def _part(name: str, index: int) -> str:
    return name if index == 0 else f"{name}#{index:05d}"


def _where(run_id: int, name: str) -> Any:
    """The rows of `name`: its first and its continuation rows (`CHUNK_CHARS`)."""
    return and_(RUN_SUMMARY.c.run_id == run_id,
                or_(RUN_SUMMARY.c.name == name,
                    RUN_SUMMARY.c.name.startswith(f"{name}#", autoescape=True)))


def _index(row_name: str, name: str) -> int | None:
    """The position of a row of `name` (None: another name's: SQLite's LIKE ignores case)."""
    if row_name == name:
        return 0
    suffix = row_name[len(name) + 1:]
    return int(suffix) if row_name.startswith(f"{name}#") and suffix.isdigit() else None


def stored(engine: Engine, run_id: int, name: str, key: str) -> Any:
    """What was stored under `name` for the run if computed in state `key`, else None."""
    with reading(engine) as conn:
        rows = conn.execute(select(RUN_SUMMARY.c.name, RUN_SUMMARY.c.state, RUN_SUMMARY.c.data)
                            .where(_where(run_id, name))).all()
    parts = sorted((i, row) for row in rows if (i := _index(row.name, name)) is not None)
    if not parts or [i for i, _ in parts] != list(range(len(parts))) or \
            parts[0][1].state != _first_state(key, len(parts)) or \
            any(row.state != key for _, row in parts[1:]):
        return None  # none stored, not in this state, or a row missing
    text = parts[0][1].data if len(parts) == 1 else "".join(row.data for _, row in parts)
    del rows, parts
    # msgspec parses a summary of 10,000 questions several times faster than json
    return msgspec.json.decode(text)


def reads_back_equal(data: Any) -> bool:
    """Whether `data` read back from its JSON equals it: string keys, lists not tuples,
    finite numbers, nothing JSON has no type for (a numpy integer, a date). Checked by
    walking it, not by parsing a second copy of a 10,000-question report."""
    if data is None or isinstance(data, (str, int)):  # bool is an int
        return True
    if isinstance(data, float):
        return math.isfinite(data)  # NaN reads back unequal; msgspec writes inf as null
    if isinstance(data, dict):
        return all(isinstance(k, str) and reads_back_equal(v) for k, v in data.items())
    if isinstance(data, list):
        return all(reads_back_equal(v) for v in data)
    return False


def _plain(value: Any) -> Any:
    """A float subclass (numpy's float64) as the float it equals."""
    if isinstance(value, float):
        return float(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


_ENCODER = msgspec.json.Encoder(enc_hook=_plain)


def _pieces(data: Any, depth: int = 0) -> Iterator[bytes]:
    """The JSON of `data` (what `msgspec.json.encode` writes), two levels of containers
    opened: a report's `stability_results` come one question at a time."""
    if depth < 2 and isinstance(data, (dict, list)):
        is_dict = isinstance(data, dict)
        yield b"{" if is_dict else b"["
        for i, item in enumerate(data.items() if is_dict else data):
            if i:
                yield b","
            if is_dict:
                yield _ENCODER.encode(item[0]) + b":"
            yield from _pieces(item[1] if is_dict else item, depth + 1)
        yield b"}" if is_dict else b"]"
    else:
        yield _ENCODER.encode(data)


def chunks(data: Any, size: int | None = None) -> Iterator[str]:
    """The JSON text of `data` in pieces of about `size` bytes (`CHUNK_CHARS`), cut
    between values."""
    size = size or CHUNK_CHARS
    buf = bytearray()
    for piece in _pieces(data):
        buf += piece
        if len(buf) >= size:
            yield buf.decode()
            buf.clear()
    if buf:
        yield buf.decode()


def store(engine: Engine, run_id: int, name: str, key: str, data: Any) -> None:
    """Replace what is stored under `name` for the run (nothing is stored when `data`
    would read back different from JSON: `reads_back_equal`). A database this process
    cannot write to (a read-only user, a lock held too long) only means the next read
    computes again."""
    if not reads_back_equal(data):
        return
    try:
        with transaction(engine) as conn:
            old = [n for n in conn.execute(select(RUN_SUMMARY.c.name)
                                           .where(_where(run_id, name))).scalars()
                   if _index(n, name) is not None]
            conn.execute(delete(RUN_SUMMARY).where(RUN_SUMMARY.c.run_id == run_id,
                                                   RUN_SUMMARY.c.name.in_(old)))
            pieces = chunks(data)
            first, rows = next(pieces, ""), 1
            for text in pieces:  # the first row last: its state counts the rows
                conn.execute(insert(RUN_SUMMARY).values(run_id=run_id, name=_part(name, rows),
                                                        state=key, data=text))
                rows += 1
            conn.execute(insert(RUN_SUMMARY).values(run_id=run_id, name=name,
                                                    state=_first_state(key, rows), data=first))
    except SQLAlchemyError:
        pass  # a cache: the figures were computed and are returned all the same


def summary(engine: Engine, run: Any, name: str, compute: Callable[[], Any]) -> Any:
    """The run's figures `name`: stored ones computed in its current state, else
    `compute()` (stored for next time when the run has finished, if it survives a JSON
    round trip unchanged: string keys, no tuples, no NaN; else it is computed each time)."""
    return pair_summary(engine, [run], name, compute)


def pair_summary(engine: Engine, runs: Sequence[Any], name: str,
                 compute: Callable[[], Any]) -> Any:
    """`summary` of several runs together (a comparison's paired tests): stored under
    the first run, named after the others too, in the state of every one of them;
    computed each time while any of them has not finished."""
    if any(run.status not in FINISHED for run in runs):
        return compute()
    key = "/".join(state_key(engine, run) for run in runs)
    owner = int(runs[0].id)
    if len(runs) > 1:
        name = f"{name}@{','.join(str(run.id) for run in runs[1:])}"
    found = stored(engine, owner, name, key)
    if found is None:
        found = compute()
        store(engine, owner, name, key, found)
    return found
