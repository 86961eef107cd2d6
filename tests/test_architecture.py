"""Rules of the codebase that a test can hold: evalcore never imports streamlit, the CLI
starts without heavy libraries, and the code has no undefined or unused names."""
from __future__ import annotations

import ast
import functools
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, require

EVALCORE = REPO_ROOT / "evalcore"
HEAVY = ("streamlit", "pandas", "numpy", "sqlalchemy", "aiohttp", "jieba", "plotly", "scipy",
         "pydantic")


@functools.cache
def _tree(path) -> ast.Module:
    """The parsed module, once for this file's tests: five rules below walk every module's
    tree (nothing here changes a tree), and parsing them all again for each cost ~1 s of
    CPU."""
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


@pytest.fixture(scope="module", autouse=True)
def _parsed_once() -> Iterator[None]:
    """The trees (~70 MB) are let go when this file's tests are done. A module fixture also
    keeps the file's tests on one xdist worker (tests/conftest.py), so they share them."""
    yield
    _tree.cache_clear()
    _graph.cache_clear()


def _imported_modules(path) -> set[str]:
    tree = _tree(path)
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_evalcore_never_imports_streamlit():
    offenders = [str(p.relative_to(REPO_ROOT)) for p in EVALCORE.rglob("*.py")
                 if "streamlit" in _imported_modules(p)]
    assert offenders == [], f"evalcore must not import streamlit: {offenders}"


def test_cli_help_imports_no_heavy_library():
    code = ("import sys, json; from evalcore.cli import help_parser; help_parser(); "
            f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, check=True,
                         capture_output=True, text=True).stdout
    assert json.loads(out) == []


