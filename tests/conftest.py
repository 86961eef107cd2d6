"""Shared fixtures. Under CI=true a missing dependency is a failure, never a silent skip."""
from __future__ import annotations

import contextlib
import gc
import io
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATASETS = (REPO_ROOT / ".." / "shared" / "datasets").resolve()
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist each worker gets its own default EVALCORE_HOME, so no two workers
    share a SQLite file or a cache (tests that need a home still make their own).

    The cyclic collector runs less often in a test process: with Python's thresholds
    (700, 10, 10) a worker's heap of ~1 million objects (jieba, WordNet, Streamlit,
    hypothesis) was traversed 16 times in 770 tests, 7-8% of its CPU; with these,
    and the objects made before the first test frozen (`pytest_collection_finish`), it
    is ~4% (docs/test-timing-log.md, session 7). Garbage is still collected, in fewer passes."""
    gc.set_threshold(50_000, 50, 100)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        import tempfile

        home = Path(tempfile.mkdtemp(prefix=f"evalcore-{worker}-"))
        os.environ["EVALCORE_HOME"] = str(home / "home")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop the PostgreSQL cluster the `pg_url` fixtures shared in this process, if any."""
    from tests.fakes.postgres import stop_shared_cluster

    stop_shared_cluster()


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """What the collection imported lives as long as the process: out of the collector's
    passes (`gc.freeze`), so each pass traverses only what the tests made since."""
    gc.collect()
    gc.freeze()


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config,
                                  items: list[pytest.Item]) -> Iterator[None]:
    """Tests marked `serial` (kills, takeovers, leases measured in seconds) share one xdist
    group: with `--dist loadgroup` they run one after another on one worker, beside the
    rest of the suite on the others, never beside each other.

    A module with a module-scoped fixture (an app server, chromium, a loaded model) is one
    group too, so one worker starts it once instead of each worker starting its own. The
    groups run first, the serial one before all: long units handed out last would leave
    one worker finishing them alone (`make test` passes --no-loadscope-reorder, else xdist
    sorts the units by their number of tests). Then the single tests that start a server,
    a model, a database or a browser (most of the suite's long single tests), then the rest:
    the many short ones fill the end, so the workers finish close together.

    A wrapper: the marks are set before xdist's worker reads them in its own hook of this
    name, and the nodeids checked after it (see `_group_in_nodeid`)."""
    grouped = {_module_of(item) for item in items
               if not item.get_closest_marker("serial") and _has_module_fixture(item)}
    order: dict[pytest.Item, int] = {}
    for item in items:
        if item.get_closest_marker("serial"):
            item.add_marker(pytest.mark.xdist_group("serial"))
            order[item] = 0
        elif _module_of(item) in grouped:
            item.add_marker(pytest.mark.xdist_group(_module_of(item)))
            order[item] = 1
        elif any(item.get_closest_marker(m) for m in _STARTS_SOMETHING):
            order[item] = 2
        else:
            order[item] = 3
    items.sort(key=order.__getitem__)  # stable: a module's tests stay together, in order
    yield
    if getattr(config.option, "loadgroup", False):  # an xdist worker under --dist loadgroup
        for item in items:
            _group_in_nodeid(item)


def _group_in_nodeid(item: pytest.Item) -> None:
    """xdist's scheduler groups tests by a `@group` suffix its worker appends to each
    nodeid. xdist 3.8 writes it to `item._nodeid`, which pytest 9 no longer reads (nodeids
    are `item._id`, pytest-dev/pytest-xdist#1386): every group was silently split across
    the workers, serial tests ran side by side and module servers started twice. Append it
    where this pytest keeps the nodeid, unless xdist already did."""
    mark = item.get_closest_marker("xdist_group")
    if mark is None or item.nodeid.endswith(f"@{mark.args[0]}"):
        return
    nodeid = f"{item.nodeid}@{mark.args[0]}"
    if hasattr(item, "_id"):
        from _pytest.nodeid import NodeId

        item._id = NodeId.parse(nodeid)
    else:
        item._nodeid = nodeid


_STARTS_SOMETHING = ("integration", "browser", "postgres")


def _module_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def _has_module_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    return info is not None and any(
        defs and defs[-1].scope in ("module", "class") for defs in info.name2fixturedefs.values())


