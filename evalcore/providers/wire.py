"""What every provider's request and reply share; no I/O here.

The records (`WireRequest`, `ParsedReply`), the errors a 200 that is not an answer raises,
and the helpers providers use to read bodies. `build_request` and `parse_reply` hand the
work to the model's provider (`catalog.provider_for`), one module per wire format.

A 200 whose body is not the expected JSON raises `MalformedReplyError`, which
`retry.should_retry()` treats as retryable (a little). A 200 that carries no text
raises `EmptyReplyError`; one the provider filtered raises `RefusalError`: neither is an
answer, and neither is retried. Every body text that may end up in an error is masked
(`evalcore.masking`) before it is cut short.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import msgspec

from evalcore.masking import mask_text
from evalcore.providers.base import EMPTY_REPLY, REFUSAL, ChatReply, ChatRequest, ModelConfig
from evalcore.providers.catalog import provider_for
from evalcore.providers.retry import MalformedReplyError, truncate

__all__ = [
    "EmptyReplyError",
    "MalformedReplyError",
    "RefusalError",
    "ParsedReply",
    "WireRequest",
    "apply_defaults",
    "build_request",
    "check_answer",
    "error_details",
    "error_text",
    "int_or_none",
    "load_json",
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


def build_request(
    config: ModelConfig, request: ChatRequest, base_url: str | None = None, api_key: str = ""
) -> WireRequest:
    """The POST for `request` (defaults already applied) in the model's provider's format.

    Args:
        config: the model entry.
        request: what to ask.
        base_url: overrides `config.base_url` (the local server's address).
        api_key: sent the provider's way when not empty.
    """
    root = (base_url if base_url is not None else config.base_url).rstrip("/")
    return provider_for(config).build_request(config, request, root, api_key)


def load_json(body: bytes | str) -> Any:
    """The JSON of a reply body, or `MalformedReplyError` quoting its (masked) start."""
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        snippet = truncate(mask_text(text), 80)
        raise MalformedReplyError(
            f"body is not JSON ({exc.__class__.__name__}): {snippet!r}"
        ) from None


def int_or_none(value: Any) -> int | None:
    """A token count as sent, or None for anything that is not an int (bools included)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_reply(config: ModelConfig, body: bytes | str) -> ParsedReply:
    """Parse a 200 body in the model's provider's format; raises `MalformedReplyError` if
    it is not one."""
    return provider_for(config).parse_reply(config, body)


def check_answer(content: str | None, finish_reason: Any, refusal: Any = None) -> None:
    """Raise for a 200 that is not an answer: filtered by the provider, or empty."""
    if finish_reason == "content_filter" or (refusal and not content):
        said = f": {truncate(mask_text(str(refusal)), 120)}" if refusal else ""
        raise RefusalError(f"{REFUSAL}: finish_reason {finish_reason or 'refusal'}{said}")
    if content is None or not content.strip():
        raise EmptyReplyError(
            f"{EMPTY_REPLY} (content {'null' if content is None else 'empty'}, "
            f"finish_reason {finish_reason!r})")


def error_details(body: bytes | str) -> tuple[str, str]:
    """(message, code) of an error body in the common JSON shapes (`{"error": {"message",
    "code" or "type"}}`, `{"error": "..."}`, `{"message": "..."}`): the message masked,
    then cut short; the code (e.g. `content_filter`, `overloaded_error`) or ""."""
    text = mask_text(body.decode("utf-8", "replace") if isinstance(body, bytes) else body)
    try:
        data = json.loads(text)
    except ValueError:
        return truncate(text), ""
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and err.get("message"):
            return truncate(str(err["message"])), str(err.get("code") or err.get("type") or "")
        if isinstance(err, str):
            return truncate(err), ""
        if isinstance(data.get("message"), str):
            return truncate(data["message"]), ""
    return truncate(text), ""


def error_text(body: bytes | str) -> str:
    """The provider's own error message from an error body, masked and truncated."""
    return error_details(body)[0]
