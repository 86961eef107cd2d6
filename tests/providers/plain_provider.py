"""A provider that exists only in the tests: a made-up wire format ("plainjson": POST
`{base_url}/ask` with `{"model", "q", "limit"}`, reply `{"a": text, "used": [in, out]}`,
the key in `x-plain-key`). `tests/pages/test_provider_plugin.py` registers it and finds it
in `models add`, the Models page, estimates and runs, with no other file changed: what a
new provider module has to write, and nothing more.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from evalcore.providers.base import ChatRequest, ModelConfig
from evalcore.providers.provider import Provider
from evalcore.providers.retry import MalformedReplyError
from evalcore.providers.wire import ParsedReply, WireRequest, check_answer, load_json
from tests.fakes.fault_server import FaultServer


class PlainJson(Provider):
    name = "plainjson"
    summary = "a test-only format: POST /ask"
    base_url_example = "http://127.0.0.1:8999"
    model_example = "plain-1"
    form_fields = {"n_ctx": ("Context size", "Tokens the plain server keeps")}
    latency_s = 0.25

    def headers(self, config: ModelConfig, api_key: str) -> dict[str, str]:
        return {"x-plain-key": api_key} if api_key else {}

    def build_request(self, config: ModelConfig, request: ChatRequest, root: str,
                      api_key: str) -> WireRequest:
        question = "\n".join(m["content"] for m in request.messages)
        return WireRequest(f"{root}/ask", {"model": config.model, "q": question,
                                           "limit": request.max_tokens},
                           self.headers(config, api_key))

    def parse_reply(self, config: ModelConfig, body: bytes | str) -> ParsedReply:
        data = load_json(body)
        if not isinstance(data, dict) or not isinstance(data.get("a"), str):
            raise MalformedReplyError("reply has no a")
        check_answer(data["a"], "stop")
        used = data.get("used") or [None, None]
        return ParsedReply(data["a"], used[0], used[1], "stop")


PROVIDER = PlainJson()


class PlainServer(FaultServer):
    """Answers POST /ask with `responder(question, None)`; counts the questions."""

    def __init__(self, responder: Callable[[str, Any], str]) -> None:
        super().__init__()
        self.asked: list[str] = []

        async def ask(request: web.Request) -> web.Response:
            body = await request.json()
            self.asked.append(body["q"])
            answer = responder(body["q"], None)
            return web.json_response({"a": answer, "used": [len(body["q"]), len(answer)]})

        app = web.Application()
        app.router.add_post("/ask", ask)
        self.fault = type("Plain", (), {"app": app})()  # type: ignore[assignment]
