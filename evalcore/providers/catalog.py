"""Which providers exist: each is one module that sets `PROVIDER` (a `provider.Provider`),
found by name, so nothing else lists them.

Built-in providers are the modules of this package that set `PROVIDER`; a provider of
your own is a module anywhere on the import path named in `EVALCORE_PROVIDERS`
(comma-separated module names; every process that runs calls reads it), or one object
given to `register_provider` (tests, notebooks). The modules are imported on the first
look-up, not when evalcore is imported.
"""
from __future__ import annotations

import importlib
import os
import pkgutil
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from evalcore.errors import ModelConfigError

if TYPE_CHECKING:
    from evalcore.providers.base import ModelConfig
    from evalcore.providers.provider import Provider

PROVIDERS_ENV = "EVALCORE_PROVIDERS"
"""Comma-separated module names of providers that are not part of evalcore."""

_added: dict[str, "Provider"] = {}
_scanned: dict[str, dict[str, "Provider"]] = {}
"""EVALCORE_PROVIDERS value -> the providers found with it (one scan per value)."""
_lock = threading.RLock()


def _scan() -> dict[str, "Provider"]:
    """Built-in provider modules plus those named in EVALCORE_PROVIDERS (once per value;
    a lock, as a worker's threads may look up at once and an import must run once)."""
    extra = os.environ.get(PROVIDERS_ENV, "")
    with _lock:
        if extra not in _scanned:
            _scanned[extra] = _import_providers(extra)
        return _scanned[extra]


def _import_providers(extra: str) -> dict[str, "Provider"]:
    modules = [f"{__package__}.{info.name}"
               for info in pkgutil.iter_modules([str(Path(__file__).parent)])]
    modules += [name.strip() for name in extra.split(",") if name.strip()]
    found: dict[str, "Provider"] = {}
    for module_name in modules:
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ModelConfigError(f"{PROVIDERS_ENV} names {module_name!r}, which cannot be "
                                   f"imported ({exc}); fix the name or the import path") from None
        provider = getattr(module, "PROVIDER", None)
        if provider is not None:
            found[provider.name] = provider
    return found


def register_provider(provider: "Provider") -> "Provider":
    """Make `provider` known by its name in this process (replacing one of that name)."""
    _added[provider.name] = provider
    return provider


def unregister_provider(name: str) -> None:
    """Forget a provider given to `register_provider` (a test's clean-up)."""
    _added.pop(name, None)


def providers() -> dict[str, "Provider"]:
    """Every known provider by name, sorted by name."""
    everything = {**_scan(), **_added}
    return {name: everything[name] for name in sorted(everything)}


def provider_names() -> list[str]:
    """The names a model's `kind` may take."""
    return list(providers())


def provider_settings() -> dict[str, tuple[str, str, str]]:
    """Settings only some providers read (their `form_fields`): field -> (label, help,
    provider); the Models form draws each and `models add` has a flag for each."""
    return {field: (label, text, name) for name, provider in providers().items()
            for field, (label, text) in provider.form_fields.items()}


def default_provider_name() -> str:
    """The provider of a model entry that names none (the one that declares `default`)."""
    return next((name for name, p in providers().items() if p.default), "")


def get_provider(name: str) -> "Provider":
    """The provider called `name`, or an error listing the known ones (a provider of your
    own is named in EVALCORE_PROVIDERS, see the module docstring)."""
    found = _added.get(name) or _scan().get(name)  # every call looks one up: no sort here
    if found is not None:
        return found
    known = providers()
    if name not in known:
        # never the value itself: a key pasted into the wrong field would be echoed
        raise ModelConfigError("kind: must be one of " + ", ".join(map(repr, known)))
    return known[name]


def provider_for(config: "ModelConfig") -> "Provider":
    """The provider that speaks to the model `config` describes (an error names the model:
    a stored run's snapshot may name a provider this process does not have)."""
    try:
        return get_provider(config.kind or default_provider_name())
    except ModelConfigError as exc:
        raise ModelConfigError(f"model '{config.name}': {exc}; a provider of your own is "
                               f"named in {PROVIDERS_ENV}") from None
