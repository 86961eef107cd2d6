"""Where evalcore may send a request: one policy for every outbound path (alert webhooks,
SMTP, model calls), so a URL typed by an evaluator cannot reach the workers' own network.

Guarded destinations (webhooks and SMTP servers, which any evaluator sets) may reach only
public addresses: loopback, private, link-local (cloud metadata), shared, reserved and
multicast addresses are refused, **after DNS resolution and on the addresses actually
connected to**, so a name that resolves differently the second time cannot slip through.
`EVALCORE_OUTBOUND_ALLOW` (comma-separated `host:port` or CIDR) is the admin's exception
list, e.g. `127.0.0.1:9000,hooks.internal:443,10.20.0.0/16`.

Model endpoints are set only by admins (team mode) or by the single user who is their own
admin, so their addresses are not filtered (Ollama or llama.cpp on 127.0.0.1 keep working);
what applies to them as to webhooks: a redirect is never followed (it is an error naming
its status), as a redirect is how a trusted endpoint would hand a request to another host.

This module imports aiohttp: the model client imports it on its first call, not at start-up.
"""
from __future__ import annotations

import ipaddress
import os
import smtplib
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver
from aiohttp.resolver import DefaultResolver

from evalcore.errors import EvalcoreError

ALLOW_ENV = "EVALCORE_OUTBOUND_ALLOW"
REDIRECTS = frozenset({301, 302, 303, 307, 308})

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class OutboundRefused(aiohttp.ClientError):
    """A destination the policy refuses (no connection was made). Not an OSError, so
    neither aiohttp nor the model client's retries read it as a connection failure."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(f"{host}:{port} is not an allowed destination: loopback, private, "
                         f"link-local and metadata addresses are refused (an admin may allow "
                         f"it in {ALLOW_ENV}, e.g. {ALLOW_ENV}={host}:{port})")
        self.host, self.port = host, port


class RedirectRefused(aiohttp.ClientError):
    """The server answered with a redirect; it is not followed (nor retried)."""

    def __init__(self, status: int, host: str) -> None:
        super().__init__(f"HTTP {status} (a redirect) from {host}: redirects are not "
                         "followed; give the final URL")
        self.status = status


def _unwrap(ip: IPAddress) -> IPAddress:
    """The IPv4 address carried inside an IPv6 one (mapped, 6to4, NAT64), else `ip`."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return ip.ipv4_mapped
        if ip.sixtofour is not None:
            return ip.sixtofour
        if ip in _NAT64:
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip


def public(ip: IPAddress) -> bool:
    """Whether `ip` is an ordinary Internet address (not loopback, private, link-local,
    shared, reserved, unspecified or multicast)."""
    ip = _unwrap(ip)
    return ip.is_global and not ip.is_multicast


