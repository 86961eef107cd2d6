"""Store fixtures: a throw-away PostgreSQL cluster and one database per test, so the same
test modules run against SQLite and PostgreSQL (`store_url` is parametrised).

The cluster is the Debian postgresql 15 binaries started on 127.0.0.1 and a free port.
initdb refuses to run as root, so as root the cluster belongs to the `postgres` user.
"""
from __future__ import annotations

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


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """URL of database `evalcore_test` on the process's PostgreSQL cluster (one cluster
    however many conftests re-export this fixture; stopped at the session's end)."""
    from tests.fakes.postgres import pg_bin, shared_cluster, template_database

    require(pg_bin("initdb") is not None and pg_bin("pg_ctl") is not None,
            "PostgreSQL binaries (initdb, pg_ctl) not found; apt-get install postgresql-15")
    base = shared_cluster()
    template_database(base, "evalcore_test", lambda url: None)
    yield f"{base}/evalcore_test"


def _migrated(url: str) -> None:
    """Bring a new database to head with the real migrations, then close every connection
    (a template database must have none when it is copied)."""
    from evalcore.store.db import make_engine

    make_engine(url).dispose()


def _admin(base_url: str, sql: str) -> None:
    """Run `sql` (e.g. CREATE DATABASE) on the maintenance database, outside a transaction."""
    import psycopg

    dsn = base_url.replace("postgresql+psycopg://", "postgresql://") + "/postgres"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database for one test: a SQLite file, or a new PostgreSQL database (a copy
    of a migrated one when the test also asks for `store`, which would migrate it)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'evalcore.db'}"
        return
    pg = request.getfixturevalue("pg_url")
    base = pg.rsplit("/", 1)[0]
    name = f"t_{uuid.uuid4().hex[:12]}"
    if "store" in request.fixturenames and not request.node.get_closest_marker(
            "real_migrations"):  # `store` migrates it anyway: copy a migrated one
        from tests.fakes.postgres import template_database

        _admin(base, f"CREATE DATABASE {name} TEMPLATE "
                     f"{template_database(base, 'evalcore_schema', _migrated)}")
    else:
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
