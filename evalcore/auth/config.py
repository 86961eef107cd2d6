"""Team-mode settings from the environment: how people sign in, who the first admins are,
which role an unknown user gets. Read per call (cheap), so tests can set variables."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Mapping

from evalcore.auth.roles import check_role, SERVICE_ROLES
from evalcore.errors import EvalcoreError, SettingsError

MODES = ("none", "oidc", "header")
MIN_SECRET = 16
"""Shortest EVALCORE_HEADER_SECRET accepted: a short one can be guessed."""
_HEADER = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+")
"""An HTTP header name (RFC 9110 token)."""


@dataclass(frozen=True)
class AuthConfig:
    """`EVALCORE_AUTH` and friends; `mode == "none"` is single-user, today's behaviour."""

    mode: str = "none"
    admins: frozenset[str] = field(default_factory=frozenset)
    """EVALCORE_ADMINS: emails that are always admin (the first admin comes from here)."""
    default_role: str = "viewer"
    """EVALCORE_DEFAULT_ROLE: the role of someone who signs in for the first time."""
    user_header: str = "X-Forwarded-Email"
    """EVALCORE_USER_HEADER: the trusted header the proxy sets to the user's email (header mode)."""
    name_header: str = "X-Forwarded-User"
    """EVALCORE_NAME_HEADER: the header with a display name (optional)."""
    secret_header: str = "X-Evalcore-Proxy-Secret"
    """EVALCORE_SECRET_HEADER: the header that must carry EVALCORE_HEADER_SECRET."""
    header_secret: str = ""
    """EVALCORE_HEADER_SECRET: shared with the proxy; without it header mode refuses everyone."""

    @property
    def team(self) -> bool:
        """Whether people sign in (oidc or header) rather than one local user."""
        return self.mode != "none"


def auth_config(env: Mapping[str, str] | None = None) -> AuthConfig:
    """Build the config from `env` (default os.environ); a bad value names the variable."""
    env = os.environ if env is None else env
    mode = (env.get("EVALCORE_AUTH") or "none").strip().lower()
    if mode not in MODES:
        raise EvalcoreError(f"EVALCORE_AUTH={mode!r} is not a sign-in mode; use one of "
                            f"{', '.join(MODES)}")
    admins = frozenset(e.strip().lower() for e in (env.get("EVALCORE_ADMINS") or "").split(",")
                       if e.strip())
    try:
        default_role = check_role(env.get("EVALCORE_DEFAULT_ROLE") or "viewer")
    except EvalcoreError as exc:
        raise EvalcoreError(f"EVALCORE_DEFAULT_ROLE: {exc}") from None
    if default_role in SERVICE_ROLES:
        raise EvalcoreError(f"EVALCORE_DEFAULT_ROLE={default_role}: a service account's role "
                            "is given by an admin (`users add NAME --role worker`), never to "
                            "whoever signs in; use viewer, evaluator or reviewer")
    for name in ("EVALCORE_USER_HEADER", "EVALCORE_NAME_HEADER", "EVALCORE_SECRET_HEADER"):
        value = env.get(name)
        if value and not _HEADER.fullmatch(value):
            raise SettingsError(f"{name}={value[:40]!r} is not an HTTP header name (letters, "
                                "digits and - only, e.g. X-Forwarded-Email)")
    secret = env.get("EVALCORE_HEADER_SECRET") or ""
    if mode == "header" and 0 < len(secret) < MIN_SECRET:
        raise SettingsError(f"EVALCORE_HEADER_SECRET has {len(secret)} characters: use at "
                            f"least {MIN_SECRET} (e.g. `openssl rand -hex 32`); a short one "
                            "can be guessed, and then anyone can sign in as anyone")
    return AuthConfig(
        mode=mode, admins=admins, default_role=default_role,
        user_header=env.get("EVALCORE_USER_HEADER") or AuthConfig.user_header,
        name_header=env.get("EVALCORE_NAME_HEADER") or AuthConfig.name_header,
        secret_header=env.get("EVALCORE_SECRET_HEADER") or AuthConfig.secret_header,
        header_secret=env.get("EVALCORE_HEADER_SECRET") or "")
