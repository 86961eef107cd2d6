"""A local server speaking Anthropic's Messages API wire format, strictly: POST
/v1/messages with `x-api-key` and `anthropic-version`, `max_tokens` required, the
system prompt top-level (a "system" message is refused), `stop_sequences`, temperature
0-1; replies with `content` text blocks, `usage` and `stop_reason`; errors in the
`{"type": "error", "error": {"type", "message"}}` shape. A `script` of statuses
("429", "529", "400", "401") answers the first requests in order (429 with
`retry-after: 0`). Every request is kept (`requests`: headers and body).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from tests.fakes.fault_server import FaultServer

KEY = "sk-ant-test-0123456789abcdef"
ALLOWED = {"model", "max_tokens", "messages", "system", "stop_sequences", "temperature",
           "top_p", "top_k", "metadata", "stream"}
ERRORS = {"400": "invalid_request_error", "401": "authentication_error",
          "429": "rate_limit_error", "529": "overloaded_error"}


def _error(status: int, kind: str, message: str, **headers: str) -> web.Response:
    return web.json_response({"type": "error", "error": {"type": kind, "message": message}},
                             status=status, headers=headers)


class MessagesApp:
    """The handler; `responder(last user text, system)` gives the answer text."""

    def __init__(self, responder: Callable[[str, str], str], script: list[str] | None = None):
        self.responder = responder
        self.script = list(script or [])
        self.requests: list[dict[str, Any]] = []
        self.app = web.Application()
        self.app.router.add_post("/v1/messages", self.messages)

    async def messages(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append({"headers": dict(request.headers), "body": body})
        if self.script:
            status = self.script.pop(0)
            extra = {"retry-after": "0"} if status == "429" else {}
            return _error(int(status), ERRORS[status], f"scripted {status}", **extra)
        if request.headers.get("x-api-key") != KEY:
            return _error(401, "authentication_error", "invalid x-api-key")
        if not request.headers.get("anthropic-version"):
            return _error(400, "invalid_request_error", "anthropic-version header is required")
        problem = self._check(body)
        if problem:
            return _error(400, "invalid_request_error", problem)
        last = body["messages"][-1]["content"]
        text = self.responder(last, body.get("system", ""))
        for stop in body.get("stop_sequences", []):
            if stop in text:
                text = text[:text.index(stop)]
                break
        return web.json_response({
            "id": "msg_test", "type": "message", "role": "assistant", "model": body["model"],
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": len(last.split()), "output_tokens": len(text.split())}})

    @staticmethod
    def _check(body: Any) -> str:
        if not isinstance(body, dict):
            return "body must be an object"
        unknown = set(body) - ALLOWED
        if unknown:
            return f"{sorted(unknown)[0]}: Extra inputs are not permitted"
        if not isinstance(body.get("max_tokens"), int):
            return "max_tokens: Field required"
        if not (0 <= body.get("temperature", 0) <= 1):
            return "temperature: must be between 0 and 1"
        messages = body.get("messages")
        if not messages or any(m.get("role") not in ("user", "assistant") for m in messages):
            return "messages: roles must be user or assistant (system is top-level)"
        return ""


class AnthropicServer(FaultServer):
    """`MessagesApp` on 127.0.0.1 in a background thread (FaultServer's machinery)."""

    def __init__(self, responder: Callable[[str, str], str],
                 script: list[str] | None = None) -> None:
        super().__init__()
        self.fault = MessagesApp(responder, script)  # type: ignore[assignment]

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self.fault.requests  # type: ignore[attr-defined]
