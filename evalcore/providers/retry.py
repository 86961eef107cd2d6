"""When to try a provider call again, and how long to wait first.

The policy is kept apart from the transport (as in `aiohttp_retry/retry_options.py`):
`should_retry()` and `backoff()` are pure and tested offline; `RetryBudget` is the only
place that counts attempts and sleeps between them.

Ladder (after `openai-python`'s `_should_retry`):

1. an `x-should-retry: true|false` header from the server wins;
2. statuses 408, 409, 429 and 5xx are retried; every other status (400, 401, 403, 404,
   422, ...) is final, because asking again cannot fix the request;
3. transport trouble is retried: timeouts, refused or reset connections, a server that
   hung up, a truncated body;
4. a 429 is the provider saying "later", not "no": it has its own budget, a total
   wait of `rate_limit_wait` seconds (minutes by default), and does not use up the
   attempts meant for real failures (5xx, timeouts), so a run against a provider that
   admits fewer calls than our concurrency loses no answer while `limits.py` lowers the
   concurrency to what it admits;
5. a 200 whose body cannot be parsed (`MalformedReplyError`) is retried, but at most
   `MAX_MALFORMED_RETRIES` times per call: a proxy hiccup heals on a retry, a server that
   always answers garbage would only burn the budget.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

log = logging.getLogger(__name__)

RETRYABLE_STATUSES = frozenset({408, 409, 429})
"""Besides every 5xx: request timeout, conflict (lock contention), rate limited."""
BACKOFF_BASE = 0.5
"""Seconds; the first retry waits up to this much (full jitter)."""
BACKOFF_CAP = 30.0
"""Seconds; no computed backoff is longer."""
MAX_RETRY_AFTER = 60.0
"""Seconds; a longer Retry-After from the server is clipped to this."""
RETRY_AFTER_JITTER = 0.1
"""Fraction added at random on top of Retry-After so a crowd told "1 s" does not return at once."""
RATE_LIMIT_WAIT = 600.0
"""Seconds a call may spend waiting on 429s in total (`ModelConfig.rate_limit_wait`)."""
MAX_MALFORMED_RETRIES = 2
"""Retries allowed for 200 replies with an unparseable body, per call."""
ERROR_TEXT_LIMIT = 300
"""Characters of provider error text kept in `ChatReply.error`."""

RetryKind = Literal[
    "ok", "status", "rate_limited", "transport", "timeout", "malformed", "header", "final"
]
"""Why an attempt ended; "rate_limited" (a 429) is budgeted apart from the others."""


class MalformedReplyError(ValueError):
    """The server said 200 but the body is not the expected JSON (retried, a little)."""


@dataclass(frozen=True)
class RetryDecision:
    """Whether to try again, why, and how long the server asked us to wait."""

    retry: bool
    reason: str
    kind: RetryKind = "final"
    retry_after: float | None = None
    """Seconds from Retry-After / retry-after-ms, when the server sent one."""


def _header(headers: Mapping[str, str] | None, name: str) -> str | None:
    if not headers:
        return None
    value = headers.get(name)
    if value is None:  # plain dicts are case-sensitive; aiohttp's CIMultiDict is not
        lower = name.lower()
        value = next((v for k, v in headers.items() if k.lower() == lower), None)
    return value


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait: `retry-after-ms`, then `Retry-After` (seconds or HTTP-date).

    Returns None when absent or unreadable; negative waits become 0.
    """
    ms = _header(headers, "retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = _header(headers, "retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _is_retryable_exception(exc: BaseException) -> tuple[bool, RetryKind, str]:
    if isinstance(exc, MalformedReplyError):
        return True, "malformed", f"malformed reply: {exc}"
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return True, "timeout", "timed out"
    try:
        import aiohttp
    except ImportError:  # pragma: no cover - aiohttp is a runtime requirement
        aiohttp = None
    if aiohttp is not None:
        if isinstance(
            exc,
            (
                aiohttp.ServerDisconnectedError,
                aiohttp.ClientConnectionError,
                aiohttp.ClientPayloadError,
            ),
        ):
            return True, "transport", f"connection trouble: {type(exc).__name__}: {exc}"
        if isinstance(exc, aiohttp.ClientError):  # invalid URL, bad content type, ...
            return False, "final", f"{type(exc).__name__}: {exc}"
    if isinstance(exc, (ConnectionError, OSError)):
        return True, "transport", f"connection trouble: {type(exc).__name__}: {exc}"
    return False, "final", f"{type(exc).__name__}: {exc}"


def should_retry(
    status: int | None, headers: Mapping[str, str] | None = None, exc: BaseException | None = None
) -> RetryDecision:
    """Decide from the status, headers or exception of one failed attempt.

    Args:
        status: HTTP status, or None when no response arrived.
        headers: response headers (any mapping; names are matched case-insensitively).
        exc: the exception the attempt raised, if any (a `MalformedReplyError` for a bad 200).
    """
    retry_after = parse_retry_after(headers)
    forced = _header(headers, "x-should-retry")
    if forced is not None and forced.strip().lower() in {"true", "false"}:
        retry = forced.strip().lower() == "true"
        log.debug("retry decided by x-should-retry=%s (status %s)", forced, status)
        kind: RetryKind = "rate_limited" if retry and status == 429 else "header"
        return RetryDecision(retry, f"server sent x-should-retry: {forced}", kind, retry_after)
    if exc is not None:
        retry, kind, reason = _is_retryable_exception(exc)
        if status is not None:
            reason = f"HTTP {status}: {reason}"
        log.debug("retry=%s for exception %s", retry, reason)
        return RetryDecision(retry, reason, kind, retry_after)
    if status is None:
        return RetryDecision(True, "no response", "transport", retry_after)
    if 200 <= status < 300:
        return RetryDecision(False, f"HTTP {status}", "ok", retry_after)
    if status == 429:
        return RetryDecision(True, "HTTP 429", "rate_limited", retry_after)
    if status in RETRYABLE_STATUSES or status >= 500:
        log.debug("retrying status %s", status)
        return RetryDecision(True, f"HTTP {status}", "status", retry_after)
    log.debug("not retrying status %s", status)
    return RetryDecision(False, f"HTTP {status}", "final", retry_after)


def backoff(
    attempt: int,
    retry_after: float | None = None,
    *,
    base: float = BACKOFF_BASE,
    cap: float = BACKOFF_CAP,
    rng: Callable[[], float] = random.random,
) -> float:
    """Seconds to wait before retry number `attempt` (1 = first retry).

    Without a server hint: full jitter, `rng() * min(cap, base * 2**(attempt-1))`, which
    spreads a crowd of failed calls evenly (AWS "Exponential Backoff and Jitter").
    With Retry-After: that many seconds (clipped to `MAX_RETRY_AFTER`) plus up to
    `RETRY_AFTER_JITTER` of it at random.
    """
    if retry_after is not None:
        wait = min(max(0.0, retry_after), MAX_RETRY_AFTER)
        return wait * (1.0 + RETRY_AFTER_JITTER * rng())
    ceiling = min(cap, base * (2 ** max(0, attempt - 1)))
    return rng() * ceiling


class RetryBudget:
    """Counts one call's attempts, retries of malformed replies and time spent waiting.

    Two budgets: failures (5xx, timeouts, resets, ...) may use `max_attempts` attempts and
    `max_wait` seconds of waiting; 429s do not count there and may wait `rate_limit_wait`
    seconds in total. `next_wait()` returns the seconds to sleep before the next attempt,
    or None when the call must stop (not retryable, or a budget is spent).
    """

    def __init__(
        self,
        max_attempts: int,
        max_wait: float,
        *,
        rate_limit_wait: float = RATE_LIMIT_WAIT,
        rng: Callable[[], float] = random.random,
        base: float = BACKOFF_BASE,
        cap: float = BACKOFF_CAP,
    ) -> None:
        self.max_attempts = max_attempts
        self.max_wait = max_wait
        self.rate_limit_wait = rate_limit_wait
        self.attempts = 0
        self.retries = 0
        self.malformed = 0
        self.waited = 0.0
        self.rate_limited = 0
        """Attempts that ended in a 429 (not counted against `max_attempts`)."""
        self.rate_waited = 0.0
        self.stop_reason = ""
        self._rng, self._base, self._cap = rng, base, cap

    def start_attempt(self) -> int:
        """Count an attempt; returns its number (1-based, 429s included)."""
        self.attempts += 1
        return self.attempts

    def next_wait(self, decision: RetryDecision) -> float | None:
        """The wait before the next attempt, or None (and `stop_reason` set) to give up."""
        if not decision.retry:
            self.stop_reason = "not retryable"
            return None
        if decision.kind == "rate_limited":
            return self._rate_limited_wait(decision)
        failures = self.attempts - self.rate_limited
        if failures >= self.max_attempts:
            self.stop_reason = f"gave up after {failures} attempts"
            if self.rate_limited:
                self.stop_reason += f" (not counting {self.rate_limited} answers of HTTP 429)"
            return None
        if decision.kind == "malformed":
            if self.malformed >= MAX_MALFORMED_RETRIES:
                self.stop_reason = f"gave up after {self.malformed + 1} malformed replies"
                return None
            self.malformed += 1
        wait = backoff(
            failures, decision.retry_after, base=self._base, cap=self._cap, rng=self._rng
        )
        if self.waited + wait > self.max_wait:
            self.stop_reason = (
                f"gave up after {self.attempts} attempts: next wait {wait:.1f}s "
                f"would pass max_retry_wait={self.max_wait:g}s"
            )
            return None
        self.retries += 1
        self.waited += wait
        return wait

    def _rate_limited_wait(self, decision: RetryDecision) -> float | None:
        """A 429: the server's Retry-After (or backoff), within `rate_limit_wait` in total."""
        self.rate_limited += 1
        wait = backoff(
            self.rate_limited, decision.retry_after, base=self._base, cap=self._cap, rng=self._rng
        )
        if self.rate_waited + wait > self.rate_limit_wait:
            self.stop_reason = (
                f"still rate limited after {self.rate_limited} answers of HTTP 429 and "
                f"{self.rate_waited:.0f}s of waiting (rate_limit_wait={self.rate_limit_wait:g}s): "
                "raise the model's rate_limit_wait or lower its concurrency/rpm"
            )
            return None
        self.retries += 1
        self.rate_waited += wait
        return wait

    async def sleep(self, seconds: float) -> None:
        """Wait before the next attempt (the only sleep in the provider path besides limits)."""
        await asyncio.sleep(seconds)


def truncate(text: str, limit: int = ERROR_TEXT_LIMIT) -> str:
    """Shorten provider error text for `ChatReply.error` and logs."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


ATTEMPT_GATE: ContextVar[Callable[[], Awaitable[None]] | None] = ContextVar(
    "evalcore_attempt_gate", default=None)
"""Awaited before every attempt of a model call (`attempt_gate`). A job's tasks set it to
wait while the job's lease may have run out: the job may be another worker's by then,
and an attempt sent now would be paid twice (`runner.jobs.JobContext.lease_held`)."""


async def attempt_gate() -> None:
    """Wait at the ATTEMPT_GATE the caller's context set, if any."""
    gate = ATTEMPT_GATE.get()
    if gate is not None:
        await gate()
