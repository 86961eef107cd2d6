"""Engine, sessions and schema migration.

SQLite is the default and must be shared by the app's threads, several browser sessions
and a CLI process at once, so every connection gets WAL (readers never block the writer),
a busy timeout, and transactions start with `BEGIN IMMEDIATE`: a deferred transaction
that reads and then writes fails at once with "database is locked" when another writer
got in between, while IMMEDIATE takes the write lock up front and waits its turn (up to
the busy timeout). Reads that never write go through `reader(engine)`, a plain `BEGIN`
that neither blocks nor waits for writers; the store's reads go through `reading`.
PostgreSQL URLs (`postgresql+psycopg://`; `postgres://` and `postgresql://` are read as
that) work the same; the session time zone is UTC.

The schema is owned by Alembic (`evalcore/store/migrations/`), run programmatically by
`init_db`; no alembic.ini is needed at runtime.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Union

from sqlalchemy import create_engine, event, inspect, text
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import StaticPool
from sqlmodel import Session, SQLModel

from evalcore.db_url import normalize_db_url
from evalcore.errors import EvalcoreError, SettingsError
from evalcore.store import monitor_tables, tables  # noqa: F401 - registers every table
from evalcore.store.migrations import HEAD_REVISION

SQLITE_BUSY_TIMEOUT_MS = 30_000
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
INITIAL_REVISION = "0001"
"""The revision whose schema `SQLModel.metadata.create_all` produced before migrations."""

_READ = "evalcore_read"  # execution option: a read-only transaction, deferred BEGIN on SQLite
_PG_MIGRATION_LOCK = 7_301_946  # pg_advisory_xact_lock key serialising concurrent init_db


def is_memory_sqlite(url: str) -> bool:
    """True for `sqlite://` and `sqlite:///:memory:` (one shared connection, no WAL)."""
    parsed = make_url(url)
    return parsed.get_backend_name() == "sqlite" and parsed.database in (None, "", ":memory:")


def make_engine(url: str, *, migrate: bool = True) -> Engine:
    """A new engine for `url`; with `migrate` (default) the schema is brought to head."""
    url = normalize_db_url(url)
    if url.startswith("sqlite"):
        engine = _sqlite_engine(url)
    elif url.startswith("postgresql"):
        engine = create_engine(url, pool_pre_ping=True, connect_args=_pg_connect_args())
    else:
        engine = create_engine(url, pool_pre_ping=True)
    if migrate:
        init_db(engine)
    return engine


DEAD_PEER_S = 5
"""Seconds of silence after which either end of a PostgreSQL connection takes the other
for gone (TCP keepalives, and unacknowledged data): a worker cut off from the database
may hold a row lock (a job's lease, a schedule's due time) in an open transaction, and
the server would keep it for hours (its keepalive default), so no other worker could
take its jobs over. The kernel answers keepalives for a live but busy process, so a slow
worker is never taken for gone; only a lost link is."""


def _pg_connect_args() -> dict[str, Any]:
    """libpq settings (client side) and session settings (server side, in `options`)
    that end a connection whose peer is unreachable for DEAD_PEER_S."""
    idle, interval, count = 2, 1, DEAD_PEER_S - 2
    keepalive = {"tcp_keepalives_idle": idle, "tcp_keepalives_interval": interval,
                 "tcp_keepalives_count": count, "tcp_user_timeout": DEAD_PEER_S * 1000}
    server = " ".join(f"-c {name}={value}" for name, value in keepalive.items())
    return {"options": f"-c timezone=UTC {server}", "keepalives": 1,
            "keepalives_idle": idle, "keepalives_interval": interval,
            "keepalives_count": count, "tcp_user_timeout": DEAD_PEER_S * 1000}


def _sqlite_engine(url: str) -> Engine:
    kwargs: dict[str, Any] = {
        "connect_args": {"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}}
    memory = is_memory_sqlite(url)
    if memory:
        # One shared connection, else each session sees its own empty database. Not for
        # threads: only a file can be shared by concurrent writers.
        kwargs["poolclass"] = StaticPool
    else:
        path = url.split("///", 1)[-1].split("?", 1)[0]
        if path:
            _make_folder(Path(path).parent)
    engine = create_engine(url, **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
        # Let SQLAlchemy, not the sqlite3 module, decide when transactions begin.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")  # before WAL: may wait
        if not memory:
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")  # safe with WAL; no fsync per commit
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        read = conn.get_execution_options().get(_READ, False)
        conn.exec_driver_sql("BEGIN" if read else "BEGIN IMMEDIATE")

    return engine


def _make_folder(folder: Path) -> None:
    """Create the database's folder, or say which setting to fix."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SettingsError(
            f"cannot create the database folder {folder}: {exc.strerror or exc} (set "
            "EVALCORE_HOME to a writable folder, or EVALCORE_DB_URL to another database)"
        ) from None


Bind = Union[Engine, Connection]
"""What the store's functions take, as their `conn`: the Connection of an open
`transaction` (the call joins it; the caller commits once), or an Engine (the call opens
a short transaction of its own)."""


def reader(engine: Bind) -> Bind:
    """`engine` (same pool) for transactions that only read: on SQLite they start with a
    deferred BEGIN, so a long read (an export) never holds up the runner's writes. A
    Connection is returned as it is: a read inside a transaction sees its writes."""
    if isinstance(engine, Connection):
        return engine
    return engine.execution_options(**{_READ: True})


@contextmanager
def transaction(bind: Bind) -> Iterator[Connection]:
    """One write transaction: on an Engine a new one, committed when the block ends and
    rolled back if it raises; on a Connection the caller's open one (nothing committed
    here). Every step of an action runs in it, so a process dying between two steps
    leaves everything or nothing stored."""
    if isinstance(bind, Connection):
        yield bind
        return
    with bind.begin() as conn:
        yield conn


