"""The provider catalog: built-ins found by module, others by EVALCORE_PROVIDERS."""
from __future__ import annotations

import pytest

from evalcore.errors import ModelConfigError
from evalcore.providers.catalog import PROVIDERS_ENV, get_provider, provider_names


def test_every_provider_module_of_the_package_is_found_and_one_is_the_default():
    assert {"anthropic", "local", "ollama", "openai"} <= set(provider_names())
    assert [n for n in provider_names() if get_provider(n).default] == ["openai"]


def test_a_module_named_in_the_environment_is_a_provider(monkeypatch):
    assert "plainjson" not in provider_names()
    monkeypatch.setenv(PROVIDERS_ENV, "tests.providers.plain_provider")
    assert get_provider("plainjson").summary.startswith("a test-only format")
    monkeypatch.setenv(PROVIDERS_ENV, "tests.providers.no_such_module")
    with pytest.raises(ModelConfigError, match="EVALCORE_PROVIDERS names "
                                               "'tests.providers.no_such_module'"):
        provider_names()
    monkeypatch.delenv(PROVIDERS_ENV)
    assert "plainjson" not in provider_names()


def test_a_model_of_an_unknown_provider_is_an_error_naming_the_model():
    from evalcore.providers.base import ModelConfig
    from evalcore.providers.catalog import provider_for

    stored = ModelConfig(name="old-plug", kind="plainjson", base_url="http://127.0.0.1:9")
    with pytest.raises(ModelConfigError, match=r"^model 'old-plug': kind: must be one of "
                                               r"'anthropic', .*EVALCORE_PROVIDERS$"):
        provider_for(stored)


def test_a_provider_that_names_no_content_type_still_sends_json(monkeypatch):
    """The client sends the body as bytes it encoded: the JSON content type is its to add
    when a provider's headers (here the test-only plugin's) do not name one."""
    from aiohttp import web

    from evalcore.providers.base import ChatRequest, ModelConfig
    from evalcore.providers.client import ModelClient, close_clients
    from evalcore.providers.event_loop import run
    from tests.providers.plain_provider import PlainServer

    monkeypatch.setenv(PROVIDERS_ENV, "tests.providers.plain_provider")
    seen: list[tuple[str, dict]] = []

    async def ask(request: web.Request) -> web.Response:
        seen.append((request.content_type, await request.json()))
        return web.json_response({"a": "four", "used": [1, 1]})

    app = web.Application()
    app.router.add_post("/ask", ask)
    server = PlainServer(lambda q, _: q)
    server.fault = type("Own", (), {"app": app})()  # this test's handler, as PlainServer does
    with server:
        config = ModelConfig(name="plug", kind="plainjson", base_url=server.url, model="p-1")

        async def call():
            client = ModelClient(config)
            try:
                return await client.chat(ChatRequest.user("2+2?"))
            finally:
                await close_clients()

        reply = run(call())
    assert reply.ok and reply.text == "four"
    assert [(kind, body["q"]) for kind, body in seen] == [("application/json", "2+2?")]
