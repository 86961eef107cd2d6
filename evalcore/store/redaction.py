"""Secrets never reach the database: what the store removes from a run's config and
error, and from a call's answer, reason and error, before writing them.

Values under keys named like secrets are dropped whole; in every string what
`evalcore.masking.mask_text` masks (configured keys and pieces of them, credential
patterns of any scheme) is masked.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from evalcore.masking import REDACTED, known_secrets, mask_text

_SECRET_KEY = re.compile(r"(^|_)(api_?key|(api|auth|access|refresh)_?token|secret(_?key)?|"
                         r"password|passwd|authorization)$|^(key|token|bearer)$", re.IGNORECASE)
_MASKED_CALL_COLUMNS = ("error", "answer", "reason")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _variable_name(key: Any, value: Any) -> bool:
    """A `*_env` field naming an environment variable (api_key_env, webhook_env): the
    name is no secret, and masking a look-alike of a key inside it (the key's letters
    without separators) would lose which variable the run read."""
    return (isinstance(key, str) and key.endswith("_env") and isinstance(value, str)
            and _ENV_NAME.fullmatch(value) is not None)


def redact_secrets(value: Any, secrets: list[str] | None = None) -> Any:
    """`value` with API keys removed: values under keys named like secrets, and in every
    string what `evalcore.masking.mask_text` masks (configured keys and pieces of them,
    credential patterns of any scheme)."""
    if isinstance(value, Mapping):
        return {k: REDACTED if isinstance(k, str) and _SECRET_KEY.search(k) and v
                else v if _variable_name(k, v)
                else redact_secrets(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_secrets(v, secrets) for v in value]
    if isinstance(value, str):
        return mask_text(value, secrets)
    return value


def redact_run_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """A run's fields with its config and error redacted."""
    clean = dict(fields)
    for key in ("config", "error"):
        if clean.get(key):
            clean[key] = redact_secrets(clean[key])
    return clean


def redact_call_row(row: dict[str, Any],
                    secrets: frozenset[str] | None = None) -> dict[str, Any]:
    """A call row (changed in place, and returned) with its answer, reason and error
    masked; `secrets` as `known_secrets()` gave them (read once for a batch of rows:
    reading the environment's is most of the work when the texts hold none)."""
    for column in _MASKED_CALL_COLUMNS:
        if row.get(column):
            row[column] = mask_text(row[column], known_secrets() if secrets is None else secrets)
    return row
