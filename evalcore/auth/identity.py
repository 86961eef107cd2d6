"""Who is acting: the `Actor` every state change carries, and how it is found for the
app (OpenID Connect claims or a trusted proxy header) and for the CLI.

The page code hands over what Streamlit gives it (`st.user` as a dict, `st.context.headers`);
everything that decides is here, so it is tested without a browser.
"""
from __future__ import annotations

import getpass
import hmac
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional

from evalcore.auth.config import AuthConfig
from evalcore.auth.users import role_of, sign_in
from evalcore.errors import EvalcoreError

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine


class SignInError(EvalcoreError):
    """The request carries no identity evalcore may trust (message says what is missing)."""


@dataclass(frozen=True)
class Actor:
    """A person (or the single local user) acting through the app or the CLI."""

    email: str
    """Lower-cased email in team mode; empty for the single local user."""
    name: str
    role: str
    team: bool = False
    """Signed in through team mode: then the identity, not a typed name, is recorded."""

    @property
    def label(self) -> str:
        """How the actor appears in run.created_by, review logs and the audit log."""
        return self.email or self.name

    def attribution(self, given: Optional[str] = None) -> str:
        """The name to record: in team mode always the identity; for the single local
        user the CLI's explicit --reviewer if given, else the one local identity (pages
        pass nothing, so the app never records "app", "page" or "local" beside it)."""
        if self.team:
            return self.label
        return (given or "").strip() or self.label


def local_user_name(env: Optional[Mapping[str, str]] = None) -> str:
    """The one name of the single local user, in the app and the CLI alike: EVALCORE_USER,
    else the operating-system user (who started the app or the command)."""
    env = os.environ if env is None else env
    user = (env.get("EVALCORE_USER") or "").strip()
    if user:
        return user
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no user database entry (some containers)
        return "local"


def local_actor(name: Optional[str] = None) -> Actor:
    """The single user of `EVALCORE_AUTH=none`: may do everything, as before team mode;
    named `local_user_name()` unless a name is given."""
    return Actor(email="", name=name or local_user_name(), role="admin", team=False)


def cli_actor(engine: Optional["Engine"], config: AuthConfig,
              env: Optional[Mapping[str, str]] = None) -> Actor:
    """The CLI's actor: `EVALCORE_USER`, else the OS user.

    Single-user mode: the admin-equivalent local user, named as in the app
    (`local_user_name`), so the CLI and the pages record one identity. Team mode:
    the role stored for that email (EVALCORE_ADMINS are admin; unknown: the default role).
    """
    env = os.environ if env is None else env
    user = (env.get("EVALCORE_USER") or "").strip()
    if not config.team:
        return local_actor(local_user_name(env))
    email = (user or getpass.getuser()).lower()

    role = role_of(engine, email, config) if engine is not None else config.default_role
    return Actor(email=email, name=email, role=role, team=True)


def header_identity(headers: Mapping[str, Any], config: AuthConfig) -> tuple[str, str]:
    """(email, name) from a trusted proxy's headers, only if its shared secret matches.

    A client can send any header it likes; only the proxy knows EVALCORE_HEADER_SECRET,
    so a request without it (or with a wrong one) is refused whatever user header it has.
    """
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    if not config.header_secret:
        raise SignInError("EVALCORE_AUTH=header needs EVALCORE_HEADER_SECRET (the value your "
                          f"reverse proxy sends in {config.secret_header}); it is not set")
    sent = lower.get(config.secret_header.lower(), "")
    if not hmac.compare_digest(sent.encode(), config.header_secret.encode()):
        raise SignInError(f"this request did not come through the trusted proxy: header "
                          f"{config.secret_header} is missing or wrong")
    email = lower.get(config.user_header.lower(), "").strip().lower()
    if not email:
        raise SignInError(f"the proxy sent no {config.user_header} header; configure it to "
                          "pass the signed-in user's email")
    return email, lower.get(config.name_header.lower(), "").strip() or email


def oidc_identity(user: Mapping[str, Any]) -> tuple[str, str]:
    """(email, name) from OpenID Connect claims (Streamlit's `st.user`)."""
    email = str(user.get("email") or "").strip().lower()
    if not email:
        raise SignInError("the identity provider returned no email claim; add the 'email' "
                          "scope (client_kwargs = { scope = 'openid profile email' } in "
                          ".streamlit/secrets.toml [auth])")
    return email, str(user.get("name") or user.get("preferred_username") or email)


def login_key(user: Mapping[str, Any]) -> Optional[str]:
    """What tells one OpenID Connect sign-in from the next: the ID token's issue time and
    nonce (`st.user` carries the token's claims). Every Streamlit session of a browser
    (a reload, a typed URL, a second tab) shows the same token, so it is one sign-in.
    None when the claims have neither (then `audit.record_sign_in` uses a time window)."""
    parts = [str(user.get(k)) for k in ("iat", "nonce") if user.get(k) not in (None, "")]
    return ":".join(parts) or None


def signed_in_actor(engine: "Engine", email: str, name: str, config: AuthConfig) -> Actor:
    """The Actor for someone the app just identified; first-timers are added to app_user."""
    user = sign_in(engine, email, name, config)
    return Actor(email=user.email, name=user.name or user.email, role=user.role, team=True)
