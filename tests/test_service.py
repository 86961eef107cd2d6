"""The one door: a run starts one way (the checked action), and the package face is the
service pages and the CLI use."""
from __future__ import annotations

import ast

import pytest

import evalcore
from evalcore.auth.roles import PermissionDenied
from evalcore.auth.identity import Actor
from evalcore.service import runs
from tests.conftest import REPO_ROOT

STARTER = "evalcore/actions/runs.py"
"""The one module that may define a function starting a run (`create_run`)."""


def _starters() -> list[str]:
    """`def create_run`, `def start_run` and `def create_<kind>_run` outside the action
    (the store's row insert, `store.queries.create_run`, is no way to start a run: it
    stores no items and no job)."""
    found = []
    for path in sorted((REPO_ROOT / "evalcore").rglob("*.py")):
        rel = path.relative_to(REPO_ROOT).as_posix()
        if rel == STARTER or rel.startswith("evalcore/store/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and (
                    node.name in ("create_run", "start_run")
                    or (node.name.startswith("create_") and node.name.endswith("_run"))):
                found.append(f"{rel}:{node.lineno} {node.name}")
    return found


def test_a_run_starts_one_way():
    assert _starters() == [], "a second way to start a run: call service.runs.create_run"
    assert evalcore.create_run is runs.create_run
    assert "start_run" not in evalcore.__all__


def test_the_package_face_checks_who_starts_a_run(engine, settings):
    viewer = Actor(email="v@example.org", name="v", role="viewer", team=True)
    with pytest.raises(PermissionDenied):
        evalcore.create_run(viewer, engine, "stability", {"dataset": "none", "model": "fake"},
                            settings.models_path)


def test_the_package_face_changes_nothing_unchecked():
    """What the face offers from the store or the runner is a spec or its builder; every
    change (a run, an import, an attack set) is the service's checked action."""
    from evalcore import _EXPORTS

    engine_side = {n for n, m in _EXPORTS.items()
                   if m.startswith(("evalcore.store", "evalcore.runner", "evalcore.perturb"))}
    assert engine_side == {"RunSpec", "run_spec", "robustness_spec"}
    for name in ("create_run", "cancel_run", "import_dataset", "queue_attack",
                 "queue_attack_import"):
        assert _EXPORTS[name].startswith("evalcore.service."), name
        assert getattr(evalcore, name) is not None
