"""ModelClient against a misbehaving endpoint: keys masked at every offset, a bounded
cost per call (deadline, reply size), and replies that are not answers stored as errors."""

from __future__ import annotations

import base64

import pytest

from evalcore.masking import mask_text
from evalcore.providers.base import ModelConfig, is_refusal
from tests.fakes.fault_server import FILLER_CYCLE, FaultConfig, FaultServer
from tests.providers.test_client_faults import ask, cfg

pytestmark = pytest.mark.integration

KEY = "Hq7Zt2Lm9Xc4Vb8Nw3Ks6Pd1Rf5Gy0Ju2Ei8Ao4Wt6Ys9Ul3Mz7Qx1Cv5Bn0Dk"  # no known prefix


def pieces(secret: str, size: int = 8) -> list[str]:
    return [secret[i:i + size] for i in range(len(secret) - size + 1)]


def leaked(text: str, secret: str = KEY) -> list[str]:
    return [p for p in pieces(secret) if p in text]


@pytest.fixture()
def server():
    with FaultServer(FaultConfig(seed=1)) as srv:
        yield srv


@pytest.mark.parametrize("mode", ["echo", "basic"])
@pytest.mark.parametrize("header", ["", "api-key"])
def test_echoed_key_is_masked_at_every_offset(server, monkeypatch, caplog, mode, header):
    monkeypatch.setenv("EVALCORE_HARDEN_KEY_VAR", KEY)  # a name the env scan would not pick
    server.reconfigure(mode=mode)
    config = cfg(server, api_key_env="EVALCORE_HARDEN_KEY_VAR", api_key_header=header,
                 concurrency=16)
    with caplog.at_level("DEBUG", logger="evalcore"):
        replies, _ = ask(config, [f"q{i}" for i in range(FILLER_CYCLE)])
    errors = [r.error or "" for r in replies]
    assert all(e.startswith("HTTP 401") for e in errors), errors[:3]
    assert not leaked("\n".join(errors)), "a piece of the key is in an error"
    assert not leaked(caplog.text), "a piece of the key is in the log"
    lengths = {len(e) for e in errors}
    assert max(lengths) > 250  # the cut really fell inside the echoed key for some offsets


def test_basic_credentials_pattern_masked_without_knowing_the_key():
    token = base64.b64encode(b"user:hunter2-secret-pass").decode()
    text = mask_text(f"Authorization: Basic {token}; retry with Token abc123def456", secrets=[])
    assert token not in text and "abc123def456" not in text


def test_hanging_endpoint_costs_the_deadline_not_attempts_times_timeout(server):
    server.reconfigure(mode="hang", hang=30.0)
    config = cfg(server, timeout=1.0, deadline=2.5, concurrency=4)
    replies, client = ask(config, ["a", "b", "c", "d"])
    assert all(r.error and r.error.startswith("deadline of 2.5s passed") for r in replies), [
        r.error for r in replies]
    assert all(r.latency_ms < 2500 + 600 for r in replies)
    assert client.stats.errors == 4


@pytest.mark.parametrize("mode", ["big", "bigstream"])
def test_reply_larger_than_the_cap_is_an_error_naming_the_size(server, mode):
    server.reconfigure(mode=mode, big_bytes=10 * 1024 * 1024)
    replies, client = ask(cfg(server, max_reply_bytes=1_048_576), ["a"])
    error = replies[0].error or ""
    assert "max_reply_bytes=1,048,576" in error, error
    if mode == "big":
        assert f"{10 * 1024 * 1024:,} bytes" in error
    assert client.stats.attempts == 1  # not retried: it would be as large again


def test_reply_under_the_cap_is_read(server):
    server.reconfigure(mode="big", big_bytes=200_000)
    replies, _ = ask(cfg(server), ["a"])
    assert replies[0].ok and len(replies[0].text) > 190_000


@pytest.mark.parametrize(("mode", "expected"), [
    ("empty", "empty reply"), ("null", "empty reply"),
    ("html", "malformed reply"), ("404", "HTTP 404: The model does not exist"),
])
def test_replies_that_are_not_answers_are_errors(server, mode, expected):
    server.reconfigure(mode=mode)
    replies, _ = ask(cfg(server), ["a"])
    assert not replies[0].ok and expected in (replies[0].error or ""), replies[0].error
    assert replies[0].text == ""


def test_content_filter_is_a_counted_refusal(server):
    server.reconfigure(mode="filter")
    replies, client = ask(cfg(server), ["a", "b"])
    assert all(is_refusal(r.error) for r in replies)
    assert client.stats.attempts == 2  # not retried


@pytest.mark.parametrize("url", [
    "http://user:sk-abcdef1234567890@api.example.com/v1",
    "https://api.example.com/v1?api-key=abcdef1234567890",
    "https://api.example.com/v1?key=abcdef1234567890",
])
def test_credentials_in_base_url_are_refused_without_echoing_them(url):
    with pytest.raises(ValueError) as caught:
        ModelConfig(name="x", base_url=url, model="m")
    message = str(caught.value).split("[type=")[0]
    assert "--api-key-env" in message and "abcdef1234567890" not in message
