"""Anthropic's Messages API.

POST `{base_url}/v1/messages` with the key in `x-api-key` and the API version in
`anthropic-version`. The system prompt is a top-level `system` field (not a message),
`max_tokens` is required, stop sequences are `stop_sequences`, temperature is 0-1. The
reply's text is the `text` blocks of `content`; tokens come from `usage`
(`input_tokens`, `output_tokens`); `stop_reason` is the finish reason (`refusal` is a
refusal). Errors are `{"type": "error", "error": {"type", "message"}}`: 429 (with
`retry-after`) and 529 `overloaded_error` are retried and lower the model's
concurrency; 400 and 401 are not retried. There is no seed and no JSON-schema mode:
judges parse the text.
"""
from __future__ import annotations

from typing import Any

from evalcore.masking import mask_text
from evalcore.providers.base import REFUSAL, ChatRequest, ModelConfig
from evalcore.providers.provider import Provider
from evalcore.providers.retry import MalformedReplyError, truncate
from evalcore.providers.wire import (ParsedReply, RefusalError, WireRequest, check_answer,
                                     int_or_none, load_json)

API_VERSION = "2023-06-01"
"""The `anthropic-version` header: the Messages API version this module speaks."""
DEFAULT_MAX_TOKENS = 1024
"""Sent when neither the call nor the model sets `max_tokens` (the API requires one)."""
OVERLOADED = 529
"""Anthropic's "overloaded" status: retried, and read as "too many calls"."""


class Anthropic(Provider):
    """Claude models through the Messages API."""

    name = "anthropic"
    summary = "Anthropic's Messages API (key in x-api-key)"
    base_url_example = "https://api.anthropic.com"
    model_example = "claude-3-5-haiku-latest"

    def entry_defaults(self) -> dict[str, Any]:
        """No JSON-schema response format: a judge falls back to parsing the text."""
        return {"supports_json_schema": False}

    def headers(self, config: ModelConfig, api_key: str) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "anthropic-version": API_VERSION}
        if api_key:
            headers[config.api_key_header or "x-api-key"] = api_key
        return headers

    def build_request(self, config: ModelConfig, request: ChatRequest, root: str,
                      api_key: str) -> WireRequest:
        system = "\n\n".join(m["content"] for m in request.messages if m.get("role") == "system")
        body: dict[str, Any] = {
            "model": config.model,
            "max_tokens": request.max_tokens or config.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": [{"role": m["role"], "content": m["content"]}
                         for m in request.messages if m.get("role") != "system"],
        }
        if system:
            body["system"] = system
        if request.temperature is not None:
            body["temperature"] = min(request.temperature, 1.0)  # the API's range is 0-1
        if request.top_p is not None:
            body["top_p"] = request.top_p
        if config.stop and not request.response_format:
            body["stop_sequences"] = list(config.stop)
        url = root if root.endswith("/v1") else f"{root}/v1"
        return WireRequest(f"{url}/messages", body, self.headers(config, api_key))

    def parse_reply(self, config: ModelConfig, body: bytes | str) -> ParsedReply:
        data = load_json(body)
        if not isinstance(data, dict):
            raise MalformedReplyError(f"expected a JSON object, got {type(data).__name__}")
        blocks = data.get("content")
        if not isinstance(blocks, list):
            raise MalformedReplyError("reply has no content list")
        texts = [b.get("text") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
        if not all(isinstance(t, str) for t in texts):
            raise MalformedReplyError("a text block of content has no text")
        stop_reason = data.get("stop_reason")
        if stop_reason == "refusal":
            raise RefusalError(f"{REFUSAL}: stop_reason refusal"
                               + (f": {truncate(mask_text(''.join(texts)), 120)}"
                                  if texts else ""))
        text = "".join(texts)
        check_answer(text, stop_reason)
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return ParsedReply(text, int_or_none(usage.get("input_tokens")),
                           int_or_none(usage.get("output_tokens")),
                           stop_reason if isinstance(stop_reason, str) else None)

    def is_overload(self, status: int | None) -> bool:
        return status in (429, OVERLOADED)


PROVIDER = Anthropic()
