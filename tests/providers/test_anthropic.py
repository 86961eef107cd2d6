"""The Anthropic Messages API provider (`evalcore/providers/anthropic.py`) against a local
server that speaks that wire format (`tests/fakes/anthropic_server.py`)."""
from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from evalcore.providers.base import ChatReply, ChatRequest, ModelConfig
from evalcore.providers.catalog import get_provider
from evalcore.providers.client import ModelClient, close_clients
from evalcore.providers.wire import EmptyReplyError, MalformedReplyError, RefusalError
from tests.fakes.anthropic_server import KEY, AnthropicServer

pytestmark = pytest.mark.integration


def echo(text: str, system: str) -> str:
    return f"[{system}] {text}\nsecond line"


def config(server: AnthropicServer, **kw) -> ModelConfig:
    fields = {"name": "claude", "kind": "anthropic", "base_url": server.url,
              "model": "claude-test", "api_key_env": "ANTHROPIC_TEST_KEY", "timeout": 5.0,
              "max_retry_wait": 5.0, **kw}
    return ModelConfig(**fields)


def ask(cfg: ModelConfig, request: ChatRequest) -> tuple[ChatReply, ModelClient]:
    async def main() -> tuple[ChatReply, ModelClient]:
        client = ModelClient(cfg, rng=lambda: 0.0)
        try:
            return await client.chat(request), client
        finally:
            await close_clients()

    return asyncio.run(main())


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_TEST_KEY", KEY)


def test_the_request_speaks_the_messages_format_and_the_reply_is_read():
    with AnthropicServer(echo) as server:
        cfg = config(server, stop=["\n"], temperature=1.5, max_tokens=None, seed=3)
        reply, _ = ask(cfg, ChatRequest.user("What is 2+2?", system="Be brief."))
    assert reply.ok, reply.error
    assert reply.text == "[Be brief.] What is 2+2?"  # cut at the stop sequence
    assert (reply.prompt_tokens, reply.completion_tokens) == (3, 5)  # the fake counts words
    assert reply.finish_reason == "end_turn"
    sent, = server.requests
    headers, body = sent["headers"], sent["body"]
    assert headers["x-api-key"] == KEY and headers["anthropic-version"] == "2023-06-01"
    assert "Authorization" not in headers
    assert body["system"] == "Be brief."
    assert body["messages"] == [{"role": "user", "content": "What is 2+2?"}]
    assert body["max_tokens"] == 1024 and body["temperature"] == 1.0  # required; API range
    assert body["stop_sequences"] == ["\n"] and "seed" not in body and "stop" not in body


@pytest.mark.parametrize(("script", "attempts", "overloads"), [
    (["429"], 2, 1), (["529"], 2, 1), (["529", "429"], 3, 2)])
def test_rate_limits_and_overloads_are_retried_and_lower_concurrency(script, attempts,
                                                                     overloads):
    with AnthropicServer(echo, script=script) as server:
        reply, client = ask(config(server, concurrency=4), ChatRequest.user("hi"))
    assert reply.ok and reply.attempts == attempts
    assert client.stats.overloads == overloads and client.stats.retries == attempts - 1
    assert client.limiter.limit < 4  # AIMD: an overload halves the window


@pytest.mark.parametrize("status", ["400", "401"])
def test_a_bad_request_or_key_is_not_retried_and_says_why(status):
    with AnthropicServer(echo, script=[status]) as server:
        reply, client = ask(config(server), ChatRequest.user("hi"))
    assert not reply.ok and reply.attempts == 1 and client.stats.retries == 0
    assert reply.error == f"HTTP {status}: scripted {status} (not retryable)"


def test_a_wrong_key_is_an_error_that_never_shows_the_key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_TEST_KEY", "sk-ant-wrong-key-9876543210")
    with AnthropicServer(echo) as server:
        reply, _ = ask(config(server), ChatRequest.user("hi"))
    assert reply.error == "HTTP 401: invalid x-api-key (not retryable)"


def test_a_judge_asks_without_a_json_schema():
    """The API has no JSON-schema mode: entries default to supports_json_schema False, so
    the request goes out without response_format and the judge parses the text."""
    from evalcore.providers.registry import validate_model

    with AnthropicServer(lambda text, system: '{"verdict": 1}') as server:
        cfg = validate_model({"kind": "anthropic", "base_url": server.url, "model": "c",
                              "api_key_env": "ANTHROPIC_TEST_KEY"}, "claude")
        fmt = {"type": "json_schema", "json_schema": {"name": "v", "schema": {}}}
        reply, _ = ask(cfg, ChatRequest.user("judge this", response_format=fmt))
    assert not cfg.supports_json_schema and reply.text == '{"verdict": 1}'


def test_refusal_and_empty_replies_are_errors_not_answers():
    provider = get_provider("anthropic")
    cfg = ModelConfig(name="c", kind="anthropic", base_url="http://127.0.0.1:9", model="c")
    with pytest.raises(RefusalError):
        provider.parse_reply(cfg, json.dumps({"content": [], "stop_reason": "refusal"}))
    with pytest.raises(EmptyReplyError):
        provider.parse_reply(cfg, json.dumps({"content": [{"type": "text", "text": " "}],
                                              "stop_reason": "end_turn"}))


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.sampled_from(["content", "type", "text", "usage",
                                                        "stop_reason", "input_tokens"]),
                                       inner, max_size=4), max_leaves=12)


@hsettings(max_examples=200, deadline=None)
@given(body=_json | st.binary(max_size=40).map(lambda b: b.decode("latin-1")))
def test_any_body_is_an_answer_or_a_named_error(body):
    """A hostile body never raises anything but the three reply errors."""
    provider = get_provider("anthropic")
    cfg = ModelConfig(name="c", kind="anthropic", base_url="http://127.0.0.1:9", model="c")
    text = body if isinstance(body, str) and not body.startswith("{") else json.dumps(body)
    try:
        parsed = provider.parse_reply(cfg, text)
    except (MalformedReplyError, EmptyReplyError, RefusalError):
        return
    assert isinstance(parsed.text, str) and parsed.text.strip()
    assert parsed.prompt_tokens is None or isinstance(parsed.prompt_tokens, int)
