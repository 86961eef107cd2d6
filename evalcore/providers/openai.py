"""The OpenAI chat-completions format, spoken by OpenAI and most hosted or self-hosted
servers (vLLM, llama.cpp, LM Studio, Azure OpenAI with `api_key_header = "api-key"`).

POST `{base_url}/chat/completions`, `Authorization: Bearer <key>` when a key is set,
`response_format` passed through, tokens from `usage`; a `finish_reason` of
`content_filter` (or a `refusal` with no content) is a refusal, not an answer.
"""
from __future__ import annotations

from typing import Any

import msgspec

from evalcore.providers.base import ChatRequest, ModelConfig
from evalcore.providers.provider import Provider
from evalcore.providers.retry import MalformedReplyError
from evalcore.providers.wire import (ParsedReply, WireRequest, check_answer, int_or_none,
                                     load_json)


class _Message(msgspec.Struct):
    content: str | None = None
    refusal: Any = None


class _Choice(msgspec.Struct):
    message: _Message
    finish_reason: Any = None


class _Usage(msgspec.Struct):
    prompt_tokens: Any = None
    completion_tokens: Any = None


class _Reply(msgspec.Struct):
    """The fields of a reply evalcore reads, decoded straight from the bytes (msgspec, in C)
    rather than into dicts walked in Python: a fast local server answers thousands a second."""

    choices: list[_Choice]
    usage: _Usage | None = None


_decode = msgspec.json.Decoder(_Reply).decode


class OpenAICompatible(Provider):
    """Any endpoint that speaks OpenAI's `/chat/completions`; entries default to it."""

    name = "openai"
    summary = "any OpenAI-compatible API (OpenAI, vLLM, llama.cpp server, Azure OpenAI)"
    default = True
    base_url_example = "https://api.openai.com/v1"
    model_example = "gpt-4o-mini"

    def body(self, config: ModelConfig, request: ChatRequest) -> dict[str, Any]:
        """The JSON body (a subclass adds the fields its server reads)."""
        body: dict[str, Any] = {"model": config.model, "messages": request.messages}
        for name in ("temperature", "top_p", "max_tokens", "seed", "response_format"):
            value = getattr(request, name)
            if value is not None:
                body[name] = value
        if config.stop and not request.response_format:
            # a model's stop sequences end free-text answers; a structured (JSON) reply may
            # hold them ("{\n" ended every local judge verdict at "{"), and its grammar ends it
            body["stop"] = list(config.stop)
        return body

    def build_request(self, config: ModelConfig, request: ChatRequest, root: str,
                      api_key: str) -> WireRequest:
        return WireRequest(f"{root}/chat/completions", self.body(config, request),
                           self.headers(config, api_key))

    def parse_reply(self, config: ModelConfig, body: bytes | str) -> ParsedReply:
        try:
            reply = _decode(body)
        except msgspec.DecodeError:  # not the usual shape: the checks below say what is wrong
            return self._parse_any(body)
        if not reply.choices:
            return self._parse_any(body)
        choice, usage = reply.choices[0], reply.usage or _Usage()
        check_answer(choice.message.content, choice.finish_reason, choice.message.refusal)
        return ParsedReply(choice.message.content, int_or_none(usage.prompt_tokens),
                           int_or_none(usage.completion_tokens), choice.finish_reason)

    def _parse_any(self, body: bytes | str) -> ParsedReply:
        """Any JSON body, field by field, naming what is missing or of the wrong type."""
        data = load_json(body)
        if not isinstance(data, dict):
            raise MalformedReplyError(f"expected a JSON object, got {type(data).__name__}")
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise MalformedReplyError("reply has no choices")
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise MalformedReplyError("reply has no choices[0].message")
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise MalformedReplyError(f"choices[0].message.content is {type(content).__name__}")
        check_answer(content, choices[0].get("finish_reason"), message.get("refusal"))
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return ParsedReply(
            content,
            int_or_none(usage.get("prompt_tokens")),
            int_or_none(usage.get("completion_tokens")),
            choices[0].get("finish_reason"),
        )


PROVIDER = OpenAICompatible()
