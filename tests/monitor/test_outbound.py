"""Alerts under the outbound policy (`evalcore.outbound`): an evaluator's webhook cannot
reach the workers' own network (loopback, private, metadata) unless an admin allows it,
never follows a redirect, and a failure shows a status code, never a reply's text, so a
webhook is neither a way to read internal pages nor a port scanner."""
from __future__ import annotations

import asyncio
import socket
import threading

import pytest

from evalcore import outbound
from evalcore.monitor import alerts, channels
from tests.fakes.receivers import InternalPages, WebhookReceiver
from tests.monitor.test_alerts import _message


@pytest.fixture(autouse=True)
def _fast_retries(monkeypatch):
    monkeypatch.setattr(alerts, "BACKOFF_BASE_S", 0.01)


def _send(url: str, shape: str = "plain") -> tuple[bool, int, str | None]:
    return asyncio.run(alerts.send_with_retries(channels.webhook(url, shape=shape), _message()))


def test_the_redirect_to_an_internal_page_is_not_followed_nor_shown(engine, settings,
                                                                    allow_outbound):
    """The probe's case: `schedules test-alert` printed the internal page it was
    redirected to. Even with the receiver's port allowed, the redirect is an error naming
    its status, and the page behind it is never asked for."""
    from tests.conftest import cli_here
    from tests.fakes.stored_runs import seed_dataset
    from tests.pages.helpers import add_fake_model

    add_fake_model(settings)
    seed_dataset(engine, "sums", ["What is 1 plus 1?"])
    with InternalPages() as pages:
        allow_outbound(pages.port)
        base = f"http://127.0.0.1:{pages.port}"
        assert cli_here(settings, "schedules", "add", "stability", "--every", "1d",
                        "--dataset", "sums", "--model", "fake", "--webhook",
                        f"{base}/redir?to={base}/secret").returncode == 0
        sent = cli_here(settings, "schedules", "test-alert", "1")
    shown = sent.stdout + sent.stderr
    assert "HTTP 302" in shown and "redirect" in shown
    assert "swordfish" not in shown and "INTERNAL" not in shown
    assert pages.hits == {"/redir": 1}  # one try: a redirect is not retried


@pytest.mark.parametrize(("path", "status"), [("/secret", 403), ("/redir?to=/secret", 302)])
def test_a_failed_delivery_names_the_status_never_the_body(allow_outbound, path, status):
    with InternalPages() as pages:
        allow_outbound(pages.port)
        ok, tries, error = _send(f"http://127.0.0.1:{pages.port}{path}")
    assert not ok and tries == 1
    assert error is not None and f"HTTP {status}" in error
    assert InternalPages.SECRET_TEXT not in error and "swordfish" not in error


def test_a_feishu_refusal_names_its_code_not_the_reply(allow_outbound):
    with WebhookReceiver(reply='{"code": 19001, "msg": "INTERNAL-TEXT"}') as hook:
        allow_outbound(hook.port)
        ok, _, error = _send(hook.url, shape="feishu")
    assert not ok and error == "Feishu/Lark refused the message (code 19001)"


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::ffff:127.0.0.1]", "[::1]",
                                  "2130706433", "127.1", "0x7f.0.0.1"])
def test_loopback_is_refused_by_default_however_it_is_spelt(host, monkeypatch):
    """(aiohttp itself refuses the non-canonical spellings: no request either.)"""
    monkeypatch.delenv(outbound.ALLOW_ENV, raising=False)
    with WebhookReceiver() as hook:
        ok, tries, error = _send(f"http://{host}:{hook.port}/hook")
    assert not ok and hook.requests == 0
    if host in ("127.0.0.1", "localhost", "[::ffff:127.0.0.1]", "[::1]"):
        assert tries == 1 and f"{outbound.ALLOW_ENV}=" in str(error)
        assert "not an allowed destination" in str(error)


class _Answers:
    """A resolver standing in for DNS: every name resolves to `address`."""

    address = "127.0.0.1"

    async def resolve(self, host, port=0, family=socket.AF_INET):
        return [{"hostname": host, "host": self.address, "port": port, "family": family,
                 "proto": 0, "flags": 0}]

    async def close(self) -> None:
        pass


