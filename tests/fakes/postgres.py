"""A throw-away PostgreSQL cluster on 127.0.0.1 from Debian's binaries, for the tests,
the benchmarks and the team demo: `with temporary_cluster() as base_url: ...`."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

PG_BIN_DIRS = ("/usr/lib/postgresql/15/bin", "/usr/local/bin", "/usr/bin")
PG_USER = "postgres"  # database superuser name (and OS user when we are root)


def pg_bin(name: str) -> str | None:
    for folder in PG_BIN_DIRS:
        candidate = Path(folder) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which(name)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_cluster_owner(cmd: list[str]) -> list[str]:
    """Prefix `cmd` so it runs as the OS user `postgres` when we are root."""
    if os.geteuid() != 0:
        return cmd
    return ["runuser", "-u", PG_USER, "--", *cmd]


def _ensure_os_user() -> None:
    if os.geteuid() != 0:
        return
    if subprocess.run(["id", PG_USER], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "--system", "--no-create-home", PG_USER], check=True)


def _run(cmd: list[str], what: str) -> None:
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"{what} failed ({result.returncode}): {' '.join(cmd)}\n"
                           f"{result.stdout}\n{result.stderr}")


@contextmanager
def temporary_cluster(listen: tuple[str, ...] = (), clients: tuple[str, ...] = ()
                      ) -> Iterator[str]:
    """Start a fresh cluster (trust auth, no fsync) and yield its base URL
    `postgresql+psycopg://postgres@127.0.0.1:PORT`; stopped and removed at the end. It
    also listens on the addresses in `listen` (a test's own bridge, tests/fakes/netns.py),
    same port, and trusts connections from the networks in `clients` (CIDRs)."""
    initdb, pg_ctl = pg_bin("initdb"), pg_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        raise FileNotFoundError("PostgreSQL binaries (initdb, pg_ctl) not found; "
                                "apt-get install postgresql-15")
    _ensure_os_user()
    # Not under pytest's tmp_path: /tmp/pytest-of-root is 0700 and the postgres user
    # must reach the data directory.
    root = Path(tempfile.mkdtemp(prefix="evalcore-pg-"))
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, PG_USER)
        shutil.chown(sock, PG_USER)
    root.chmod(0o755)
    port = free_port()
    try:
        _run(_as_cluster_owner([initdb, "-D", str(data), "-U", PG_USER, "--auth=trust",
                                "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]), "initdb")
        with (data / "pg_hba.conf").open("a") as hba:
            hba.writelines(f"host all all {net} trust\n" for net in clients)
        addresses = ",".join(("127.0.0.1", *listen))
        options = (f"-c listen_addresses={addresses} -p {port} -k {sock} -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        _run(_as_cluster_owner([pg_ctl, "-D", str(data), "-l", str(root / "server.log"),
                                "-o", options, "-w", "-t", "60", "start"]), "pg_ctl start")
        yield f"postgresql+psycopg://{PG_USER}@127.0.0.1:{port}"
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(_as_cluster_owner([pg_ctl, "-D", str(data), "-m", "immediate",
                                              "-w", "stop"]), capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)


def create_database(base_url: str, name: str) -> str:
    """CREATE DATABASE `name` on the cluster; returns its URL."""
    import psycopg

    dsn = base_url.replace("postgresql+psycopg://", "postgresql://") + "/postgres"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"{base_url}/{name}"


_shared: dict[str, object] = {}


def shared_cluster() -> str:
    """One cluster per test process, started on first use, for every `pg_url` fixture.

    Each conftest that defines or re-exports `pg_url` (store, auth, runner) gets its own
    session fixture from pytest, which started a cluster each (initdb + start, seconds of
    CPU per worker); they now share this one. Stopped by `stop_shared_cluster` (the root
    conftest's session end) or, failing that, at interpreter exit."""
    if "base" not in _shared:
        import atexit
        from contextlib import ExitStack

        stack = ExitStack()
        _shared["base"] = stack.enter_context(temporary_cluster())
        _shared["stack"] = stack
        atexit.register(stop_shared_cluster)
    return str(_shared["base"])


def stop_shared_cluster() -> None:
    """Stop the process's shared cluster, if one was started."""
    stack = _shared.pop("stack", None)
    _shared.clear()
    if stack is not None:
        stack.close()  # type: ignore[attr-defined]


def template_database(base_url: str, name: str, build) -> str:  # type: ignore[no-untyped-def]
    """Database `name` on the cluster, made once per process by `build(url)`; new databases
    copy it with `CREATE DATABASE ... TEMPLATE name` (build must close its connections)."""
    key = f"template:{base_url}/{name}"
    if key not in _shared:
        url = create_database(base_url, name)
        build(url)
        _shared[key] = url
    return name
