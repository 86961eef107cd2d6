"""`make run` (scripts/run_app.sh): listens on this machine only unless told otherwise,
refuses a reachable address without sign-in, and a SIGTERM or Ctrl-C stop exits 0 (make
printed "Error 143")."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.e2e.test_app_restart import healthy
from tests.fakes.postgres import free_port

pytestmark = [pytest.mark.integration]
START = ["--server.headless", "true", "--server.fileWatcherType", "none"]


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "EVALCORE_HOME": str(home), "PYTHONPATH": str(REPO_ROOT),
           "EVALCORE_WARMUP": "0", **extra}
    for name in ("EVALCORE_DB_URL", "EVALCORE_MODELS", "EVALCORE_AUTH", "EVALCORE_ADDRESS"):
        if name not in extra:
            env.pop(name, None)
    return env


def _listening(port: int) -> list[str]:
    """Local addresses (hex, as /proc/net/tcp{,6} write them) listening on `port`."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.append(address)
    return found


LOOPBACK = {"0100007F", "00000000000000000000000001000000"}  # 127.0.0.1, ::1


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_run_listens_on_loopback_and_stops_cleanly(tmp_path, stop):
    port = free_port()
    with open(tmp_path / "app.log", "wb") as log:
        app = subprocess.Popen(["bash", "scripts/run_app.sh", str(port), *START],
                               cwd=REPO_ROOT, env=_env(tmp_path), stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while not healthy(port):
            assert app.poll() is None, (tmp_path / "app.log").read_text()
            assert time.monotonic() < deadline, "the app did not come up"
            time.sleep(0.2)
        addresses = _listening(port)
        assert addresses and set(addresses) <= LOOPBACK, addresses
        os.killpg(app.pid, stop)  # Ctrl-C reaches the whole group; a supervisor too
        assert app.wait(timeout=60) == 0, (tmp_path / "app.log").read_text()
    finally:
        if app.poll() is None:
            os.killpg(app.pid, signal.SIGKILL)
            app.wait()


def test_a_reachable_address_without_sign_in_is_refused(tmp_path):
    port = free_port()
    for how in ({"EVALCORE_ADDRESS": "0.0.0.0"}, {}):
        args = [] if how else ["--server.address", "0.0.0.0"]
        app = subprocess.Popen(["bash", "scripts/run_app.sh", str(port), *START, *args],
                               cwd=REPO_ROOT, env=_env(tmp_path, **how), text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
        try:
            _, err = app.communicate(timeout=60)
        finally:
            if app.poll() is None:  # it started: stop the app and its worker too
                os.killpg(app.pid, signal.SIGKILL)
                app.wait()
        assert app.returncode == 2
        assert err.count("\n") == 1 and "EVALCORE_AUTH=oidc" in err
        assert not _listening(port)