def test_a_name_is_checked_on_the_address_it_resolves_to_when_connecting(monkeypatch,
                                                                         allow_outbound):
    """A public-looking name whose DNS answer is loopback (what a rebinding name answers
    on the lookup that matters) is refused at connect time; allowed once the admin names
    that address and port, which shows the checked answer is the one connected to."""
    monkeypatch.setattr(outbound, "DefaultResolver", _Answers)
    monkeypatch.delenv(outbound.ALLOW_ENV, raising=False)
    with WebhookReceiver() as hook:
        url = f"http://hooks.example.org:{hook.port}/hook"
        refused = _send(url)
        allow_outbound(hook.port)
        sent = _send(url)
    assert refused[0] is False and "not an allowed destination" in str(refused[2])
    assert sent == (True, 1, None) and hook.requests == 1


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _hanging_up_port() -> tuple[socket.socket, int]:
    """A port that accepts and closes at once (a service that does not speak HTTP)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return server, server.getsockname()[1]


def test_closed_and_open_ports_fail_with_the_same_words(allow_outbound):
    """No port scanner: a closed port and an open one that is not a webhook give one text
    (only the port differs)."""
    closed = _closed_port()
    server, open_port = _hanging_up_port()
    try:
        allow_outbound(closed, open_port)
        errors = [_send(f"http://127.0.0.1:{port}/x")[2] for port in (closed, open_port)]
    finally:
        server.close()
    assert errors[0] == alerts.undelivered(f"http://127.0.0.1:{closed}/***")
    assert errors[1] == alerts.undelivered(f"http://127.0.0.1:{open_port}/***")


def test_smtp_typed_into_a_schedule_is_under_the_policy(engine, monkeypatch):
    """An SMTP host and port an evaluator typed (not the environment's server) is refused
    like a webhook: no connection is made."""
    monkeypatch.delenv(outbound.ALLOW_ENV, raising=False)
    server, port = _hanging_up_port()
    try:
        chan = channels.email("oncall@example.org", host="127.0.0.1", port=port)
        ok, tries, error = asyncio.run(alerts.send_with_retries(chan, _message()))
    finally:
        server.close()
    assert not ok and tries == 1 and "not an allowed destination" in str(error)


@pytest.mark.parametrize(("address", "port", "allowed"), [
    ("127.0.0.1", 9000, True), ("127.0.0.1", 9001, False), ("10.20.3.4", 1, True),
    ("10.21.0.1", 80, False), ("169.254.169.254", 80, False), ("100.100.100.200", 80, False),
    ("::1", 9000, False), ("::ffff:10.20.0.9", 80, True), ("::ffff:192.168.0.1", 80, False),
    ("fd00:ec2::254", 80, False), ("0.0.0.0", 80, False), ("224.0.0.1", 80, False),
    ("2002:7f00:1::", 80, False), ("64:ff9b::a9fe:a9fe", 80, False),
    ("93.184.216.34", 443, True), ("2606:4700::1111", 443, True),
])
def test_the_policy_of_an_allow_list(address, port, allowed):
    rules = outbound.parse_allow("127.0.0.1:9000, 10.20.0.0/16,hooks.internal:443")
    assert rules.allows(address, port) is allowed


def test_an_allowed_name_is_allowed_whatever_it_resolves_to():
    rules = outbound.parse_allow("hooks.internal:443")
    assert rules.allows("10.1.2.3", 443, "hooks.internal")
    assert not rules.allows("10.1.2.3", 80, "hooks.internal")


@pytest.mark.parametrize("entry", ["hooks.internal", "10.0.0.0/33", "host:0", "host:x", ":80"])
def test_a_bad_allow_entry_is_named(entry):
    from evalcore.errors import EvalcoreError

    with pytest.raises(EvalcoreError, match=f"entry {entry!r} is neither host:port nor a CIDR"):
        outbound.parse_allow(f"127.0.0.1:80,{entry}")