def test_no_undefined_or_unused_names():
    ruff = shutil.which("ruff", path=str(REPO_ROOT / ".venv" / "bin")) or shutil.which("ruff")
    require(ruff is not None, "ruff missing: pip install -r requirements-dev.txt")
    proc = subprocess.run([ruff, "check", "--select", "F,E9", "--ignore", "F811",
                           "--output-format", "concise", "evalcore", "pages", "tests", "bench",
                           "scripts", "streamlit_app.py"],
                          cwd=REPO_ROOT, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        pytest.fail(f"ruff could not run: {proc.stderr}")
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_a_run_loads_only_the_dataset_records():
    """The dataset package loads its parts on first use; a run needs only `records` (and
    `language`, stdlib only, the one language rule the scorers share with the importer)."""
    code = ("import sys, json; import evalcore.runner.run; "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('evalcore.dataset') "
            "or m == 'pandas')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, check=True,
                         capture_output=True, text=True).stdout
    assert json.loads(out) == ["evalcore.dataset", "evalcore.dataset.language",
                               "evalcore.dataset.records"]


def test_every_lazy_dataset_name_resolves():
    import evalcore.dataset as dataset

    for name in dataset.__all__:
        assert getattr(dataset, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        dataset.nope  # noqa: B018


# The pipeline's layers, lowest first: a module may import its own layer and the ones
# below, never one above (pages sit on top of everything and are not in evalcore).
# The kinds' registry (`evalcore.kinds`) is at the bottom, so every generic module can look
# a kind up; each kind's own module (`evalcore.kinds.<kind>`, "kinds.*") is at the top.
LAYERS: list[tuple[str, ...]] = [
    ("errors", "values", "db_url", "masking", "markup", "resources", "outbound", "dataset.records",
     "dataset.language", "lazy", "heap", "kinds", "kinds._metric"),
    ("config", "providers", "prompt", "scorers", "metrics", "store", "model_store"),
    ("dataset", "auth", "error_text"),
    ("perturb",),
    ("runner",),
    ("report", "perturb.export"),
    ("fairness", "kinds.*", "demo", "actions", "service", "cli", "__main__", "__init__", "warmup", "monitor"),
]


def _layer(module: str) -> int:
    """The layer of `evalcore.<module>` (its longest listed prefix decides; "x.*" is every
    module under x, not x itself)."""
    best, level = -1, None
    for n, names in enumerate(LAYERS):
        for name in names:
            if name.endswith(".*"):
                matches = module.startswith(name[:-1])
            else:
                matches = module == name or module.startswith(name + ".")
            if matches and len(name) > best:
                best, level = len(name), n
    assert level is not None, f"evalcore.{module} is in no layer of LAYERS"
    return level


def _evalcore_imports(path) -> set[str]:
    tree = _tree(path)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("evalcore."):
                found.add(node.module.removeprefix("evalcore."))
        elif isinstance(node, ast.Import):
            found.update(a.name.removeprefix("evalcore.") for a in node.names
                         if a.name.startswith("evalcore."))
    return found


def test_stages_never_import_upward():
    """Dataset -> Prompt -> Provider -> Scorer -> Store -> View: the import graph runs one
    way, so a stage can be read, tested and replaced without the ones after it."""
    offenders = []
    for path in EVALCORE.rglob("*.py"):
        if "migrations" in path.parts:
            continue
        rel = path.relative_to(EVALCORE).with_suffix("")
        module = ".".join(rel.parts).removesuffix(".__init__") or "__init__"
        for target in _evalcore_imports(path):
            if _layer(target) > _layer(module):
                offenders.append(f"evalcore.{module} -> evalcore.{target}")
    assert offenders == [], "imports against the layers:\n" + "\n".join(sorted(offenders))


STARTERS = ("evalcore/demo.py", "pages/home.py")
"""The demo and Home may name the kind they start."""
KIND_LITERAL_EXCEPTIONS = {
    "evalcore/runner/plan.py": "a stored spec from before runs had kinds decodes as the "
                               "kind every run then was",
    "evalcore/report/templates/trust.html": "the trust report's section anchors (#robustness, "
                                            "#fairness), links users keep",
}


def _own_file(path: Path, kind: str) -> bool:
    """A kind's own files are named after it: its kind module, report modules, page, CLI
    module and their helpers (`stability_summary.py`, `_fairness_gate.py`)."""
    return kind in path.stem.split("_")


def test_kind_names_stay_in_their_own_files():
    """A kind is one module (`evalcore.kinds`): generic code looks it up instead of naming
    it. A kind's name as a string literal appears only in its own files (`_own_file`),
    the demo and Home, and the few places KIND_LITERAL_EXCEPTIONS names with why."""
    import re

    from evalcore.kinds import kind_names

    names = list(kind_names())
    pattern = re.compile(r"""["'](%s)["']""" % "|".join(map(re.escape, names)))
    files = [p for p in [*EVALCORE.rglob("*"), *(REPO_ROOT / "pages").rglob("*.py"),
                         REPO_ROOT / "streamlit_app.py"]
             if p.is_file() and p.suffix in (".py", ".html", ".toml", ".md", ".txt")]
    found = []
    for path in files:
        rel = path.relative_to(REPO_ROOT).as_posix()
        if rel in STARTERS or rel in KIND_LITERAL_EXCEPTIONS:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"{rel}:{number}: {m.group(0)}" for m in pattern.finditer(line)
                      if not _own_file(path, m.group(1))]
    assert found == [], ("kind names outside their kind's files; look the kind up in "
                         "evalcore.kinds instead:\n" + "\n".join(found))


# SQL stays in evalcore/store/: other layers call its named queries. Outside store/ a
# module may name the database's types (Engine, Connection) and errors (sqlalchemy.exc,
# make_url to read a URL), but it builds no statement and executes none:
# - no import of a statement builder from sqlalchemy or sqlmodel (QUERY_BUILDERS), and
# - no call of a method that runs SQL (`.execute(`, `.exec(`, `.scalars(`, `.scalar(`).
QUERY_BUILDERS = frozenset({
    "select", "insert", "update", "delete", "text", "func", "and_", "or_", "not_", "case",
    "exists", "literal", "literal_column", "column", "table", "union", "union_all", "join",
    "outerjoin", "bindparam", "cast", "distinct", "tuple_", "values"})
RUNS_SQL = frozenset({"execute", "exec", "scalars", "scalar", "executemany", "executescript"})
SQL_EXCEPTIONS = {
    # the e5 embedding cache: its own sqlite3 file of vectors beside the model, not the
    # evalcore database (no table of store/tables.py, no engine)
    "evalcore/scorers/e5_store.py": "sqlite3 embedding cache",
}


def _sql_outside_store(path) -> list[str]:
    tree = _tree(path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.split(".")[0] in ("sqlalchemy", "sqlmodel"):
            found += [f"l.{node.lineno} imports {node.module}.{a.name}" for a in node.names
                      if a.name in QUERY_BUILDERS]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in RUNS_SQL:
            found.append(f"l.{node.lineno} calls .{node.func.attr}(")
    return found


def _checked_modules(*folders: str):
    for folder in folders:
        for path in sorted((REPO_ROOT / folder).rglob("*.py")):
            rel = path.relative_to(REPO_ROOT).as_posix()
            if not rel.startswith("evalcore/store/"):
                yield rel, path


def test_sql_stays_in_store():
    """Statements are built and run in evalcore/store/ only (named queries per use case),
    so the database schema has one home and every other layer can be read without SQL."""
    offenders = [f"{rel} {hit}" for rel, path in _checked_modules("evalcore", "pages")
                 if rel not in SQL_EXCEPTIONS for hit in _sql_outside_store(path)]
    assert offenders == [], "SQL outside evalcore/store/:\n" + "\n".join(offenders)


def test_the_sql_rule_catches_a_query(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from sqlalchemy import select\n\ndef f(conn, T):\n"
                   "    return conn.execute(select(T)).all()\n", encoding="utf-8")
    assert _sql_outside_store(bad) == ["l.1 imports sqlalchemy.select", "l.4 calls .execute("]
    for rel in SQL_EXCEPTIONS:  # an exception that no longer exists is removed from the list
        assert (REPO_ROOT / rel).exists(), rel


MAX_LINES = 500
"""A module longer than this mixes jobs: split it by what its parts are."""
LONG_MODULE_EXCEPTIONS: dict[str, str] = {}


def _lines(path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_over_500_lines():
    """Every module of evalcore/ and pages/ stays small enough to read in one sitting."""
    long = [f"{rel}: {_lines(path)} lines" for folder in ("evalcore", "pages")
            for path in sorted((REPO_ROOT / folder).rglob("*.py"))
            if (rel := path.relative_to(REPO_ROOT).as_posix()) not in LONG_MODULE_EXCEPTIONS
            and _lines(path) > MAX_LINES]
    assert long == [], f"modules over {MAX_LINES} lines:\n" + "\n".join(long)
    for rel in LONG_MODULE_EXCEPTIONS:  # an exception that no longer applies is removed
        assert _lines(REPO_ROOT / rel) > MAX_LINES, f"{rel} is short now: drop its exception"


# -- the graph on paper is the graph that runs ------------------------------------------
PAGES = REPO_ROOT / "pages"
DEFERRING_MODULES = {
    "evalcore.warmup": "imports on its background thread what the pages will import, so a "
                       "page's first paint does not wait for it",
    "evalcore.scorers.text": "loads an e5 engine (numpy; onnxruntime when installed, else "
                             "the numpy one) only in a process that embeds: every run's "
                             "scorer registry imports it, and a worker is ready within 1 s",
    # Every command imports `evalcore.actions` (and `cli.common`, which imports the
    # estimate) and a worker imports every job handler: what one action, job or estimate
    # needs (the ORM for imports, the perturbation engine, the judge passes, aiohttp) loads
    # when it is called. At the top they doubled every command's start (0.5 -> 1.0 s of
    # CPU for `datasets --help`; bench/startup_bench.py for the worker).
    "evalcore.actions.attacks": "the perturbation engine, for attack actions only",
    "evalcore.actions.datasets": "dataset import (the ORM, pydantic), for import actions only",
    "evalcore.actions.runs": "the judge passes, variants and the demo, for their actions only",
    "evalcore.runner.job_types": "each job kind's module, when a job of that kind runs",
    "evalcore.report.estimate": "a robustness estimate's attack sets (the ORM, perturb)",
    "evalcore.providers.client": "the outbound policy (aiohttp), when a request is sent",
    "evalcore.dataset.catalog": "the column mapping (pydantic), for a guessed mapping only",
}
"""Modules besides those `python -m evalcore --help` loads that may import evalcore modules
inside a function, and why. A deferred import hides an edge of the import graph (the graph
on paper is then not the graph that runs, and circles close unseen): everywhere else
imports sit at the top of the module."""


def _help_modules() -> set[str]:
    """The evalcore modules `python -m evalcore --help` loads (they keep what it does not
    need inside their functions, so it stays fast)."""
    code = ("import json, sys\nfrom evalcore.cli import main\ntry:\n    main(['--help'])\n"
            "except SystemExit:\n    pass\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'evalcore')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, check=True,
                         capture_output=True, text=True).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


def _source_modules() -> dict[str, "object"]:
    files = [p for p in EVALCORE.rglob("*.py") if "migrations" not in p.parts]
    files += sorted(PAGES.glob("*.py"))
    return {".".join(p.relative_to(REPO_ROOT).with_suffix("").parts).removesuffix(".__init__"):
            p for p in files}


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and getattr(test, "id", getattr(test, "attr", None)) == \
        "TYPE_CHECKING"


def _imports(tree: ast.AST, in_function: bool = False):
    """(import node, whether it sits in a function body), `if TYPE_CHECKING:` left out."""
    for child in ast.iter_child_nodes(tree):
        if _type_checking(child):
            continue
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, in_function
        else:
            yield from _imports(child, in_function or isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))


def _targets(node: ast.AST, modules: dict) -> set[str]:
    """The project modules an import runs: `from p import m` is p.m when that is a module
    (`pages` is a namespace package: no module of its own); a name a package resolves
    lazily (`_EXPORTS`, PEP 562) is the module it comes from."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in modules}
    if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
        return set()
    found = set()
    for alias in node.names:
        sub = f"{node.module}.{alias.name}"
        if sub in modules:
            found.add(sub)
        elif node.module in modules:
            lazy = getattr(sys.modules.get(node.module), "_EXPORTS", {})
            found.add(lazy.get(alias.name, node.module))
    return found


@functools.cache
def _graph() -> tuple[dict[str, set[str]], dict[str, int]]:
    """Module -> the project modules it imports, deferred imports included; and per
    module the count of in-function imports of evalcore modules (built once: two tests
    read it, neither changes it)."""
    import importlib

    for package in ("evalcore", "evalcore.dataset"):
        importlib.import_module(package)
    modules = _source_modules()
    graph, deferred = {}, {}
    for name, path in modules.items():
        tree = _tree(path)
        graph[name], deferred[name] = set(), 0
        for node, in_function in _imports(tree):
            graph[name] |= _targets(node, modules) - {name}
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""])
            if in_function and any(n == "evalcore" or n.startswith("evalcore.") for n in names):
                deferred[name] += 1
    return graph, deferred


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_only_the_help_path_imports_evalcore_modules_in_function_bodies():
    _, deferred = _graph()
    allowed = _help_modules() | set(DEFERRING_MODULES)
    hidden = sorted(f"{m} {n}" for m, n in deferred.items() if n and m not in allowed)
    assert hidden == [], ("in-function imports of evalcore modules outside --help's path: "
                          "import at the module's top\n  " + "\n  ".join(hidden))
    assert "evalcore.cli" in allowed and "evalcore.kinds.stability" in allowed
    for name in DEFERRING_MODULES:  # an exception that no longer defers is removed
        assert deferred.get(name), f"{name} defers nothing now: drop it from the list"


def test_no_import_circle_counting_deferred_imports():
    graph, _ = _graph()
    circles = _circles(graph)
    shown = ["  " + " <-> ".join(c) + "\n" + "\n".join(
        f"    {a} -> {', '.join(sorted(graph[a] & set(c)))}" for a in c) for c in circles]
    assert circles == [], "import circles (deferred imports included):\n" + "\n".join(shown)


def test_the_circle_finder_sees_a_circle_closed_by_a_deferred_import(tmp_path):
    tree = ast.parse("import os\n\ndef f():\n    from evalcore.b import x\n")
    found = {n.module for n, in_function in _imports(tree) if in_function
             and isinstance(n, ast.ImportFrom)}
    assert found == {"evalcore.b"}
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []
    page = ast.parse("from pages import _shared\n").body[0]
    assert _targets(page, {"pages._shared": None}) == {"pages._shared"}


# A provider is one module (`evalcore/providers/<name>.py`, `providers.catalog`): generic
# code asks the provider instead of naming it. "local" is also the default model's NAME
# and a worker's heartbeat key; those files say so here.
PROVIDER_NAME_ELSEWHERE = {
    "evalcore/config.py": "DEFAULT_MODEL, the embedded model's name",
    "evalcore/auth/identity.py": "the signed-out user on one machine",
    "evalcore/runner/worker.py": "the heartbeat's key for the embedded model's state",
    "pages/_local_model.py": "reads that heartbeat key",
    "evalcore/monitor/runs.py": "a schedule's creator when it was made signed out",
}


def _provider_literals(path, names: set[str]) -> list[str]:
    """Line numbers of string constants that are exactly a provider's name."""
    return [f"l.{node.lineno} {node.value!r}" for node in ast.walk(_tree(path))
            if isinstance(node, ast.Constant) and node.value in names]


def test_provider_names_stay_in_their_own_modules():
    from evalcore.providers.catalog import provider_names

    names = set(provider_names())
    found = []
    for path in [*EVALCORE.rglob("*.py"), *PAGES.rglob("*.py"), REPO_ROOT / "streamlit_app.py"]:
        rel = path.relative_to(REPO_ROOT).as_posix()
        own = rel == f"evalcore/providers/{path.stem}.py" and path.stem in names
        if own or rel in STARTERS or rel in PROVIDER_NAME_ELSEWHERE:
            continue
        found += [f"{rel} {hit}" for hit in _provider_literals(path, names)]
    assert found == [], ("provider names outside their provider modules; ask "
                         "providers.catalog instead:\n" + "\n".join(found))
    for rel in PROVIDER_NAME_ELSEWHERE:  # an exception that no longer applies is removed
        assert _provider_literals(REPO_ROOT / rel, names), f"{rel}: drop its exception"


def test_the_provider_rule_catches_a_branch(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('def f(config):\n    return config.kind == "ollama"\n', encoding="utf-8")
    assert _provider_literals(bad, {"ollama"}) == ["l.2 'ollama'"]


# -- one door: pages and the CLI reach the engine through evalcore.service ---------------
BEHIND_THE_DOOR = ("evalcore.store", "evalcore.runner", "evalcore.actions",
                   "evalcore.monitor.actions")
"""What pages and the CLI never import: they act (the checked actions) and read through
`evalcore.service` (records and value types come from their own modules: `errors`,
`values`, `kinds`...)."""


def _behind_the_door(path) -> list[str]:
    """Imports of `evalcore.store` / `evalcore.runner` modules or names in one file, at its
    top or inside a function, as `l.<line> <module>`."""
    found = []
    for node, _in_function in _imports(_tree(path)):
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif node.level:  # `from ..store import x` inside evalcore/cli
            base = ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts[:-node.level])
            modules = [f"{base}.{node.module}" if node.module else base]
        else:  # the module, else each name as its submodule (`from evalcore import runner`)
            modules = [node.module or ""]
            if not _behind(modules[0]):
                modules = [f"{node.module}.{a.name}" for a in node.names]
        found += [f"l.{node.lineno} {m}" for m in modules if _behind(m)]
    return found


def _behind(module: str) -> bool:
    return any(module == b or module.startswith(b + ".") for b in BEHIND_THE_DOOR)


def test_pages_and_cli_go_through_the_service():
    files = [*PAGES.glob("*.py"), *(EVALCORE / "cli").rglob("*.py"), REPO_ROOT / "streamlit_app.py"]
    found = [f"{p.relative_to(REPO_ROOT).as_posix()} {hit}" for p in sorted(files)
             for hit in _behind_the_door(p)]
    assert found == [], ("pages and the CLI import the store, the runner or the actions; add "
                         "what they need to evalcore.service instead:\n" + "\n".join(found))


def test_the_door_rule_catches_every_way_in(tmp_path):
    page = tmp_path / "page.py"
    page.write_text("import evalcore.store.db\nfrom evalcore import runner, actions\n"
                    "from evalcore.service.runs import get_run\n"
                    "from evalcore.monitor import actions as schedules\n"
                    "def f():\n    from evalcore.store.queries import get_run\n",
                    encoding="utf-8")
    assert _behind_the_door(page) == ["l.1 evalcore.store.db", "l.2 evalcore.runner",
                                      "l.2 evalcore.actions", "l.4 evalcore.monitor.actions",
                                      "l.6 evalcore.store.queries"]
