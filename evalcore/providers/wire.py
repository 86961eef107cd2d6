"""Request bodies and reply parsing for the two wire dialects; no I/O here.

- `openai` (and `local`, whose llama.cpp server speaks it): POST `{base_url}/chat/completions`,
  `Authorization: Bearer <key>` when a key is set, `response_format` passed through, tokens
  from `usage`.
- `ollama` native: POST `{base_url}/api/chat` with `stream: false`, sampling under
  `options` (temperature, top_p, num_predict, seed), `format` = the JSON schema of a
  `json_schema` response_format (or `"json"` for `json_object`), tokens from
  `prompt_eval_count` / `eval_count`.

A 200 whose body is not the expected JSON raises `MalformedReplyError`, which
`retry.should_retry()` treats as retryable (a little). A 200 that carries no text
(`content: null` or "") raises `EmptyReplyError`; one the provider filtered
(`finish_reason: content_filter`) raises `RefusalError`: neither is an answer, and
neither is retried. Every body text that may end up in an error is masked
(`evalcore.masking`) before it is cut short.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import msgspec

from evalcore.masking import mask_text
from evalcore.providers.base import EMPTY_REPLY, REFUSAL, ChatReply, ChatRequest, ModelConfig
from evalcore.providers.retry import MalformedReplyError, truncate

__all__ = [
    "EmptyReplyError",
    "MalformedReplyError",
    "RefusalError",
    "ParsedReply",
    "WireRequest",
    "apply_defaults",
    "build_request",
    "error_text",
    "parse_reply",
]


class EmptyReplyError(ValueError):
    """A 200 with no answer text: an error, never an (empty) answer."""


class RefusalError(ValueError):
    """The provider refused to answer (content filter); its message starts with `REFUSAL`."""


@dataclass
class WireRequest:
    """One HTTP POST: where, which headers, which JSON body."""

    url: str
    json: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class ParsedReply:
    """What a successful body said."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None

    def to_reply(self, *, latency_ms: float, attempts: int) -> ChatReply:
        return ChatReply(
            text=self.text,
            latency_ms=latency_ms,
            attempts=attempts,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            finish_reason=self.finish_reason,
        )


def apply_defaults(config: ModelConfig, request: ChatRequest) -> ChatRequest:
    """Fill the request's None sampling fields from the model's settings."""
    updates = {
        name: getattr(config, name)
        for name in ("temperature", "top_p", "max_tokens", "seed")
        if getattr(request, name) is None and getattr(config, name) is not None
    }
    if request.response_format is not None and not config.supports_json_schema:
        updates["response_format"] = None  # the judge falls back to parsing the text
    return msgspec.structs.replace(request, **updates) if updates else request


def dialect(config: ModelConfig) -> str:
    """`openai` or `ollama` (the embedded local model speaks OpenAI)."""
    return "ollama" if config.kind == "ollama" else "openai"


def build_request(
    config: ModelConfig, request: ChatRequest, base_url: str | None = None, api_key: str = ""
) -> WireRequest:
    """The POST for `request` (defaults already applied) in the model's dialect.

    Args:
        config: the model entry.
        request: what to ask.
        base_url: overrides `config.base_url` (the local server's address).
        api_key: sent as a Bearer token when not empty (openai dialect only).
    """
    root = (base_url if base_url is not None else config.base_url).rstrip("/")
    headers = {"Content-Type": "application/json"}
    if dialect(config) == "ollama":
        return WireRequest(f"{root}/api/chat", _ollama_body(config, request), headers)
    if api_key:
        if config.api_key_header:
            headers[config.api_key_header] = api_key
        else:
            headers["Authorization"] = f"Bearer {api_key}"
    body: dict[str, Any] = {"model": config.model, "messages": request.messages}
    for name in ("temperature", "top_p", "max_tokens", "seed", "response_format"):
        value = getattr(request, name)
        if value is not None:
            body[name] = value
    if config.stop and not request.response_format:
        # a model's stop sequences end free-text answers; a structured (JSON) reply may hold
        # them ("{\n" ended every local judge verdict at "{"), and its grammar ends it anyway
        body["stop"] = list(config.stop)
    if config.kind == "local" and config.repeat_penalty is not None:
        body["repeat_penalty"] = config.repeat_penalty  # llama.cpp's server reads it
    return WireRequest(f"{root}/chat/completions", body, headers)