def require(condition: bool, why: str) -> None:
    """Skip locally when `condition` is false; fail under CI=true."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"missing test dependency under CI: {why}")
    pytest.skip(why)


def cli_here(settings, *args: str) -> subprocess.CompletedProcess:
    """The CLI in this process (`cli.main`, what `python -m evalcore` calls) on the test's
    home (the `settings` fixture's), stdout and stderr captured, argparse's SystemExit read
    as the exit code: a new Python per call costs ~1 s of CPU, so only a test whose claim
    is about the process starts one."""
    from evalcore import cli

    assert os.environ["EVALCORE_HOME"] == str(settings.home)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(list(args))
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code if isinstance(exc.code, int) else 2
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


@pytest.fixture(autouse=True)
def _no_app_warm_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """No warm-up thread (evalcore.warmup) importing beside an AppTest of the app; the
    browser tests' servers start with it, and tests/test_warmup.py checks it."""
    monkeypatch.setenv("EVALCORE_WARMUP", "0")


@pytest.fixture(autouse=True)
def _schema_from_template(request: pytest.FixtureRequest,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A new SQLite test database gets the migrated schema replayed from a template made
    once per process by the real migrations (tests/fakes/schema_template.py), not the
    Alembic chain again; tests marked `real_migrations` run Alembic as the app does (mark
    a test that breaks or counts Alembic's steps on a new SQLite database)."""
    from evalcore.store import db

    if request.node.get_closest_marker("real_migrations") or not hasattr(db, "migrate"):
        return
    from tests.fakes.schema_template import migrate_from_template

    monkeypatch.setattr(db, "migrate", migrate_from_template(db.migrate))


class _SqliteCompiledCache:
    """One compiled-statement cache for the SQLite engines of the tests, the dialect
    in each key replaced by its name and driver (every test engine is configured alike:
    `evalcore.store.db._sqlite_engine`): the SQL and parameters a statement compiles to
    do not depend on which test's database file it runs against."""

    def __init__(self, capacity: int = 2000) -> None:
        from sqlalchemy.util import LRUCache

        self._cache = LRUCache(capacity)

    @staticmethod
    def _key(key: tuple) -> tuple:
        dialect = key[0]
        return ((dialect.name, dialect.driver, dialect.server_version_info), *key[1:])

    def get(self, key: tuple, default: object = None) -> object:
        return self._cache.get(self._key(key), default)

    def __setitem__(self, key: tuple, value: object) -> None:
        self._cache[self._key(key)] = value


_SHARED_SQL = _SqliteCompiledCache()


@pytest.fixture(autouse=True)
def _one_compiled_cache_for_sqlite(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test has its own database, so its own engine, and SQLAlchemy caches compiled
    statements per engine: every test compiled each query it runs anew (~15% of
    tests/pages' CPU, docs/test-timing-log.md session 7). Share the compiled SQL between the SQLite
    engines the tests open in this process; each test still runs it against its own file,
    through its own pool. PostgreSQL engines and other processes keep their own."""
    from evalcore.store import db

    real = db._sqlite_engine

    def sqlite_engine(url: str):  # type: ignore[no-untyped-def]
        engine = real(url)
        engine._compiled_cache = _SHARED_SQL
        return engine

    monkeypatch.setattr(db, "_sqlite_engine", sqlite_engine)


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    """The real data folder `../shared/datasets` next to the repository."""
    require(SHARED_DATASETS.is_dir(), f"{SHARED_DATASETS} not found")
    return SHARED_DATASETS


@pytest.fixture()
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Settings pointing at a fresh home (SQLite DB + models.toml) under tmp_path."""
    from evalcore.config import settings_from_env

    env = {"EVALCORE_HOME": str(tmp_path / "home")}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("EVALCORE_DB_URL", raising=False)
    monkeypatch.delenv("EVALCORE_MODELS", raising=False)
    from evalcore.config import load_settings

    load_settings.cache_clear()
    return settings_from_env(env)


@pytest.fixture()
def engine(settings):
    """A fresh SQLite engine (schema created) for one test."""
    from evalcore.store.db import make_engine

    settings.home.mkdir(parents=True, exist_ok=True)
    eng = make_engine(settings.db_url)
    yield eng
    eng.dispose()
