"""ModelClient against the fault-injecting server: every call answered or stored as an error."""

from __future__ import annotations

import asyncio
import json
import logging

import msgspec
import pytest

from evalcore.providers.base import ChatReply, ChatRequest, ModelConfig
from evalcore.providers.client import ModelClient, close_clients, get_client, test_connection
from evalcore.providers.retry import MAX_MALFORMED_RETRIES
from tests.fakes.fault_server import FaultConfig, FaultServer

pytestmark = pytest.mark.integration

SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"type": "integer", "enum": [0, 1]}, "reason": {"type": "string"}},
    "required": ["verdict", "reason"],
}


def cfg(server: FaultServer, **kw) -> ModelConfig:
    base = {
        "name": "fake",
        "kind": "openai",
        "base_url": server.openai_url,
        "model": "fake-1",
        "timeout": 2.0,
        "concurrency": 4,
        "max_attempts": 6,
        "max_retry_wait": 30.0,
    }
    base.update(kw)
    if base["kind"] == "ollama":
        base["base_url"] = server.url
    return ModelConfig(**base)


def ask(config: ModelConfig, prompts: list[str], **req) -> tuple[list[ChatReply], ModelClient]:
    """Run the prompts concurrently through one client (fast, fixed backoff jitter)."""

    async def main():
        client = ModelClient(config, rng=lambda: 0.05)
        try:
            replies = await asyncio.gather(
                *(client.chat(ChatRequest.user(p, **req)) for p in prompts)
            )
        finally:
            await close_clients()
        return replies, client

    return asyncio.run(main())


@pytest.fixture()
def server():
    with FaultServer(FaultConfig(seed=1)) as srv:
        yield srv


def test_latency_concurrency_and_tokens(server):
    server.reconfigure(latency=0.05)
    replies, client = ask(cfg(server, concurrency=3), [f"What is {i} + 1?" for i in range(9)])
    assert [r.text for r in replies] == [f"The answer is {i + 1}." for i in range(9)]
    assert all(r.ok and r.attempts == 1 and r.latency_ms >= 50 for r in replies)
    assert all(r.prompt_tokens == 5 and r.completion_tokens == 4 for r in replies)
    assert server.stats.requests == 9 and server.stats.max_in_flight <= 3
    assert client.stats.as_dict() == {
        "calls": 9,
        "attempts": 9,
        "retries": 0,
        "errors": 0,
        "overloads": 0,
    }


def test_cap_below_concurrency_costs_time_never_answers(server):
    server.reconfigure(latency=0.02, cap=2, retry_after=0.02)
    n = 40
    replies, client = ask(cfg(server, concurrency=8), [f"q {i}" for i in range(n)])
    assert all(r.ok for r in replies), [r.error for r in replies if not r.ok]
    assert server.stats.outcomes["429"] == client.stats.overloads > 0
    assert client.stats.retries >= client.stats.overloads
    assert client.limiter.decreases >= 1
    assert server.stats.max_in_flight <= 2
    # AIMD avoids most of the 429s a fixed limit of 8 would cause (6 per wave of 8)
    assert client.stats.overloads < n
    # once the provider lifts its cap, the limit grows back to the configured 8
    server.reconfigure(cap=0, latency=0.0)

    async def recover():  # 8 callers, so calls wait for a slot and the limit has reason to grow
        async def caller():
            for _ in range(40):
                await client.chat(ChatRequest.user("more"))

        await asyncio.gather(*(caller() for _ in range(8)))
        await close_clients()

    asyncio.run(recover())
    assert client.limiter.limit == 8


def test_two_percent_500s_are_retried(server):
    server.reconfigure(error_rate=0.02, seed=3)
    replies, client = ask(cfg(server, concurrency=10), [f"p{i}" for i in range(100)])
    assert all(r.ok for r in replies)
    assert server.stats.outcomes["500"] > 0
    assert client.stats.retries == server.stats.outcomes["500"]
    assert server.stats.requests == 100 + server.stats.outcomes["500"]