def _ollama_body(config: ModelConfig, request: ChatRequest) -> dict[str, Any]:
    options = {
        key: value
        for key, value in (
            ("temperature", request.temperature),
            ("top_p", request.top_p),
            ("num_predict", request.max_tokens),
            ("seed", request.seed),
            ("repeat_penalty", config.repeat_penalty),
            ("stop", list(config.stop) if config.stop and not request.response_format else None),
        )
        if value is not None
    }
    body: dict[str, Any] = {"model": config.model, "messages": request.messages, "stream": False}
    if options:
        body["options"] = options
    fmt = request.response_format or {}
    if fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema")
        body["format"] = schema if schema else "json"
    elif fmt.get("type") == "json_object":
        body["format"] = "json"
    return body


def _load(body: bytes | str) -> Any:
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        snippet = truncate(mask_text(text), 80)
        raise MalformedReplyError(
            f"body is not JSON ({exc.__class__.__name__}): {snippet!r}"
        ) from None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_reply(config: ModelConfig, body: bytes | str) -> ParsedReply:
    """Parse a 200 body in the model's dialect; raises `MalformedReplyError` if it is not one."""
    data = _load(body)
    if not isinstance(data, dict):
        raise MalformedReplyError(f"expected a JSON object, got {type(data).__name__}")
    if dialect(config) == "ollama":
        message = data.get("message")
        content = message.get("content") if isinstance(message, dict) else 0
        if content is not None and not isinstance(content, str):
            raise MalformedReplyError("ollama reply has no message.content")
        _check_answer(content, data.get("done_reason"))
        return ParsedReply(
            message["content"],
            _int_or_none(data.get("prompt_eval_count")),
            _int_or_none(data.get("eval_count")),
            data.get("done_reason") or ("stop" if data.get("done") else None),
        )
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedReplyError("reply has no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise MalformedReplyError("reply has no choices[0].message")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise MalformedReplyError(f"choices[0].message.content is {type(content).__name__}")
    _check_answer(content, choices[0].get("finish_reason"), message.get("refusal"))
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return ParsedReply(
        content,
        _int_or_none(usage.get("prompt_tokens")),
        _int_or_none(usage.get("completion_tokens")),
        choices[0].get("finish_reason"),
    )


def _check_answer(content: str | None, finish_reason: Any, refusal: Any = None) -> None:
    """Raise for a 200 that is not an answer: filtered by the provider, or empty."""
    if finish_reason == "content_filter" or (refusal and not content):
        said = f": {truncate(mask_text(str(refusal)), 120)}" if refusal else ""
        raise RefusalError(f"{REFUSAL}: finish_reason {finish_reason or 'refusal'}{said}")
    if content is None or not content.strip():
        raise EmptyReplyError(
            f"{EMPTY_REPLY} (content {'null' if content is None else 'empty'}, "
            f"finish_reason {finish_reason!r})")


def error_details(body: bytes | str) -> tuple[str, str]:
    """(message, code) of an error body (OpenAI or Ollama shape): the message masked, then
    cut short; the code (e.g. `content_filter`) or ""."""
    text = mask_text(body.decode("utf-8", "replace") if isinstance(body, bytes) else body)
    try:
        data = json.loads(text)
    except ValueError:
        return truncate(text), ""
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and err.get("message"):
            return truncate(str(err["message"])), str(err.get("code") or "")
        if isinstance(err, str):
            return truncate(err), ""
        if isinstance(data.get("message"), str):
            return truncate(data["message"]), ""
    return truncate(text), ""


def error_text(body: bytes | str) -> str:
    """The provider's own error message from an error body, masked and truncated."""
    return error_details(body)[0]
