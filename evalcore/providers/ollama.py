"""Ollama's native `/api/chat` format.

POST `{base_url}/api/chat` with `stream: false`, sampling under `options` (temperature,
top_p, num_predict, seed, repeat_penalty, stop), `format` = the JSON schema of a
`json_schema` response_format (or `"json"` for `json_object`), tokens from
`prompt_eval_count` / `eval_count`. No key by default (a proxy in front may want one).
"""
from __future__ import annotations

from typing import Any

from evalcore.providers.base import ChatRequest, ModelConfig
from evalcore.providers.provider import Provider
from evalcore.providers.retry import MalformedReplyError
from evalcore.providers.wire import (ParsedReply, WireRequest, check_answer, int_or_none,
                                     load_json)


class Ollama(Provider):
    """A model served by Ollama."""

    name = "ollama"
    summary = "Ollama's /api/chat"
    base_url_example = "http://127.0.0.1:11434"
    model_example = "qwen2.5:7b"

    def build_request(self, config: ModelConfig, request: ChatRequest, root: str,
                      api_key: str) -> WireRequest:
        options = {
            key: value
            for key, value in (
                ("temperature", request.temperature),
                ("top_p", request.top_p),
                ("num_predict", request.max_tokens),
                ("seed", request.seed),
                ("repeat_penalty", config.repeat_penalty),
                ("stop", list(config.stop) if config.stop and not request.response_format
                 else None),
            )
            if value is not None
        }
        body: dict[str, Any] = {"model": config.model, "messages": request.messages,
                                "stream": False}
        if options:
            body["options"] = options
        fmt = request.response_format or {}
        if fmt.get("type") == "json_schema":
            schema = (fmt.get("json_schema") or {}).get("schema")
            body["format"] = schema if schema else "json"
        elif fmt.get("type") == "json_object":
            body["format"] = "json"
        return WireRequest(f"{root}/api/chat", body, {"Content-Type": "application/json"})

    def parse_reply(self, config: ModelConfig, body: bytes | str) -> ParsedReply:
        data = load_json(body)
        if not isinstance(data, dict):
            raise MalformedReplyError(f"expected a JSON object, got {type(data).__name__}")
        message = data.get("message")
        content = message.get("content") if isinstance(message, dict) else 0
        if content is not None and not isinstance(content, str):
            raise MalformedReplyError("ollama reply has no message.content")
        check_answer(content, data.get("done_reason"))
        return ParsedReply(
            content,
            int_or_none(data.get("prompt_eval_count")),
            int_or_none(data.get("eval_count")),
            data.get("done_reason") or ("stop" if data.get("done") else None),
        )


PROVIDER = Ollama()
