"""THE model client: one aiohttp session per event loop, retries, limits, never raises.

`ModelClient.chat()` turns provider trouble (HTTP errors, timeouts, resets, garbage
bodies) into a `ChatReply` with `error` set, after the retries `retry.py` allows and
inside the limits `limits.py` keeps, so a run stores the failure and goes on. Only a
configuration mistake the user must fix (e.g. a missing GGUF, a model without
base_url) raises `ModelConfigError`: every call would fail the same way.

The API key is read from the environment at call time, sent only as a header, and
masked (`evalcore.masking`) in any text before it is cut short.

Every call has a bounded cost: `deadline` seconds in all (attempts, waits for a slot
and waits between attempts), each attempt's timeout shortened to what is left, and
bodies read up to `max_reply_bytes` (never buffered whole).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from evalcore.providers import event_loop
from evalcore.errors import ModelConfigError
from evalcore.masking import mask_text
from evalcore.providers.base import REFUSAL, ChatReply, ChatRequest, ModelConfig
from evalcore.providers.limits import AdaptiveLimiter, RateLimiter
from evalcore.providers.catalog import provider_for
from evalcore.providers.retry import (
    MalformedReplyError,
    RetryBudget,
    RetryDecision,
    attempt_gate,
    truncate,
)
from evalcore.providers.wire import (
    EmptyReplyError,
    ParsedReply,
    RefusalError,
    apply_defaults,
)

if TYPE_CHECKING:
    import aiohttp

log = logging.getLogger(__name__)

CONNECTOR_LIMIT = 512
"""Open connections per session (all models of one loop); the limiters decide concurrency."""
CONNECTOR_LIMIT_PER_HOST = 256
DNS_CACHE_TTL = 300
"""Seconds a DNS answer is reused."""
TEST_PROMPT = "Reply with the word OK"
DEADLINE_GRACE = 0.25
"""Seconds past the deadline a slot wait may last before the call is ended for it."""


@dataclass
class ClientStats:
    """Counters for one client: calls made, HTTP attempts, retries, calls that ended in error."""

    calls: int = 0
    attempts: int = 0
    retries: int = 0
    errors: int = 0
    overloads: int = 0
    """"Too many calls" answers seen (429, or what the provider counts as one)."""

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class ReplyTooLargeError(ValueError):
    """A body longer than the model's `max_reply_bytes` (not retried: it would be again)."""


_OWN_ERRORS = (ReplyTooLargeError, EmptyReplyError, RefusalError)
"""Errors whose text is the whole story (no exception class name in front)."""


async def read_limited(resp: aiohttp.ClientResponse, limit: int) -> bytes:
    """The body, read in chunks up to `limit` bytes; a longer one raises
    `ReplyTooLargeError` naming its size (the announced Content-Length, else the bytes
    seen before stopping), so a 10 MB reply never sits in memory."""
    announced = resp.content_length
    if announced is not None and announced > limit:
        raise ReplyTooLargeError(
            f"reply of {announced:,} bytes is larger than max_reply_bytes={limit:,}")
    if announced is not None:  # within the limit: one read, as a bare client does
        return await resp.read()
    chunks, size = [], 0
    async for chunk in resp.content.iter_chunked(65_536):
        size += len(chunk)
        if size > limit:
            raise ReplyTooLargeError(
                f"reply of more than {limit:,} bytes (stopped reading at {size:,}): "
                f"larger than max_reply_bytes={limit:,}")
        chunks.append(chunk)
    return b"".join(chunks)


@dataclass
class _Outcome:
    status: int | None = None
    headers: Mapping[str, str] | None = None
    parsed: ParsedReply | None = None
    exc: BaseException | None = None
    provider_text: str = ""
    refused: bool = False


def _make_session() -> aiohttp.ClientSession:
    """A session under `evalcore.outbound`'s policy for models: redirects refused, the
    admin-set endpoint's address not filtered (a local Ollama stays reachable)."""
    from evalcore import outbound

    return outbound.session(guard_addresses=False, limit=CONNECTOR_LIMIT,
                            limit_per_host=CONNECTOR_LIMIT_PER_HOST, ttl_dns_cache=DNS_CACHE_TTL)


_sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aiohttp.ClientSession] = (
    weakref.WeakKeyDictionary()
)
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, ModelClient]] = (
    weakref.WeakKeyDictionary()
)


def loop_session() -> aiohttp.ClientSession:
    """The pooled session of the running event loop (created on first use)."""
    loop = asyncio.get_running_loop()
    session = _sessions.get(loop)
    if session is None or session.closed:
        session = _sessions[loop] = _make_session()
    return session


