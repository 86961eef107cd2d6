"""Model calls under the outbound policy: a redirect is an error naming its status (the
request is never handed to the host it points at), while a model on 127.0.0.1 (Ollama,
llama.cpp) needs no allow-list: model endpoints are set by admins only."""
from __future__ import annotations

import pytest
from aiohttp import web

from evalcore.providers.base import ModelConfig
from tests.fakes.receivers import WebhookReceiver
from tests.providers.test_client_faults import ask

pytestmark = pytest.mark.integration

SECRET = "reply of the internal service"


class RedirectingModel(WebhookReceiver):
    """/v1/chat/completions answers 307 to /inner/v1/chat/completions, which answers."""

    def __init__(self) -> None:
        super().__init__()
        self.inner_calls = 0

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._redirect)
        app.router.add_post("/inner/v1/chat/completions", self._inner)

    async def _redirect(self, request: web.Request) -> web.Response:
        raise web.HTTPTemporaryRedirect("/inner/v1/chat/completions")

    async def _inner(self, request: web.Request) -> web.Response:
        self.inner_calls += 1
        return web.json_response({"choices": [{"message": {"role": "assistant",
                                                           "content": SECRET}}]})

    def config(self, path: str = "") -> ModelConfig:
        return ModelConfig(name="m", base_url=f"http://127.0.0.1:{self.port}{path}/v1",
                           model="m", max_attempts=3, max_retry_wait=1.0)


def test_a_model_redirect_is_an_error_naming_its_status(monkeypatch):
    monkeypatch.delenv("EVALCORE_OUTBOUND_ALLOW", raising=False)
    with RedirectingModel() as model:
        (reply,), client = ask(model.config(), ["hi"])
    assert reply.error is not None and "HTTP 307" in reply.error and "redirect" in reply.error
    assert SECRET not in reply.error and reply.text in ("", None)
    assert model.inner_calls == 0 and client.stats.attempts == 1  # not followed, not retried


def test_a_loopback_model_needs_no_allow_list(monkeypatch):
    monkeypatch.delenv("EVALCORE_OUTBOUND_ALLOW", raising=False)
    with RedirectingModel() as model:
        (reply,), _ = ask(model.config("/inner"), ["hi"])
    assert reply.error is None and reply.text == SECRET
