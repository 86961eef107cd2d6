"""Every write to the database is a function of `evalcore/store/`: code elsewhere (the
rest of the package, the pages) calls those, and may hold one `store.db.transaction` open
around several, but never adds to an ORM session, commits, or builds an INSERT, UPDATE or
DELETE of its own."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "evalcore"
STORE = PACKAGE / "store"
OWN_DATABASES = {
    "evalcore/scorers/e5_store.py": "the e5 embedding cache, a SQLite file of its own",
}
"""Modules writing a database that is not evalcore's (path: why)."""

SESSION_WRITES = {"add", "add_all", "merge", "flush", "refresh", "delete"}
SQL_WRITE = re.compile(r"^\s*(INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\S+\s+SET|DELETE\s+FROM)\s")
"""SQL as this code base writes it (upper case), so prose ("delete from the list") is not."""
WRITE_BUILDERS = {"insert", "update", "delete"}
SQL_MODULES = ("sqlalchemy", "sqlmodel")


def _writes(source: str) -> list[str]:
    """What in `source` writes to the database by itself, each as "line: what"."""
    tree = ast.parse(source)
    builders = {alias.asname or alias.name for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(SQL_MODULES)
                for alias in node.names if alias.name in WRITE_BUILDERS}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "evalcore.store.db":
            found += [f"{node.lineno}: imports {a.name}" for a in node.names
                      if a.name == "session_scope"]
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and SQL_WRITE.match(node.value):
            found.append(f"{node.lineno}: SQL {node.value.split()[0].upper()}")
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in builders:
            found.append(f"{node.lineno}: {func.id}(...)")
        if isinstance(func, ast.Name) and func.id == "Session":
            found.append(f"{node.lineno}: Session(...)")
        if not isinstance(func, ast.Attribute):
            continue
        owner = ast.unparse(func.value)
        if func.attr == "commit":
            found.append(f"{node.lineno}: {owner}.commit()")
        elif func.attr in SESSION_WRITES and "session" in owner.lower():
            found.append(f"{node.lineno}: {owner}.{func.attr}(...)")
        elif func.attr in WRITE_BUILDERS and not node.args and not node.keywords:
            found.append(f"{node.lineno}: {owner}.{func.attr}()")  # a Table's insert()
    return found


def _sources() -> list[Path]:
    """The package's modules and the app's (its pages and entry point)."""
    return [*sorted(PACKAGE.rglob("*.py")), *sorted((ROOT / "pages").rglob("*.py")),
            ROOT / "streamlit_app.py"]


def test_no_module_outside_the_store_writes_to_the_database():
    offenders = {}
    for path in _sources():
        name = path.relative_to(ROOT).as_posix()
        if STORE in path.parents or name in OWN_DATABASES:
            continue
        writes = _writes(path.read_text(encoding="utf-8"))
        if writes:
            offenders[name] = writes
    assert not offenders, (
        "write through a function of evalcore/store/ (named for what it stores) instead: "
        f"{offenders}")


def test_the_scan_sees_each_kind_of_write():
    source = '''
from sqlalchemy import insert as ins, update
from evalcore.store.db import session_scope
def f(session, conn, engine, T, rows):
    session.add(rows)
    engine.commit()
    conn.execute(ins(T), rows)
    conn.execute(update(T).values(a=1))
    conn.execute(T.delete())
    conn.exec_driver_sql("DELETE FROM run")
    Session(engine)
'''
    found = sorted(_writes(source), key=lambda line: int(line.split(":")[0]))
    assert [line.split(": ", 1)[1] for line in found] == [
        "imports session_scope", "session.add(...)", "engine.commit()", "ins(...)",
        "update(...)", "T.delete()", "SQL DELETE", "Session(...)"]
    prose = "    '''Delete from the list, update the set.'''\n"
    assert _writes("def g(d, xs):\n    d.update(a=1)\n    xs.insert(0, 2)\n"
                   "    q = 'select * from run'\n" + prose) == []
