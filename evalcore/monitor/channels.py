"""Alert channels: a webhook (plain JSON, Slack- or Feishu/Lark-shaped) and e-mail over
SMTP. Secrets follow the rules of model keys: the schedule stores the NAME of an
environment variable (`url_env`, `password_env`), read when sending; a webhook URL given
as is is stored but only ever shown masked (scheme and host), and every value read is
registered with `evalcore.masking`, so error texts and logs never carry it."""
from __future__ import annotations

import hashlib
import os
from typing import Any, Mapping, Optional
from urllib.parse import urlsplit

from evalcore.errors import EvalcoreError
from evalcore.masking import REDACTED, register_secret

SHAPES = ("plain", "slack", "feishu")
TLS = ("none", "starttls", "ssl")


class ChannelError(EvalcoreError):
    """A channel cannot be used (names the flag or environment variable to fix)."""


def webhook(url: str = "", *, url_env: str = "", shape: str = "plain") -> dict[str, Any]:
    """A webhook channel from a URL or the name of the variable that holds it."""
    if shape not in SHAPES:
        raise ChannelError(f"webhook shape {shape!r} unknown; one of {', '.join(SHAPES)}")
    if bool(url) == bool(url_env):
        raise ChannelError("a webhook needs a URL (--webhook URL) or the name of an "
                           "environment variable holding it (--webhook-env NAME), not both")
    if url and urlsplit(url).scheme not in ("http", "https"):
        raise ChannelError(f"webhook URL must start with http:// or https:// (got "
                           f"{masked_url(url)})")
    return {"type": "webhook", "shape": shape, "url": url, "url_env": url_env}


def email(to: str, *, host: str = "", port: int = 0, user: str = "", password_env: str = "",
          sender: str = "", tls: str = "none",
          env: Optional[Mapping[str, str]] = None) -> dict[str, Any]:
    """An e-mail channel; server settings default to EVALCORE_SMTP_HOST, _PORT, _USER,
    _FROM and _TLS, the password to the variable named by EVALCORE_SMTP_PASSWORD_ENV."""
    env = os.environ if env is None else env
    if "@" not in (to or ""):
        raise ChannelError(f"e-mail address {to!r} has no @; give --email NAME@HOST")
    tls = tls if tls != "none" else env.get("EVALCORE_SMTP_TLS", "none")
    if tls not in TLS:
        raise ChannelError(f"SMTP TLS mode {tls!r} unknown; one of {', '.join(TLS)}")
    default_host, default_port = smtp_server(tls, env)
    return {"type": "email", "to": to, "host": host or default_host,
            "port": int(port or default_port), "user": user or env.get("EVALCORE_SMTP_USER", ""),
            "password_env": password_env or env.get("EVALCORE_SMTP_PASSWORD_ENV", ""),
            "sender": sender or env.get("EVALCORE_SMTP_FROM", "evalcore@localhost"),
            "tls": tls}


def smtp_server(tls: str, env: Mapping[str, str] | None = None) -> tuple[str, int]:
    """(host, port) of the SMTP server the environment names (the operator's choice):
    EVALCORE_SMTP_HOST (localhost) and EVALCORE_SMTP_PORT (465 with tls=ssl, else 25)."""
    env = os.environ if env is None else env
    try:
        port = int(env.get("EVALCORE_SMTP_PORT") or (465 if tls == "ssl" else 25))
    except ValueError:
        raise ChannelError("EVALCORE_SMTP_PORT must be a number (e.g. 25, 587)") from None
    return env.get("EVALCORE_SMTP_HOST", "localhost"), port


def masked_url(url: str) -> str:
    """scheme://host/*** : enough to recognise a webhook, nothing of its token."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}/{REDACTED}"


def label(channel: Mapping[str, Any]) -> str:
    """The channel as shown everywhere (and the key of its deliveries): no secret in it."""
    if channel.get("type") == "email":
        return f"email {channel['to']} via {channel['host']}:{channel['port']}"
    where = (f"${channel['url_env']}" if channel.get("url_env")
             else masked_url(str(channel.get("url", ""))))
    digest = hashlib.sha256(str(channel.get("url") or channel.get("url_env")).encode()).hexdigest()
    return f"webhook {channel.get('shape', 'plain')} {where} #{digest[:6]}"


def shown(channels: list[Mapping[str, Any]]) -> list[str]:
    return [label(c) for c in channels]


def secret(name: str, what: str, env: Optional[Mapping[str, str]] = None) -> str:
    """The value of environment variable `name` (registered as a secret for masking)."""
    env = os.environ if env is None else env
    value = env.get(name, "")
    if not value:
        raise ChannelError(f"{what}: environment variable {name} is not set; set it where the "
                           "workers run (the schedule stores only its name)")
    register_secret(value)
    return value


def secret_url(name: str, what: str, env: Optional[Mapping[str, str]] = None) -> str:
    """The URL in environment variable `name`; only its part after the host (a hook's
    token) is registered for masking: the scheme and host are no secret, and masking them
    would also mask every other URL on that host (a model's base_url in a run snapshot)."""
    env = os.environ if env is None else env
    value = env.get(name, "")
    if not value:
        raise ChannelError(f"{what}: environment variable {name} is not set; set it where the "
                           "workers run (the schedule stores only its name)")
    parts = urlsplit(value)
    tail = value[len(f"{parts.scheme}://{parts.netloc}"):] if parts.netloc else value
    register_secret(tail)
    return value


def webhook_url(channel: Mapping[str, Any]) -> str:
    """The URL to post to (read from its variable when one is named)."""
    if channel.get("url_env"):
        return secret_url(str(channel["url_env"]), "webhook")
    return str(channel.get("url", ""))
