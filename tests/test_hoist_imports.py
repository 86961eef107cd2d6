"""scripts/hoist_imports.py on a small made-up project: what it hoists, what it leaves
(circles, clashing names), that the code still parses and that a second run changes
nothing (the lead re-runs it on main after every merge)."""
from __future__ import annotations

import ast
import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.conftest import REPO_ROOT

spec = importlib.util.spec_from_file_location("hoist_imports",
                                              REPO_ROOT / "scripts" / "hoist_imports.py")
hoist = importlib.util.module_from_spec(spec)
sys.modules["hoist_imports"] = hoist  # dataclasses look their module up
spec.loader.exec_module(hoist)

FILES = {
    "evalcore/__init__.py": "",
    "evalcore/a.py": '''
        """A."""
        from __future__ import annotations

        import os


        def f():
            """Doc."""
            from evalcore.b import g

            return g()


        def h():
            import evalcore.c  # noqa: F401 - registers something
            from evalcore.b import g

            if os.sep:
                from evalcore.c import k
            return g(), k
        ''',
    "evalcore/b.py": '''
        def g():
            from evalcore.a import f  # closes a circle: a imports b at its top

            return f
        ''',
    "evalcore/c.py": '''
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from evalcore.b import g

        k = 1


        def uses() -> "g":
            from evalcore.b import g

            return g
        ''',
    "evalcore/d.py": '''
        g = "a global of its own"


        def clash():
            from evalcore.b import g

            return g
        ''',
}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def _deferred(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return sorted(ast.unparse(n) for f in ast.walk(tree)
                  if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                  for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom)))


def _top(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]


def test_hoists_what_is_safe_and_leaves_circles_and_clashes(tmp_path, capsys):
    _write(tmp_path, FILES)
    hoist.run(write=True, root=tmp_path)
    a, b, c, d = (tmp_path / "evalcore" / f"{m}.py" for m in "abcd")
    assert _deferred(a) == []
    assert "from evalcore.b import g" in _top(a) and "import evalcore.c" in _top(a)
    assert "from evalcore.c import k" in _top(a)
    assert _top(a).count("from evalcore.b import g") == 1  # two functions, one import
    assert "# noqa: F401 - registers something" in a.read_text()  # the comment travels
    assert _deferred(b) == ["from evalcore.a import f"]  # a circle: stays in the function
    assert _deferred(d) == ["from evalcore.b import g"]  # `g` means something else here
    assert _deferred(c) == [] and "from evalcore.b import g" in _top(c)
    assert "TYPE_CHECKING:" not in c.read_text()  # the type-only import became the real one
    out = capsys.readouterr().out
    assert "7 before, 2 after" in out


def test_a_second_run_changes_nothing(tmp_path, capsys):
    _write(tmp_path, FILES)
    hoist.run(write=True, root=tmp_path)
    first = {p: p.read_text() for p in tmp_path.rglob("*.py")}
    hoist.run(write=True, root=tmp_path)
    assert {p: p.read_text() for p in tmp_path.rglob("*.py")} == first
    assert "0 files changed" in capsys.readouterr().out.splitlines()[-2]


NAMES = st.sampled_from(["g", "k", "f", "x"])
MODULES = st.sampled_from(["evalcore.b", "evalcore.c", "evalcore.zz"])


@st.composite
def functions(draw) -> str:
    """A module of a few functions with in-function imports, globals and odd shapes."""
    parts = ["import os\n"]
    if draw(st.booleans()):
        parts.append(f"{draw(NAMES)} = 1\n")
    for i in range(draw(st.integers(1, 4))):
        body = []
        for _ in range(draw(st.integers(1, 3))):
            shape = draw(st.sampled_from(["plain", "alias", "if", "try", "only", "semi"]))
            module, name = draw(MODULES), draw(NAMES)
            stmt = f"from {module} import {name}"
            if shape == "alias":
                stmt += f" as {draw(NAMES)}"
            if shape == "if":
                body.append(f"    if os.sep:\n        {stmt}")
            elif shape == "try":
                body.append(f"    try:\n        {stmt}\n    except ImportError:\n        pass")
            elif shape == "semi":
                body.append(f"    {stmt}; y = 2")
            else:
                body.append(f"    {stmt}")
        if draw(st.booleans()):
            body.append("    return os.sep")
        parts.append(f"\n\ndef f{i}():\n" + "\n".join(body) + "\n")
    return "".join(parts)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=functions())
def test_any_module_still_parses_and_the_script_is_idempotent(tmp_path_factory, source):
    root = tmp_path_factory.mktemp("proj")
    _write(root, {"evalcore/__init__.py": "", "evalcore/b.py": "g = k = f = x = 1\n",
                  "evalcore/c.py": "g = k = f = x = 2\n", "evalcore/zz.py": "g = k = f = x = 3\n",
                  "evalcore/m.py": source})
    hoist.run(write=True, root=root)
    once = (root / "evalcore" / "m.py").read_text()
    ast.parse(once)
    hoist.run(write=True, root=root)
    assert (root / "evalcore" / "m.py").read_text() == once


@pytest.mark.parametrize("shape", ["    try:\n        from evalcore.b import g\n    except "
                                   "ImportError:\n        g = None\n"])
def test_an_import_inside_try_stays(tmp_path, shape):
    _write(tmp_path, {"evalcore/__init__.py": "", "evalcore/b.py": "g = 1\n",
                      "evalcore/m.py": "def f():\n" + shape + "    return g\n"})
    hoist.run(write=True, root=tmp_path)
    assert _deferred(tmp_path / "evalcore" / "m.py") == ["from evalcore.b import g"]
