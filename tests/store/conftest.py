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
    """An empty database for one test: a SQLite file, or a new PostgreSQL database (a
    migrated one, emptied by the test before, when the test also asks for `store`, which
    would migrate it)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'evalcore.db'}"
        return
    pg = request.getfixturevalue("pg_url")
    base = pg.rsplit("/", 1)[0]
    migrated = "store" in request.fixturenames and not request.node.get_closest_marker(
        "real_migrations")
    name = _migrated_database(base) if migrated else _new_database(base)
    yield f"{base}/{name}"
    from evalcore.store.db import dispose_engines

    dispose_engines()
    if not (migrated and _emptied(base, name)):
        _admin(base, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


_EMPTIED: list[str] = []
"""Migrated databases this process's tests used and emptied, each for one more test.
`CREATE DATABASE ... TEMPLATE` cost PostgreSQL 0.25-0.3 s of CPU (a server process's,
not counted in any test's), emptying one 0.06-0.1 s."""


def _new_database(base: str) -> str:
    name = f"t_{uuid.uuid4().hex[:12]}"
    _admin(base, f"CREATE DATABASE {name}")
    return name


def _migrated_database(base: str) -> str:
    """A database at head with no rows, under a name no test used: an emptied one renamed
    (so no cache keyed by a URL outlives its test), else a copy of the migrated template."""
    from tests.fakes.postgres import template_database

    name = f"t_{uuid.uuid4().hex[:12]}"
    while _EMPTIED:
        old = _EMPTIED.pop()
        try:
            _admin(base, f"ALTER DATABASE {old} RENAME TO {name}")
        except Exception:  # noqa: BLE001 - someone connected to it since: not reused
            _admin(base, f"DROP DATABASE IF EXISTS {old} WITH (FORCE)")
        else:
            return name
    _admin(base, f"CREATE DATABASE {name} TEMPLATE "
                 f"{template_database(base, 'evalcore_schema', _migrated)}")
    return name


_SHAPE = """SELECT n.nspname, c.relname, c.relkind, a.attname,
       format_type(a.atttypid, a.atttypmod), a.attnotnull
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
ORDER BY 1, 2, 4"""
"""The schema as a comparable list: every relation (tables, indexes, sequences, views) and
column of every user schema."""


def _shape(conn) -> list:  # type: ignore[no-untyped-def]
    return [*conn.execute(_SHAPE).fetchall(),
            *conn.execute("SELECT version_num FROM alembic_version").fetchall()]


def _emptied(base: str, name: str) -> bool:
    """Empty database `name` for another test and keep it in `_EMPTIED`, if its schema is
    still the template's (tables, columns, indexes, sequences, Alembic revision): every
    table truncated, every sequence back at its start. False (it is dropped then) when the
    test changed the schema or the emptying failed."""
    import psycopg

    from tests.fakes.postgres import template_database

    dsn = base.replace("postgresql+psycopg://", "postgresql://")
    try:
        _admin(base, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                     f"WHERE datname = '{name}' AND pid <> pg_backend_pid()")
        template = template_database(base, "evalcore_schema", _migrated)
        if "shape" not in _TEMPLATE:
            with psycopg.connect(f"{dsn}/{template}") as conn:
                _TEMPLATE["shape"] = _shape(conn)
        with psycopg.connect(f"{dsn}/{name}", autocommit=True) as conn:
            conn.execute("SET lock_timeout = '5s'")
            if _shape(conn) != _TEMPLATE["shape"]:
                return False
            tables = conn.execute(
                "SELECT format('%I.%I', schemaname, tablename) FROM pg_tables WHERE "
                "schemaname NOT IN ('pg_catalog', 'information_schema') "
                "AND tablename <> 'alembic_version'").fetchall()
            sequences = conn.execute(
                "SELECT format('%I.%I', schemaname, sequencename) FROM pg_sequences").fetchall()
            conn.execute(f"TRUNCATE {', '.join(t for (t,) in tables)} RESTART IDENTITY CASCADE")
            for (sequence,) in sequences:
                conn.execute(f"ALTER SEQUENCE {sequence} RESTART")
    except Exception:  # noqa: BLE001 - dropped instead
        return False
    _EMPTIED.append(name)
    return True


_TEMPLATE: dict[str, list] = {}


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