def test_timeouts_are_retried_then_reported(server):
    server.reconfigure(script=["timeout", "timeout"])
    replies, _ = ask(cfg(server, timeout=0.3), ["slow"])
    assert replies[0].ok and replies[0].attempts == 3
    server.reconfigure(script=["timeout", "timeout"])
    replies, client = ask(cfg(server, timeout=0.3, max_attempts=2), ["slow"])
    assert not replies[0].ok and "timed out after 0.3s" in replies[0].error
    assert replies[0].attempts == 2 and client.stats.errors == 1


def test_connection_resets_are_retried(server):
    server.reconfigure(script=["reset", "reset"])
    replies, client = ask(cfg(server), ["What is 1 + 1?"])
    assert replies[0].text == "The answer is 2." and replies[0].attempts == 3
    assert client.stats.retries == 2


def test_malformed_bodies_retried_a_little(server):
    server.reconfigure(script=["malformed"])
    replies, _ = ask(cfg(server), ["x"])
    assert replies[0].ok and replies[0].attempts == 2
    server.reconfigure(script=["malformed"] * 5)
    replies, _ = ask(cfg(server), ["x"])
    assert not replies[0].ok and "malformed" in replies[0].error
    assert replies[0].attempts == MAX_MALFORMED_RETRIES + 1


def test_exhausted_attempts_give_error_reply_not_exception(server, caplog):
    server.reconfigure(error_rate=1.0)
    with caplog.at_level(logging.DEBUG, logger="evalcore.providers.client"):
        replies, client = ask(cfg(server, max_attempts=3), ["a", "b"])
    assert all(not r.ok and r.attempts == 3 for r in replies)
    assert "HTTP 500: injected server error" in replies[0].error
    assert "3 attempts" in replies[0].error
    assert client.stats.errors == 2 and client.stats.retries == 4
    assert any(
        "model fake" in rec.getMessage() and "retry in" in rec.getMessage()
        for rec in caplog.records
    )


def test_401_is_final_and_key_never_shown(server, monkeypatch, caplog):
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-test-1234567890")
    server.reconfigure(script=["401"])
    with caplog.at_level(logging.DEBUG):
        replies, _ = ask(cfg(server, api_key_env="FAKE_PROVIDER_KEY"), ["x"])
    reply = replies[0]
    assert not reply.ok and reply.attempts == 1 and "HTTP 401" in reply.error
    assert "Incorrect API key" in reply.error
    assert "sk-test-1234567890" not in reply.error
    assert "sk-test-1234567890" not in caplog.text


def test_ollama_dialect(server):
    replies, _ = ask(cfg(server, kind="ollama"), ["What is 2 + 3?"])
    assert replies[0].text == "The answer is 5."
    assert (replies[0].prompt_tokens, replies[0].completion_tokens) == (5, 4)
    fmt = {"type": "json_schema", "json_schema": {"name": "judge", "schema": SCHEMA}}
    replies, _ = ask(cfg(server, kind="ollama"), ["judge this"], response_format=fmt)
    assert set(json.loads(replies[0].text)) == {"verdict", "reason"}
    replies, _ = ask(cfg(server), ["judge this"], response_format=fmt)
    assert json.loads(replies[0].text)["verdict"] in (0, 1)


def test_get_client_is_cached_per_loop_and_config(server):
    config = cfg(server)

    async def main():
        first = get_client(config)
        same = get_client(config)
        changed = get_client(msgspec.structs.replace(config, concurrency=2))
        reply = await changed.chat(ChatRequest.user("hi"))
        await close_clients()
        return first is same, first is changed, reply.ok

    assert asyncio.run(main()) == (True, False, True)


def test_test_connection_ok_and_refused(server):
    ok = asyncio.run(test_connection(cfg(server)))
    assert ok.ok and ok.text == "The answer is 42." and ok.latency_ms > 0
    assert server.stats.prompts[-1] == "Reply with the word OK"
    dead = cfg(server, base_url="http://127.0.0.1:9/v1", max_retry_wait=1.0)
    bad = asyncio.run(test_connection(dead))
    assert not bad.ok and "connection" in bad.error.lower() and bad.attempts <= 2
