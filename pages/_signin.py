"""Who is using the app: sign-in for team mode, and the current `Actor` for every page.

`EVALCORE_AUTH=none` (default): one local user who may do everything, as before.
`oidc`: Streamlit's st.login with the provider in .streamlit/secrets.toml [auth].
`header`: the user header a trusted reverse proxy sets, honoured only when the proxy's
shared secret header matches. What decides lives in `evalcore.auth`; this draws.
"""
from __future__ import annotations

import os
import time
from typing import Any

import streamlit as st
from evalcore.auth import (audit, auth_config, header_identity, local_actor, oidc_identity,
                           signed_in_actor, SignInError)
from evalcore.auth.identity import Actor, login_key
from evalcore.auth.oidc import (config_problems, metadata_url, provider_name, provider_problem,
                                redirect_problem)
from evalcore.auth.users import role_of
from evalcore.config import check_environment
from evalcore.errors import EvalcoreError
from evalcore.markup import md
from pages._engine import engine

ACTOR = "auth.actor"  # the signed-in Actor (team mode), once per browser session
ROLE_READ = "auth.role_read_at"  # when the role was last read from the database
ROLE_TTL_S = 2.0
"""A role change applies within this many seconds (a page draws many buttons; each asks)."""


class NotSignedIn(Exception):
    """No trusted identity yet (the reason is shown on the sign-in page)."""


def _config() -> Any:
    return auth_config()


def _engine() -> Any:
    return engine()


def _identity(config: Any) -> tuple[str, str]:
    if config.mode == "header":
        return header_identity(dict(st.context.headers), config)
    user = st.user.to_dict()
    if not user.get("is_logged_in"):
        raise NotSignedIn("not signed in")
    return oidc_identity(user)


def _login_key(config: Any) -> str | None:
    """Which sign-in this session belongs to (OpenID Connect: the ID token's iat and
    nonce); None in header mode, where the proxy signs people in out of sight."""
    if config.mode != "oidc":
        return None
    return login_key(st.user.to_dict())


def current_actor() -> "Actor":
    """The acting user of this session; raises (SignInError, NotSignedIn) without one.

    A new session meets the user (app_user, last_seen) once; the audit log gets one
    `user.sign_in` per sign-in, not per session (every reload or typed URL opens a new
    session: `audit.record_sign_in`). Later the role is re-read at most every
    ROLE_TTL_S, so a role change applies within seconds.
    """
    config = _config()
    if not config.team:
        return local_actor()
    email, name = _identity(config)  # every run: a header session must still carry the secret
    known: Actor | None = st.session_state.get(ACTOR)
    now = time.monotonic()
    if known is None or known.email != email:
        known = signed_in_actor(_engine(), email, name, config)
        audit.record_sign_in(_engine(), known, config.mode, _login_key(config))
    elif now - st.session_state.get(ROLE_READ, 0.0) > ROLE_TTL_S:
        known = Actor(email=known.email, name=known.name, role=role_of(_engine(), email, config),
                      team=True)
    else:
        return known
    st.session_state[ACTOR], st.session_state[ROLE_READ] = known, now
    return known


def _oidc_setup_problems() -> list[str]:
    try:
        auth = st.secrets.to_dict().get("auth")
    except FileNotFoundError:  # no secrets.toml at all
        auth = None
    except (OSError, ValueError) as exc:
        return [f"`.streamlit/secrets.toml` cannot be read: {exc}"]
    problems = config_problems(auth)
    if not problems and auth:
        problem = _provider_problem(metadata_url(auth) or "")
        if problem:
            problems.append(problem)
    return problems


def _redirect_warning() -> None:
    """A redirect_uri for another host than the one opened: said, but not blocking (people
    who opened the server by IP still get signed in on its name)."""
    auth = st.secrets.to_dict().get("auth") or {}
    problem = redirect_problem(str(auth.get("redirect_uri", "")), _page_url(), _server_port())
    if problem:
        st.warning(problem)


def _page_url() -> str:
    """The URL the browser opened (behind a proxy: the public one), or '' if unknown."""
    try:
        return str(st.context.url or "")
    except Exception:  # noqa: BLE001 - older Streamlit or no browser (AppTest)
        return ""


def _server_port() -> int:
    return int(st.get_option("server.port"))


@st.cache_data(ttl=30, show_spinner=False)
def _provider_problem(url: str) -> str | None:
    return provider_problem(url) if url else None


def _sign_in_page(config: Any, reason: str) -> None:
    """What a visitor without a trusted identity sees instead of the app."""
    st.title("evalcore")
    if config.mode == "header":
        st.error(f"Access refused: {md(reason)}")
        st.caption("This server is in header mode (EVALCORE_AUTH=header): open it through "
                   "the company's sign-in proxy, not its own port.")
        return
    problems = _oidc_setup_problems()
    if problems:
        st.error("Sign-in is not configured correctly, so nobody can sign in yet:")
        st.markdown("\n".join(f"- {p}" for p in problems))  # trusted markdown: evalcore's
        # own messages about the operator's secrets.toml (their `code` spans are wanted)
        st.caption("For the server's operator: see docs/secrets.example.toml and the README's "
                   "'Deploy for a team' section; restart the app after fixing secrets.toml.")
        return
    _redirect_warning()
    st.write("Sign in with your company account to use evalcore.")
    if st.button("Sign in", type="primary", key="auth.login"):
        st.login(provider_name(st.secrets.to_dict()["auth"]) or None)


def gate() -> "Actor":
    """The session's actor, or the sign-in (or misconfiguration) page and a stop."""
    try:
        check_environment(os.environ)  # every EVALCORE_* value, before anyone is let in
        config = _config()
    except EvalcoreError as exc:
        problem = str(exc)
        _only(lambda: st.error(f"evalcore is misconfigured: {md(problem)}"))
    try:
        return current_actor()
    except (SignInError, NotSignedIn) as exc:
        reason = str(exc)
    _only(lambda: _sign_in_page(config, reason))
    raise AssertionError("unreachable")  # _only stops the script


def _only(draw: Any) -> None:
    """Show `draw` as the app's one page and stop: with no `st.navigation` call Streamlit
    would list every file of pages/ in an automatic sidebar, to people it just refused."""
    st.navigation([st.Page(draw, title="Sign in", url_path="signin", default=True)],
                  position="hidden").run()
    st.stop()


def sidebar_identity() -> None:
    """Who is signed in, their role and a sign-out button (team mode only)."""
    config = _config()
    if not config.team:
        return
    actor = st.session_state.get(ACTOR)
    if actor is None:
        return
    st.caption("Signed in as")
    st.markdown(f"**{md(actor.name)}** ({md(actor.email)}) · role **{md(actor.role)}**")
    if config.mode == "oidc" and st.button("Sign out", key="auth.logout"):
        st.session_state.pop(ACTOR, None)
        st.logout()