class ModelClient:
    """Calls one model. Create through `get_client(config)` to share limits within a loop."""

    def __init__(
        self,
        config: ModelConfig,
        *,
        session: aiohttp.ClientSession | None = None,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.config = config
        self.provider = provider_for(config)
        self.stats = ClientStats()
        self.limiter = AdaptiveLimiter(config.concurrency, name=config.name)
        self.rate = RateLimiter(config.rpm)
        self._session = session
        self._rng = rng

    async def _base_url(self) -> str:
        return await self.provider.endpoint(self.config)

    def _redact(self, text: str, key: str | None = None) -> str:
        key = self.config.api_key() if key is None else key
        return mask_text(text, [key] if key else None)

    async def chat(self, request: ChatRequest) -> ChatReply:
        """Ask the model; the reply carries `error` instead of raising for provider trouble."""
        import aiohttp

        self.stats.calls += 1
        request = apply_defaults(self.config, request)
        base_url = await self._base_url()  # may load the local model: not part of latency
        started: float | None = None  # from the first attempt: queueing for a slot is not latency
        key = self.config.api_key()  # read once a call (the environment, at call time)
        # the provider found when the client was made: no catalog look-up a call
        wire = self.provider.build_request(self.config, request, base_url.rstrip("/"), key)
        # encoded once, in C, for every attempt (aiohttp's `json=` runs json.dumps each one)
        body = msgspec.json.encode(wire.json)
        headers = wire.headers if any(k.lower() == "content-type" for k in wire.headers) else {
            **wire.headers, "Content-Type": "application/json"}  # (json= used to add it)
        session = self._session or loop_session()
        budget = RetryBudget(self.config.max_attempts, self.config.max_retry_wait,
                             rate_limit_wait=self.config.rate_limit_wait, rng=self._rng)
        deadline = self.config.deadline
        problem = ""
        while True:
            await attempt_gate()  # a job whose lease may have run out sends nothing
            attempt = budget.start_attempt()
            self.stats.attempts += 1
            left = deadline - (time.perf_counter() - started) if started is not None else deadline
            try:
                # the attempt's own timeout ends it first; this bounds the wait for a slot
                grace = None if started is None else left + DEADLINE_GRACE
                async with asyncio.timeout(grace), self.rate:
                    async with self.limiter.slot() as permit:
                        if started is None:
                            started = time.perf_counter()
                        left = deadline - (time.perf_counter() - started)
                        if left <= 0:  # (aiohttp reads a total of 0 as "no timeout")
                            raise TimeoutError
                        timeout = aiohttp.ClientTimeout(total=min(self.config.timeout, left))
                        outcome = await self._attempt(session, wire.url, body, headers,
                                                      timeout)
                        if self.provider.is_overload(outcome.status):
                            self.stats.overloads += 1
                            self.limiter.on_overload(permit)
                        elif outcome.parsed is not None:
                            self.limiter.on_success()
            except TimeoutError:  # the deadline passed while waiting for a slot
                return self._fail(self._past_deadline(attempt - 1, problem), started, attempt - 1)
            elapsed_ms = (time.perf_counter() - started) * 1000
            if outcome.parsed is not None:
                outcome.parsed.text = self._redact(outcome.parsed.text, key)
                return outcome.parsed.to_reply(latency_ms=elapsed_ms, attempts=attempt)
            decision = self.provider.should_retry(outcome.status, outcome.headers, outcome.exc)
            problem = self._describe(outcome, decision, timeout)
            if outcome.refused or isinstance(outcome.exc, _OWN_ERRORS):
                return self._fail(problem, started, attempt)
            wait = budget.next_wait(decision)
            left = deadline - (time.perf_counter() - started)
            if wait is not None and (wait >= left or left <= 0):
                return self._fail(self._past_deadline(attempt, problem), started, attempt)
            if wait is None:
                past = left <= 0.001 and outcome.exc is not None
                text = self._past_deadline(attempt, problem) if past else (
                    f"{problem} ({budget.stop_reason})")
                return self._fail(text, started, attempt)
            self.stats.retries += 1
            log.debug(
                "model %s: attempt %d failed (%s); retry in %.2fs",
                self.config.name,
                attempt,
                problem,
                wait,
            )
            await budget.sleep(wait)

    def _past_deadline(self, attempts: int, problem: str) -> str:
        last = f"; last: {problem}" if problem else ""
        return (f"deadline of {self.config.deadline:g}s passed after {attempts} "
                f"attempt(s){last}")

    def _fail(self, text: str, started: float | None, attempts: int) -> ChatReply:
        """The error reply of a call that ends here (text masked before it is stored)."""
        self.stats.errors += 1
        text = self._redact(text)
        log.debug("model %s: call failed: %s", self.config.name, text)
        elapsed = (time.perf_counter() - started) * 1000 if started is not None else 0.0
        return ChatReply(error=text, latency_ms=elapsed, attempts=max(1, attempts))

    def _describe(self, outcome: _Outcome, decision: RetryDecision,
                  timeout: aiohttp.ClientTimeout) -> str:
        if outcome.status is not None and outcome.exc is None:
            text = f"HTTP {outcome.status}"
            return f"{text}: {outcome.provider_text}" if outcome.provider_text else text
        if isinstance(outcome.exc, (asyncio.TimeoutError, TimeoutError)):
            return f"timed out after {timeout.total:.3g}s"
        if isinstance(outcome.exc, _OWN_ERRORS):
            return truncate(self._redact(str(outcome.exc)))
        return truncate(self._redact(decision.reason))

    async def _attempt(
        self, session: aiohttp.ClientSession, url: str, body: bytes, headers: dict[str, str],
        timeout: aiohttp.ClientTimeout,
    ) -> _Outcome:
        import aiohttp

        try:
            async with session.post(url, data=body, headers=headers, timeout=timeout) as resp:
                body = await read_limited(resp, self.config.max_reply_bytes)
                if 200 <= resp.status < 300:
                    try:
                        return _Outcome(resp.status, resp.headers,
                                        self.provider.parse_reply(self.config, body))
                    except (MalformedReplyError, EmptyReplyError, RefusalError) as exc:
                        return _Outcome(resp.status, resp.headers, exc=exc)
                text, code = self.provider.error_details(
                    self._redact(body.decode("utf-8", "replace")))
                if self.provider.is_refusal(code):
                    text = f"{REFUSAL}: HTTP {resp.status} {code}: {text}"
                    return _Outcome(provider_text=text, refused=True, exc=RefusalError(text))
                return _Outcome(resp.status, resp.headers, provider_text=text)
        except (TimeoutError, aiohttp.ClientError, OSError, ReplyTooLargeError) as exc:
            return _Outcome(exc=exc)

    async def aclose(self) -> None:
        """Close the session if this client was given its own."""
        if self._session is not None and not self._session.closed:
            await self._session.close()


def get_client(config: ModelConfig) -> ModelClient:
    """The client for `config.name` on the running loop (limits shared by every caller).

    A changed config (e.g. edited concurrency) replaces the cached client.
    """
    loop = asyncio.get_running_loop()
    clients = _clients.setdefault(loop, {})
    client = clients.get(config.name)
    if client is None or client.config != config:
        client = clients[config.name] = ModelClient(config)
    return client


async def close_clients() -> None:
    """Forget this loop's clients and close its session (call before the loop ends)."""
    loop = asyncio.get_running_loop()
    _clients.pop(loop, None)
    session = _sessions.pop(loop, None)
    if session is not None and not session.closed:
        await session.close()


T = TypeVar("T")


def run_closing_clients(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)` for synchronous callers (the CLI), on `event_loop`'s loop: the
    loop's model clients are closed before the loop ends, as an aiohttp session must not
    outlive its loop."""
    async def main() -> T:
        try:
            return await coro
        finally:
            await close_clients()

    return event_loop.run(main())


async def test_connection(config: ModelConfig) -> ChatReply:
    """Send "Reply with the word OK": the reply (with latency) or the provider's error text.

    Retries are kept short (2 attempts, 5 s of waiting) so a wrong URL or key shows fast.
    """
    quick = msgspec.structs.replace(
        config,
        max_attempts=min(config.max_attempts, 2),
        max_retry_wait=min(config.max_retry_wait, 5.0),
        rate_limit_wait=min(config.rate_limit_wait, 5.0),
    )
    started = time.perf_counter()
    session = _make_session()
    try:
        client = ModelClient(quick, session=session)
        return await client.chat(ChatRequest.user(TEST_PROMPT, max_tokens=16))
    except ModelConfigError as exc:
        return ChatReply(error=str(exc), latency_ms=(time.perf_counter() - started) * 1000)
    finally:
        await session.close()


def test_connection_sync(config: ModelConfig) -> ChatReply:
    """Blocking twin of `test_connection` for the CLI and pages."""
    return asyncio.run(test_connection(config))


test_connection.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
test_connection_sync.__test__ = False  # type: ignore[attr-defined]
