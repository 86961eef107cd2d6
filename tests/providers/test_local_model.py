"""The REAL embedded model (SmolLM2-135M via xllamacpp): shape and bookkeeping, not wording."""

from __future__ import annotations

import asyncio
import json

import pytest

from evalcore.errors import ModelConfigError
from evalcore.providers.base import ChatRequest, ModelConfig
from evalcore.providers.client import close_clients, get_client, test_connection
from evalcore.providers.local import LocalServer, resolve_gguf, stop_local

pytestmark = pytest.mark.integration

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "confidence": {"type": "integer"}},
    "required": ["answer", "confidence"],
}


@pytest.fixture(scope="module")
def local_config():
    config = ModelConfig(
        name="local-test",
        kind="local",
        concurrency=2,
        threads=1,
        n_ctx=1024,
        max_tokens=24,
        temperature=0.8,
        timeout=60.0,
    )
    yield config
    stop_local()


def test_calls_in_parallel_record_tokens(local_config):
    prompts = ["What is 2 + 2?", "Name a colour.", "中国的首都是哪里？", "Say hello."]

    async def main():
        client = get_client(local_config)
        replies = await asyncio.gather(*(client.chat(ChatRequest.user(p)) for p in prompts))
        await close_clients()
        return replies, client

    replies, client = asyncio.run(main())
    for reply in replies:
        assert reply.ok, reply.error
        assert isinstance(reply.text, str) and reply.text.strip()
        assert reply.prompt_tokens and reply.prompt_tokens > 0
        assert 0 < reply.completion_tokens <= 24
        assert reply.finish_reason in ("stop", "length")
    assert client.stats.calls == 4 and client.stats.errors == 0
    status = LocalServer.instance().status()
    assert status["running"] and status["port"] and status["url"].startswith("http://127.0.0.1:")
    assert status["model_path"].endswith(".gguf")


def test_json_schema_reply_parses(local_config):
    fmt = {"type": "json_schema", "json_schema": {"name": "answer", "schema": SCHEMA}}

    async def main():
        reply = await get_client(local_config).chat(
            ChatRequest.user(
                "What is the capital of France? Answer as JSON.", response_format=fmt, max_tokens=64
            )
        )
        await close_clients()
        return reply

    reply = asyncio.run(main())
    assert reply.ok, reply.error
    data = json.loads(reply.text)
    assert isinstance(data["answer"], str) and isinstance(data["confidence"], int)


def test_test_connection_and_restart_after_stop(local_config):
    stop_local()
    assert not LocalServer.instance().status()["running"]
    reply = asyncio.run(test_connection(local_config))  # starts the server on demand
    assert reply.ok and reply.text and reply.latency_ms > 0
    assert LocalServer.instance().running


def test_missing_gguf_says_which_path_and_how(tmp_path):
    config = ModelConfig(name="mine", kind="local", gguf_path=str(tmp_path / "nope.gguf"))
    with pytest.raises(ModelConfigError) as info:
        resolve_gguf(config)
    assert "nope.gguf" in str(info.value) and "mine" in str(info.value)
    reply = asyncio.run(test_connection(config))
    assert not reply.ok and "nope.gguf" in reply.error
