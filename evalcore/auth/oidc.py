"""Checks of an OpenID Connect set-up (Streamlit's `[auth]` in .streamlit/secrets.toml),
so a misconfigured server shows what is missing instead of a traceback."""
from __future__ import annotations

import json
import os
from typing import Any, Mapping, Optional
from urllib.error import URLError
from urllib.parse import urlparse
from urllib.request import urlopen

PROVIDER_KEYS = ("client_id", "client_secret", "server_metadata_url")
EXAMPLE = "docs/secrets.example.toml"


def provider_name(auth: Mapping[str, Any]) -> Optional[str]:
    """The provider st.login should use: None for keys directly under [auth], else the
    first [auth.NAME] table (EVALCORE_OIDC_PROVIDER picks another)."""
    wanted = os.environ.get("EVALCORE_OIDC_PROVIDER")
    if wanted:
        return wanted
    if any(key in auth for key in PROVIDER_KEYS):
        return None
    tables = [k for k, v in auth.items() if isinstance(v, Mapping)]
    return tables[0] if tables else None


def config_problems(auth: Optional[Mapping[str, Any]]) -> list[str]:
    """What keeps sign-in from working, in words an operator can act on (empty: fine)."""
    if not auth:
        return [f"`.streamlit/secrets.toml` has no `[auth]` section; copy {EXAMPLE} and fill "
                "in your identity provider (client_id, client_secret, server_metadata_url)"]
    problems = []
    redirect = str(auth.get("redirect_uri") or "")
    if not redirect:
        problems.append("`[auth]` has no `redirect_uri`; set it to this app's public URL + "
                        "`/oauth2callback`, e.g. https://evalcore.example.com/oauth2callback")
    elif not redirect.endswith("/oauth2callback"):
        problems.append(f"`redirect_uri = {redirect!r}` must end with `/oauth2callback`, and "
                        "the same URL must be registered with the identity provider")
    if not auth.get("cookie_secret"):
        problems.append("`[auth]` has no `cookie_secret`; set a long random string (the same on "
                        "every replica), e.g. `python -c 'import secrets; "
                        "print(secrets.token_hex(32))'`")
    name = provider_name(auth)
    section = auth if name is None else auth.get(name)
    if not isinstance(section, Mapping):
        problems.append(f"`[auth.{name}]` is missing (EVALCORE_OIDC_PROVIDER={name})")
        return problems
    where = "[auth]" if name is None else f"[auth.{name}]"
    missing = [key for key in PROVIDER_KEYS if not section.get(key)]
    if missing:
        problems.append(f"`{where}` is missing {', '.join(missing)} (from your identity "
                        "provider's client registration)")
    return problems


def redirect_problem(redirect_uri: str, page_url: str, port: int) -> Optional[str]:
    """Why the provider would send people back somewhere else than the page they opened
    (a wrong redirect_uri), or None. `{port}` in redirect_uri is this server's port."""
    if not redirect_uri or not page_url:
        return None
    target = urlparse(redirect_uri.replace("{port}", str(port)))
    here = urlparse(page_url)
    if (target.scheme, target.netloc) == (here.scheme, here.netloc):
        return None
    return (f"`redirect_uri` sends people back to {target.scheme}://{target.netloc}, but this "
            f"page was opened at {here.scheme}://{here.netloc}: after signing in they would "
            "land on another site (or the provider refuses the URL); set redirect_uri to this "
            "app's public URL + /oauth2callback and register it with the provider")


def metadata_url(auth: Mapping[str, Any]) -> Optional[str]:
    """The provider's discovery document URL, if configured."""
    name = provider_name(auth)
    section = auth if name is None else auth.get(name) or {}
    return section.get("server_metadata_url") if isinstance(section, Mapping) else None


def provider_problem(url: str, timeout: float = 5.0) -> Optional[str]:
    """None if the provider's discovery document can be fetched, else why not."""
    if urlparse(url).scheme not in ("http", "https"):
        return f"server_metadata_url {url!r} is not an http(s) URL"
    try:
        with urlopen(url, timeout=timeout) as response:  # noqa: S310 - configured by the operator
            document = json.loads(response.read().decode("utf-8"))
    except (URLError, OSError, ValueError) as exc:
        return (f"the identity provider is unreachable: {url} failed ({exc}); check the URL "
                "and that this server can reach the provider")
    if "authorization_endpoint" not in document:
        return f"{url} is not an OpenID Connect discovery document (no authorization_endpoint)"
    return None
