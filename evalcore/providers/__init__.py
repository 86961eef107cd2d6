"""Providers: reach any model through one client (`get_client(config).chat(request)`).

Rooms: `base.py` (records), `registry.py` (models.toml), `provider.py` (the protocol a
provider implements), `catalog.py` (providers by name), one module per provider
(`openai.py`, `ollama.py`, `anthropic.py`, `local.py`: the embedded llama.cpp model),
`wire.py` (what their requests and replies share), `retry.py` (when and how long to
retry), `limits.py` (AIMD concurrency, requests per minute), `client.py` (the aiohttp
client). docs/providers.md says how to add one.

Importing this package stays light: aiohttp and xllamacpp load on first call.
"""

from evalcore.providers.base import ChatReply, ChatRequest, ModelConfig, ProviderKind
from evalcore.providers.catalog import get_provider, provider_names, register_provider
from evalcore.providers.client import (
    ClientStats,
    ModelClient,
    close_clients,
    get_client,
    run_closing_clients,
    test_connection,
    test_connection_sync,
)
from evalcore.providers.limits import AdaptiveLimiter, RateLimiter
from evalcore.providers.local import LocalServer, default_gguf_path, start_local, stop_local
from evalcore.providers.registry import (
    DEFAULT_MODEL,
    add_model,
    default_local_config,
    default_models,
    get_model,
    load_models,
    remove_model,
    save_models,
    update_model,
)
from evalcore.providers.retry import (
    MalformedReplyError,
    RetryDecision,
    backoff,
    parse_retry_after,
    should_retry,
)

__all__ = [
    "DEFAULT_MODEL",
    "AdaptiveLimiter",
    "ChatReply",
    "ChatRequest",
    "ClientStats",
    "LocalServer",
    "MalformedReplyError",
    "ModelClient",
    "ModelConfig",
    "ProviderKind",
    "RateLimiter",
    "RetryDecision",
    "add_model",
    "backoff",
    "close_clients",
    "default_gguf_path",
    "default_local_config",
    "default_models",
    "get_client",
    "run_closing_clients",
    "get_model",
    "get_provider",
    "load_models",
    "parse_retry_after",
    "provider_names",
    "register_provider",
    "remove_model",
    "save_models",
    "should_retry",
    "start_local",
    "stop_local",
    "test_connection",
    "test_connection_sync",
    "update_model",
]