def _address(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


@dataclass(frozen=True)
class Policy:
    """The allowed exceptions to "public addresses only"."""

    networks: tuple[Any, ...] = ()
    """CIDRs allowed on every port."""
    endpoints: frozenset[tuple[str, int]] = frozenset()
    """(host name or address, port) pairs allowed."""

    def allows(self, address: str, port: int, host: str = "") -> bool:
        """Whether a connection to `address`:`port` (resolved from `host`) may be made."""
        ip = _address(address)
        if ip is None:
            return False
        if (host.lower().strip("[]"), port) in self.endpoints:
            return True
        if (str(_unwrap(ip)), port) in self.endpoints or (str(ip), port) in self.endpoints:
            return True
        if any(_unwrap(ip) in net or ip in net for net in self.networks):
            return True
        return public(ip)

    def check(self, host: str, port: int) -> None:
        """Refuse `host`:`port` at once when the host is an address the policy refuses
        (a name is checked on the addresses it resolves to, when connecting)."""
        ip = _address(host)
        if ip is not None and not self.allows(str(ip), port, host):
            raise OutboundRefused(host, port)


def parse_allow(text: str) -> Policy:
    """The policy of an `EVALCORE_OUTBOUND_ALLOW` value (an error names a bad entry)."""
    networks, endpoints = [], set()
    for entry in (e.strip() for e in (text or "").split(",")):
        if not entry:
            continue
        if "/" in entry or _address(entry) is not None:
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
                continue
            except ValueError:
                pass
        host, sep, port = entry.rpartition(":")
        if sep and host and port.isdigit() and 0 < int(port) < 65536:
            ip = _address(host)
            endpoints.add((str(ip) if ip else host.lower(), int(port)))
            continue
        raise EvalcoreError(f"{ALLOW_ENV}: entry {entry!r} is neither host:port nor a CIDR "
                            f"(e.g. 127.0.0.1:9000, hooks.internal:443, 10.20.0.0/16)")
    return Policy(tuple(networks), frozenset(endpoints))


def policy(env: Mapping[str, str] | None = None) -> Policy:
    """The policy of the environment (read at each request: cheap, and a changed setting
    applies without a restart)."""
    return parse_allow((os.environ if env is None else env).get(ALLOW_ENV, ""))


def connect(host: str, port: int, timeout: float | None) -> socket.socket:
    """A TCP connection to `host`:`port` for synchronous clients (smtplib): resolved once,
    each address checked, and the checked address is the one connected to."""
    rules = policy()
    rules.check(host, port)
    error: Exception = OutboundRefused(host, port)
    for family, kind, proto, _, sockaddr in socket.getaddrinfo(host, port,
                                                                type=socket.SOCK_STREAM):
        if not rules.allows(str(sockaddr[0]), port, host):
            continue
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(timeout)
            sock.connect(sockaddr)
            return sock
        except OSError as exc:
            sock.close()
            error = exc
    raise error


class GuardedResolver(AbstractResolver):
    """aiohttp's resolver, keeping only the addresses the policy allows (none: refused):
    the addresses checked are the ones the connector then connects to."""

    def __init__(self, rules: Policy) -> None:
        self._rules = rules
        self._inner = DefaultResolver()

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[Any]:
        found = await self._inner.resolve(host, port, family)
        kept = [h for h in found if self._rules.allows(h["host"], h["port"] or port, host)]
        if not kept:
            raise OutboundRefused(host, port)
        return kept

    async def close(self) -> None:
        await self._inner.close()


def _middleware(rules: Policy | None) -> Any:
    """Refuses an address host the policy refuses (aiohttp skips the resolver for those)
    before connecting, and every redirect after it."""
    async def guard(request: Any, handler: Any) -> Any:
        url = request.url
        if rules is not None:
            rules.check(url.host or "", url.port or 0)
        response = await handler(request)
        if response.status in REDIRECTS:
            response.release()
            raise RedirectRefused(response.status, url.host or "")
        return response

    return guard


def session(*, guard_addresses: bool = True, **connector: Any) -> aiohttp.ClientSession:
    """An aiohttp session under the policy: redirects refused always; with
    `guard_addresses`, only addresses the policy allows are connected to. `connector`
    holds TCPConnector settings (limits, DNS cache)."""
    rules = policy() if guard_addresses else None
    if rules is not None:
        connector["resolver"] = GuardedResolver(rules)
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(**connector),
                                 middlewares=(_middleware(rules),))


class _GuardedSMTP(smtplib.SMTP):
    def _get_socket(self, host: str, port: int, timeout: float | None) -> socket.socket:
        return connect(host, port, timeout)


class _GuardedSMTPSSL(smtplib.SMTP_SSL, _GuardedSMTP):
    """SMTP_SSL wraps the socket `_GuardedSMTP` connected (its `super()` is that class)."""


def smtp_class(*, ssl: bool, guarded: bool) -> type[smtplib.SMTP]:
    """smtplib's client whose connection, when `guarded`, is made by `connect` (checked)."""
    if not guarded:
        return smtplib.SMTP_SSL if ssl else smtplib.SMTP
    return _GuardedSMTPSSL if ssl else _GuardedSMTP
