"""What a run's stored calls add up to: how many, for what, their tokens and latency.

One grouped statement over the run's calls; the pages, the CLI and the reports read these
totals instead of counting calls themselves.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import case, func, select

from evalcore.store.db import Bind, reading
from evalcore.store.tables import Call

CALL = Call.__table__

CALL_PASSES = ("answer", "judge", "retried", "rejudge", "analysis", "meaning", "variant")
"""What a run's stored calls were for: its own answers and verdicts, failed attempts kept
aside when they were sent again, and the extra passes over its answers."""
_PASS_OF_STAGE = case(
    (CALL.c.stage == "answer", "answer"), (CALL.c.stage == "judge", "judge"),
    (CALL.c.stage.like("answer#%"), "retried"), (CALL.c.stage.like("judge#%"), "retried"),
    (CALL.c.stage.like("rejudge%"), "rejudge"), (CALL.c.stage == "analysis", "analysis"),
    (CALL.c.stage.like("meaning:%"), "meaning"), else_="variant")


def call_stats(conn: Bind, run_id: int) -> dict[str, Any]:
    """Totals over a run's stored calls: calls, errors, tokens (prompt + completion),
    prompt_tokens, completion_tokens, mean_latency_ms (None without latencies), and
    `by_pass`: {pass: calls} over `CALL_PASSES`, so a re-judged run's count of 570 is
    not read as 570 answers."""
    query = select(_PASS_OF_STAGE, func.count(), func.count(CALL.c.error),
                   func.coalesce(func.sum(CALL.c.prompt_tokens), 0),
                   func.coalesce(func.sum(CALL.c.completion_tokens), 0),
                   func.sum(CALL.c.latency_ms), func.count(CALL.c.latency_ms)
                   ).where(CALL.c.run_id == run_id).group_by(_PASS_OF_STAGE)
    with reading(conn) as tx:
        rows = tx.execute(query).all()
    by_pass = {name: 0 for name in CALL_PASSES}
    calls = errors = prompt = completion = timed = 0
    latency = 0.0
    for name, n, failed, p_tokens, c_tokens, lat_sum, lat_n in rows:
        by_pass[name] += int(n)
        calls, errors = calls + int(n), errors + int(failed)
        prompt, completion = prompt + int(p_tokens), completion + int(c_tokens)
        latency, timed = latency + float(lat_sum or 0), timed + int(lat_n)
    return {"calls": calls, "errors": errors, "tokens": prompt + completion,
            "prompt_tokens": prompt, "completion_tokens": completion,
            "mean_latency_ms": latency / timed if timed else None, "by_pass": by_pass}
