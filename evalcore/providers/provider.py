"""The provider protocol: everything that differs between two model APIs, in one object.

A provider is one module that sets `PROVIDER = SomeProvider()` (`catalog.py` finds it by
its `name`). It builds the HTTP request, parses the reply, classifies errors and says
which settings a model entry needs; `client.ModelClient` does the rest (sessions,
retries, limits, deadlines, masking) the same way for every provider. The defaults here
are what most HTTP JSON APIs want; a provider overrides what its API does differently.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from evalcore.errors import ModelConfigError
from evalcore.providers.base import ChatRequest, ModelConfig
from evalcore.providers.retry import RetryDecision, should_retry
from evalcore.providers.wire import ParsedReply, WireRequest, error_details


class Provider(ABC):
    """One wire format. Subclasses set the class attributes and the two abstract methods."""

    name: str = ""
    """The model entry's `kind`; the module is named after it."""
    summary: str = ""
    """One line for the Models form and `models add --help`."""
    default: bool = False
    """The provider of an entry that names none (one provider says so)."""
    needs: tuple[str, ...] = ("base_url", "model")
    """ModelConfig fields an entry of this provider must set."""
    base_url_example: str = ""
    model_example: str = ""
    form_fields: Mapping[str, tuple[str, str]] = {}
    """Settings only this provider reads: field -> (form label, help); the Models form
    draws them and says whose they are."""
    latency_s: float = 2.0
    """Seconds one call takes, for an estimate before the model has a stored call."""
    first_items: int = 0
    """A start form's default "first K items" (0 = all): slow models start small."""
    load_seconds: float = 0.0
    """Extra seconds a first call may need to load the model (a connection test waits)."""

    def entry_defaults(self) -> dict[str, Any]:
        """Settings an entry of this provider gets unless it sets its own."""
        return {}

    def builtin_models(self) -> list[ModelConfig]:
        """Models that exist without a models.toml (the list a new user starts with)."""
        return []

    async def endpoint(self, config: ModelConfig) -> str:
        """The root URL calls go to (a provider that runs its model may start it here)."""
        if not config.base_url:
            raise ModelConfigError(
                f"model '{config.name}' ({config.kind}) has no base_url; set it in "
                f"models.toml or with `python -m evalcore models add {config.name} "
                f"--base-url URL`")
        return config.base_url

    def headers(self, config: ModelConfig, api_key: str) -> dict[str, str]:
        """JSON, and the key as `Authorization: Bearer` or in the entry's `api_key_header`."""
        headers = {"Content-Type": "application/json"}
        if api_key:
            if config.api_key_header:
                headers[config.api_key_header] = api_key
            else:
                headers["Authorization"] = f"Bearer {api_key}"
        return headers

    @abstractmethod
    def build_request(self, config: ModelConfig, request: ChatRequest, root: str,
                      api_key: str) -> WireRequest:
        """The POST for `request` (the model's defaults already applied) to `root`."""

    @abstractmethod
    def parse_reply(self, config: ModelConfig, body: bytes | str) -> ParsedReply:
        """The answer in a 2xx body; raises `wire.MalformedReplyError`,
        `wire.EmptyReplyError` or `wire.RefusalError` for a body that is not one."""

    def error_details(self, body: bytes | str) -> tuple[str, str]:
        """(message, code) of an error body, the message masked and cut short."""
        return error_details(body)

    def is_refusal(self, code: str) -> bool:
        """Whether an error body's code means the provider refused to answer."""
        return code == "content_filter"

    def should_retry(self, status: int | None, headers: Mapping[str, str] | None,
                     exc: BaseException | None) -> RetryDecision:
        """Whether a failed attempt is worth another (`retry.should_retry`'s ladder)."""
        return should_retry(status, headers, exc)

    def is_overload(self, status: int | None) -> bool:
        """A status that says "too many calls": the client lowers this model's concurrency."""
        return status == 429

    def loaded(self) -> bool:
        """Whether the model is ready in this process (always, for a remote API)."""
        return True

    def unload(self) -> None:
        """Free a model this process loaded (nothing to do for a remote API)."""
