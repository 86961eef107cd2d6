"""Store fixtures: a throw-away PostgreSQL cluster and one database per test, so the same
test modules run against SQLite and PostgreSQL (`store_url` is parametrised).

The cluster is the Debian postgresql 15 binaries started on 127.0.0.1 and a free port.
initdb refuses to run as root, so as root the cluster belongs to the `postgres` user.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Iterator

import pytest



def _load_root_conftest():  # type: ignore[no-untyped-def]
    """tests/conftest.py as a module: both files are called `conftest`, so no plain import."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "evalcore_tests_root_conftest", Path(__file__).resolve().parents[1] / "conftest.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


require = _load_root_conftest().require

PG_BIN_DIRS = ("/usr/lib/postgresql/15/bin", "/usr/local/bin", "/usr/bin")
PG_USER = "postgres"  # database superuser name (and OS user when we are root)


def _pg_bin(name: str) -> str | None:
    for folder in PG_BIN_DIRS:
        candidate = Path(folder) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which(name)


def _free_port() -> int:
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


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """URL of database `evalcore_test` on a fresh PostgreSQL cluster (stopped at the end)."""
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    require(initdb is not None and pg_ctl is not None,
            "PostgreSQL binaries (initdb, pg_ctl) not found; apt-get install postgresql-15")
    assert initdb and pg_ctl
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
    port = _free_port()
    try:
        _run(_as_cluster_owner([initdb, "-D", str(data), "-U", PG_USER, "--auth=trust",
                                "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]), "initdb")
        options = (f"-c listen_addresses=127.0.0.1 -p {port} -k {sock} -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=100")
        _run(_as_cluster_owner([pg_ctl, "-D", str(data), "-l", str(root / "server.log"),
                                "-o", options, "-w", "-t", "60", "start"]), "pg_ctl start")
        base = f"postgresql+psycopg://{PG_USER}@127.0.0.1:{port}"
        _admin(base, "CREATE DATABASE evalcore_test")
        yield f"{base}/evalcore_test"
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(_as_cluster_owner([pg_ctl, "-D", str(data), "-m", "immediate",
                                              "-w", "stop"]), capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)


def _admin(base_url: str, sql: str) -> None:
    """Run `sql` (e.g. CREATE DATABASE) on the maintenance database, outside a transaction."""
    import psycopg

    dsn = base_url.replace("postgresql+psycopg://", "postgresql://") + "/postgres"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database for one test: a SQLite file, or a new PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'evalcore.db'}"
        return
    pg = request.getfixturevalue("pg_url")
    base = pg.rsplit("/", 1)[0]
    name = f"t_{uuid.uuid4().hex[:12]}"
    _admin(base, f"CREATE DATABASE {name}")
    yield f"{base}/{name}"
    from evalcore.store.db import dispose_engines

    dispose_engines()
    _admin(base, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture()
def store(store_url: str):
    """An engine on `store_url`, schema migrated to head."""
    from evalcore.store.db import make_engine

    engine = make_engine(store_url)
    yield engine
    engine.dispose()


def add_items(engine, n: int, name: str = "ds") -> list[int]:  # type: ignore[no-untyped-def]
    """A dataset with `n` items; returns the item ids (calls need real items)."""
    from evalcore.store.db import session_scope
    from evalcore.store.tables import Dataset, Item

    with session_scope(engine) as session:
        dataset = Dataset(name=name, format="test", task_type="choice")
        session.add(dataset)
        session.flush()
        items = [Item(dataset_id=dataset.id, idx=i, question=f"q{i}", task_type="choice",
                      choices=["A", "B"]) for i in range(n)]
        session.add_all(items)
        session.flush()
        return [item.id for item in items]  # type: ignore[misc]


@pytest.fixture()
def item_ids(store) -> list[int]:  # type: ignore[no-untyped-def]
    """Ids of 12 items of one dataset in `store`."""
    return add_items(store, 12)


@pytest.fixture()
def make_items():  # type: ignore[no-untyped-def]
    """The `add_items(engine, n, name)` helper, for tests that need their own datasets."""
    return add_items