@contextmanager
def reading(bind: Bind) -> Iterator[Connection]:
    """A connection to read with: a deferred read transaction of its own on an Engine,
    the caller's transaction on a Connection (so it sees what that wrote)."""
    if isinstance(bind, Connection):
        yield bind
        return
    with reader(bind).connect() as conn:
        yield conn


_engines: dict[str, Engine] = {}
_engines_lock = threading.Lock()


def get_engine(url: str) -> Engine:
    """The process-wide engine for `url` (one pool shared by threads and sessions)."""
    with _engines_lock:
        engine = _engines.get(url)
        if engine is None:
            engine = _engines[url] = make_engine(url)
        return engine


def dispose_engines() -> None:
    """Close every cached engine (tests, or before forking a process)."""
    with _engines_lock:
        for engine in _engines.values():
            engine.dispose()
        _engines.clear()


@contextmanager
def session_scope(bind: Bind, *, write: bool = True) -> Iterator[Session]:
    """An ORM session inside `transaction(bind)` (or a read, `reading(bind)`, with
    `write=False`: a page or an export that never holds up the runner). The session only
    flushes; the transaction commits when the block ends, or rolls back if it raises, so
    ORM and Core writes of one action commit together."""
    with (transaction(bind) if write else reading(bind)) as conn, \
            Session(conn, expire_on_commit=False) as session:
        yield session
        session.flush()


# ---------------------------------------------------------------- migrations


def alembic_config(connection: Connection | None = None,
                   script_location: str | Path | None = None):  # -> alembic.config.Config
    """An Alembic config pointing at the package's migration scripts (no alembic.ini)."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(script_location or MIGRATIONS_DIR))
    cfg.attributes["connection"] = connection
    return cfg


def migrate(engine: Engine, revision: str = "head", *,
            script_location: str | Path | None = None) -> None:
    """Upgrade the schema to `revision` (default: the newest).

    Runs in one transaction that holds the write lock (SQLite) or an advisory lock
    (PostgreSQL), so processes starting together migrate once and the others wait. A
    database created before migrations existed (tables, no alembic_version) is stamped
    at the initial revision rather than recreated, then upgraded.
    """
    from alembic import command
    from alembic.script import ScriptDirectory

    with engine.connect() as conn, _foreign_keys_off(conn), conn.begin():
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_MIGRATION_LOCK})
        cfg = alembic_config(conn, script_location)
        current = _current_revision(conn)
        if current is None and _has_legacy_tables(conn):
            command.stamp(cfg, INITIAL_REVISION)
            current = INITIAL_REVISION
        scripts = ScriptDirectory.from_config(cfg)
        head = scripts.get_current_head()
        if current == (head if revision == "head" else revision):
            return  # nothing to do: the common case, kept cheap
        if current is not None and current not in {s.revision for s in scripts.walk_revisions()}:
            raise EvalcoreError(
                f"the database {engine.url.render_as_string(hide_password=True)} is at schema "
                f"revision {current!r}, newer than this evalcore knows (head {head!r}); "
                "upgrade evalcore or point EVALCORE_DB_URL at another database")
        command.upgrade(cfg, revision)
        _check_foreign_keys(conn)


@contextmanager
def _foreign_keys_off(conn: Connection) -> Iterator[None]:
    """SQLite: foreign keys off while migrating (before the transaction begins: the
    PRAGMA is a no-op inside one). A batch migration rebuilds a parent table by dropping
    it and renaming its copy; with the checks on, the drop fails (or a deferred check
    fails at commit) although every reference is valid again once the copy is renamed.
    `_check_foreign_keys` checks them all before the commit instead."""
    if conn.dialect.name != "sqlite":
        yield
        return
    raw = conn.connection.dbapi_connection
    raw.execute("PRAGMA foreign_keys=OFF")  # type: ignore[union-attr]
    try:
        yield
    finally:
        raw.execute("PRAGMA foreign_keys=ON")  # type: ignore[union-attr]


def _check_foreign_keys(conn: Connection) -> None:
    """SQLite: refuse (roll back) a migration that left a row pointing at nothing."""
    if conn.dialect.name != "sqlite":
        return
    broken = conn.exec_driver_sql("PRAGMA foreign_key_check").all()
    if broken:
        table, rowid, parent, _ = broken[0]
        raise EvalcoreError(f"migrating the database left {len(broken)} row(s) pointing at "
                            f"missing rows (first: {table} rowid {rowid} -> {parent}); the "
                            "migration was rolled back, the database is unchanged")


def init_db(engine: Engine) -> None:
    """Bring the schema up to date (Alembic `upgrade head`); cheap when already current."""
    if _recorded_revision(engine) == HEAD_REVISION:
        return  # the common case: no Alembic import at all
    migrate(engine, "head")


def _recorded_revision(engine: Engine) -> str | None:
    """alembic_version's value read with plain SQL, None if the table is missing."""
    try:
        with reader(engine).connect() as conn:
            return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    except DBAPIError:
        return None


def current_revision(engine: Engine) -> str | None:
    """The Alembic revision the database is at, or None if it was never migrated."""
    with reader(engine).connect() as conn:
        return _current_revision(conn)


def _current_revision(conn: Connection) -> str | None:
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(conn).get_current_revision()


def _has_legacy_tables(conn: Connection) -> bool:
    """True if `create_all` made our tables before Alembic managed this database."""
    return bool(set(inspect(conn).get_table_names()) & set(SQLModel.metadata.tables))
