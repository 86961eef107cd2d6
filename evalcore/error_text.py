"""One line for every expected failure: what went wrong and what to do, never a
traceback, a password or a key. The CLI prints it (`error: ...`), pages show it."""
from __future__ import annotations

from collections.abc import Iterable

from evalcore.errors import EvalcoreError
from evalcore.masking import mask_text
from evalcore.values import ValidationError, problem

SHOWN_ITEMS = 10
"""How many names (columns, values) a message lists before 'and N more'."""
SHOWN_CHARS = 60
"""How much of one user-supplied text (a column name, a cell) a message quotes."""
MAX_LINE = 2000
"""Longest error line `describe_error` returns: a message that quotes user content some
other way than `shown`/`shown_list` keeps its start and its hint (the end), not 1 MB."""


def shown(value: object, width: int = SHOWN_CHARS, *, bare: bool = False) -> str:
    """`value` quoted (repr; as it is when `bare`) for a message, cut to about `width`
    characters with the full length named, so a 1 MB cell or column name never makes a
    1 MB "one-line" error."""
    text = str(value)
    show = str if bare else repr
    if len(text) <= width:
        return show(text)
    return f"{show(text[:width])}... ({len(text):,} characters)"


def shown_list(values: Iterable[object], limit: int = SHOWN_ITEMS,
               width: int = SHOWN_CHARS, *, bare: bool = False) -> str:
    """The first `limit` values, each `shown`, in brackets, then 'and 9,990 more': the one
    way every message lists user content (column names, values), whatever its size.
    `bare`: the values as they are, comma-separated, no brackets (for a page's prose)."""
    items = list(values)
    parts = [shown(v, width, bare=bare) for v in items[:limit]]
    more = len(items) - limit
    tail = f" and {more:,} more" if more > 0 else ""
    joined = ", ".join(parts)
    return (joined if bare else "[" + joined + "]") + tail


def _db_target() -> str:
    """host:port (or the file) of the configured database, never its password."""
    try:
        from sqlalchemy.engine import make_url

        from evalcore.config import load_settings

        url = make_url(load_settings().db_url)
    except Exception:  # noqa: BLE001 - only a hint; settings may be what failed
        return "the database"
    if url.get_backend_name() == "sqlite":
        return f"the database file {url.database or ':memory:'}"
    return f"the database at {url.host or 'localhost'}:{url.port or 5432}"


def _database_text(exc: Exception) -> str:
    orig = getattr(exc, "orig", None) or exc
    first = (str(orig).strip().splitlines() or [type(orig).__name__])[0]
    low = first.lower()
    target = _db_target()
    if "readonly" in low or "read-only" in low:
        return (f"{target} is read-only ({first}) (make it writable, or set EVALCORE_DB_URL "
                "to another database)")
    if "unable to open database" in low:
        return (f"cannot open {target} ({first}) (set EVALCORE_HOME to a writable folder, or "
                "EVALCORE_DB_URL to another database)")
    if "connection" in low or "could not" in low or "timeout" in low or "refused" in low:
        return (f"cannot reach {target}: {first} (is the server running? check "
                "EVALCORE_DB_URL)")
    if "locked" in low:
        return f"{target} is busy: {first} (another process holds it; try again)"
    return f"database error on {target}: {first} (check EVALCORE_DB_URL)"


def describe_error(exc: BaseException) -> str | None:
    """One line `what went wrong (hint)` for a failure a user can fix, None for a bug.

    The CLI prints it as `error: ...` with exit code 2; pages show it with `st.error`.
    Masked (`evalcore.masking`), so no key or password reaches the screen.
    """
    text: str | None = None
    module = type(exc).__module__ or ""
    if isinstance(exc, EvalcoreError):
        text = str(exc)
    elif isinstance(exc, BrokenPipeError):
        text = "the output was closed before everything was written (broken pipe)"
    elif isinstance(exc, ValidationError):
        text = f"invalid setting: {problem(exc)} (see --help for allowed values)"
    elif module.startswith(("sqlalchemy", "sqlite3", "psycopg")) and isinstance(exc, Exception):
        text = _database_text(exc)
    elif isinstance(exc, OSError):
        where = f" {exc.filename}" if exc.filename else ""
        text = (f"cannot use{where}: {exc.strerror or exc} (check the path and its "
                "permissions; EVALCORE_HOME must be a writable folder)")
    elif isinstance(exc, UnicodeDecodeError):
        text = f"a file is not valid text: {exc} (save it as UTF-8)"
    if text is None:
        return None
    return _capped(mask_text(" ".join(text.split())))


def _capped(line: str) -> str:
    if len(line) <= MAX_LINE:
        return line
    half = MAX_LINE // 2 - 30
    return f"{line[:half]} ...({len(line) - 2 * half:,} characters)... {line[-half:]}"
