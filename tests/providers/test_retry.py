"""should_retry / backoff / RetryBudget, offline with injected randomness."""

from __future__ import annotations

import email.utils
import time

import aiohttp
import pytest

from evalcore.providers.retry import (
    BACKOFF_CAP,
    MAX_MALFORMED_RETRIES,
    MAX_RETRY_AFTER,
    RETRY_AFTER_JITTER,
    MalformedReplyError,
    RetryBudget,
    RetryDecision,
    backoff,
    parse_retry_after,
    should_retry,
)


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 599])
def test_retryable_statuses(status):
    assert should_retry(status, {}).retry


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422, 418])
def test_final_statuses(status):
    decision = should_retry(status, {})
    assert not decision.retry
    assert str(status) in decision.reason


def test_x_should_retry_header_wins_both_ways():
    assert not should_retry(500, {"x-should-retry": "false"}).retry
    assert should_retry(400, {"X-Should-Retry": "true"}).retry


@pytest.mark.parametrize(
    "exc",
    [
        TimeoutError(),
        aiohttp.ServerDisconnectedError(),
        aiohttp.ClientConnectionError("reset"),
        aiohttp.ClientPayloadError("cut"),
        ConnectionResetError(104, "reset by peer"),
        MalformedReplyError("no choices"),
    ],
)
def test_transport_trouble_is_retryable(exc):
    assert should_retry(None, None, exc).retry


def test_malformed_kind_and_invalid_url_is_final():
    assert should_retry(200, {}, MalformedReplyError("x")).kind == "malformed"
    assert not should_retry(None, None, aiohttp.InvalidURL("nope")).retry
    assert not should_retry(None, None, ValueError("bug")).retry


def test_parse_retry_after_forms():
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "0.25"}) == 0.25
    assert parse_retry_after({"retry-after-ms": "1500", "Retry-After": "9"}) == 1.5
    assert parse_retry_after({}) is None
    assert parse_retry_after({"Retry-After": "soon"}) is None
    now = time.time()
    date = email.utils.formatdate(now + 20, usegmt=True)
    assert 18.0 <= parse_retry_after({"Retry-After": date}, now=now) <= 20.0
    past = email.utils.formatdate(now - 100, usegmt=True)
    assert parse_retry_after({"Retry-After": past}, now=now) == 0.0


def test_decision_carries_retry_after():
    assert should_retry(429, {"Retry-After": "2"}).retry_after == 2.0


def test_backoff_exponential_full_jitter():
    top = [backoff(n, None, base=0.5, cap=30, rng=lambda: 1.0) for n in range(1, 10)]
    assert top[:4] == [0.5, 1.0, 2.0, 4.0]
    assert max(top) == 30  # capped
    assert backoff(3, None, rng=lambda: 0.0) == 0.0
    assert backoff(3, None, base=0.5, rng=lambda: 0.5) == 1.0


def test_backoff_honours_retry_after_up_to_cap():
    assert backoff(1, 2.0, rng=lambda: 0.0) == 2.0
    assert backoff(1, 2.0, rng=lambda: 1.0) == pytest.approx(2.0 * (1 + RETRY_AFTER_JITTER))
    assert backoff(1, 10_000.0, rng=lambda: 0.0) == MAX_RETRY_AFTER
    assert backoff(1, 0.0, rng=lambda: 0.7) == 0.0


def test_budget_stops_at_max_attempts():
    budget = RetryBudget(3, 1000, rng=lambda: 1.0)
    waits = []
    while True:
        budget.start_attempt()
        wait = budget.next_wait(should_retry(503, {}))
        if wait is None:
            break
        waits.append(wait)
    assert budget.attempts == 3 and waits == [0.5, 1.0]
    assert "3 attempts" in budget.stop_reason


def test_budget_stops_when_wait_would_exceed_max_wait():
    budget = RetryBudget(20, 5.0, rng=lambda: 1.0)
    total = 0.0
    while budget.start_attempt() and (wait := budget.next_wait(should_retry(500, {}))) is not None:
        total += wait
    assert total <= 5.0 and budget.attempts < 20
    assert "max_retry_wait" in budget.stop_reason


def test_budget_limits_malformed_retries():
    budget = RetryBudget(10, 1000, rng=lambda: 0.0)
    decision = should_retry(200, {}, MalformedReplyError("bad"))
    results = []
    for _ in range(5):
        budget.start_attempt()
        results.append(budget.next_wait(decision))
    assert results[:MAX_MALFORMED_RETRIES] == [0.0] * MAX_MALFORMED_RETRIES
    assert results[MAX_MALFORMED_RETRIES] is None


def test_budget_never_retries_final():
    budget = RetryBudget(5, 100)
    budget.start_attempt()
    assert budget.next_wait(RetryDecision(False, "HTTP 401")) is None
    assert BACKOFF_CAP == 30.0


def test_429_is_rate_limited_kind_also_when_the_header_says_retry():
    assert should_retry(429, {"Retry-After": "2"}).kind == "rate_limited"
    assert should_retry(429, {"x-should-retry": "true"}).kind == "rate_limited"
    assert not should_retry(429, {"x-should-retry": "false"}).retry


def test_429s_do_not_use_up_the_attempts_for_real_failures():
    budget = RetryBudget(3, 1000, rate_limit_wait=600, rng=lambda: 0.0)
    rate_limited = should_retry(429, {"Retry-After": "1"})
    for _ in range(50):  # far more 429s than max_attempts: each waits the server's 1 s
        budget.start_attempt()
        assert budget.next_wait(rate_limited) == 1.0
    waits = []
    while True:  # then real failures still get their 3 attempts
        budget.start_attempt()
        wait = budget.next_wait(should_retry(503, {}))
        if wait is None:
            break
        waits.append(wait)
    assert len(waits) == 2 and budget.attempts == 53 and budget.rate_limited == 50
    assert "3 attempts (not counting 50 answers of HTTP 429)" in budget.stop_reason


def test_429s_stop_when_their_total_wait_would_pass_rate_limit_wait():
    budget = RetryBudget(6, 120, rate_limit_wait=10, rng=lambda: 0.0)
    decision = should_retry(429, {"Retry-After": "3"})
    waits = []
    while budget.start_attempt() and (wait := budget.next_wait(decision)) is not None:
        waits.append(wait)
    assert waits == [3.0, 3.0, 3.0] and budget.rate_waited == 9.0
    assert "rate_limit_wait=10s" in budget.stop_reason and "concurrency" in budget.stop_reason


def test_429_without_retry_after_backs_off_exponentially_on_its_own_count():
    budget = RetryBudget(6, 120, rate_limit_wait=600, rng=lambda: 1.0)
    budget.start_attempt()
    assert budget.next_wait(should_retry(500, {})) == 0.5  # first real failure
    waits = []
    for _ in range(4):
        budget.start_attempt()
        waits.append(budget.next_wait(should_retry(429, {})))
    assert waits == [0.5, 1.0, 2.0, 4.0]
