"""bench/pytest_cpu.py sums the per-worker profiles of one xdist run by test file."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT


def _load():  # the bench script is not a package module
    spec = importlib.util.spec_from_file_location("pytest_cpu",
                                                  REPO_ROOT / "bench" / "pytest_cpu.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_by_file_sums_every_worker_and_phase(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    rows = {  # nodeid, phase, wall, own CPU, children's CPU
        "gw0": [["tests/a.py::t1@serial", "setup", 1.0, 0.5, 0.0],
                ["tests/a.py::t1@serial", "call", 10.0, 1.0, 2.0],
                ["tests/b.py::t", "call", 1.0, 0.75, 0.0]],
        "gw1": [["tests/a.py::t2[x]", "call", 4.0, 0.5, 0.0]],
    }
    files = []
    for worker, worker_rows in rows.items():
        path = tmp_path / f"cpu.{worker}.json"
        path.write_text(json.dumps({"rows": worker_rows, "process_cpu": 0, "children_cpu": 0}))
        files.append(str(path))
    monkeypatch.setattr(sys, "argv", ["pytest_cpu.py", *files, "--by-file", "5"])
    _load().main()
    table = capsys.readouterr().out.splitlines()[2:]
    assert [line.split() for line in table[1:]] == [
        ["4.0", "15.0", "11.0", "2", "tests/a.py"],  # both workers, setup + calls
        ["0.8", "1.0", "0.2", "1", "tests/b.py"]]
