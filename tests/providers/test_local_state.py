"""The embedded model's state while it loads: "starting", not "stopped" (issue 16), and
the line a worker's heartbeat makes of it says so. llama.cpp is replaced by a fake whose load waits for the test."""
from __future__ import annotations

import sys
import threading
import types
from pathlib import Path

import pytest

from evalcore.providers import local
from evalcore.providers.base import ModelConfig


class _Params:
    """Any attribute path can be set (params.model.path = ...), as on CommonParams."""

    def __getattr__(self, name: str) -> "_Params":
        value = _Params()
        object.__setattr__(self, name, value)
        return value


@pytest.fixture()
def slow_llama(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """A fake xllamacpp whose Server() blocks until the returned event is set."""
    release = threading.Event()

    class Server:
        listening_address = "http://127.0.0.1:9"

        def __init__(self, params: _Params) -> None:
            assert release.wait(10), "the test never let the model load"

    fake = types.ModuleType("xllamacpp")
    fake.CommonParams = _Params
    fake.Server = Server
    monkeypatch.setitem(sys.modules, "xllamacpp", fake)
    monkeypatch.setattr(local, "_wait_healthy", lambda url, timeout: None)
    monkeypatch.setattr(local.LocalServer, "_instance", None)
    return release


def test_state_is_starting_while_the_model_loads(slow_llama, tmp_path: Path) -> None:
    from pages._local_model import describe_local

    def local_model_line() -> str:
        return describe_local(local.local_state())

    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    server = local.LocalServer.instance()
    assert server.status()["state"] == "stopped"
    assert local_model_line().startswith("not loaded")
    config = ModelConfig(name="local", kind="local", gguf_path=str(gguf))
    thread = threading.Thread(target=server.start, args=(config,))
    thread.start()
    try:
        for _ in range(200):
            if server.status()["state"] == "starting":
                break
            threading.Event().wait(0.01)
        status = server.status()
        assert status["state"] == "starting" and not status["running"]
        assert status["loading_path"] == str(gguf)
        line = local_model_line()
        assert line.startswith("starting: loading tiny.gguf"), line
    finally:
        slow_llama.set()
        thread.join(10)
    status = server.status()
    assert status["state"] == "running" and status["running"] and status["port"] == 9
    assert local_model_line().startswith("loaded (tiny.gguf, since ")
    server._stop_locked()
