"""How tests/conftest.py lays the suite out for `pytest -n auto --dist loadgroup`: serial
tests share one group, a module with a module-scoped fixture (an app server, chromium) is
one group so one worker starts it once, and both come before the single tests."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT

PROBE = '''
import json, os, pytest

@pytest.hookimpl(wrapper=True, tryfirst=True)  # outermost: sees the final nodeids
def pytest_collection_modifyitems(config, items):
    yield
    rows = []
    for item in items:
        mark = item.get_closest_marker("xdist_group")
        rows.append([item.nodeid, mark.args[0] if mark else None])
    with open(os.environ["GROUPS_OUT"], "w") as f:
        json.dump(rows, f)
    items[:] = []  # only the layout is wanted: run nothing
'''


def test_serial_and_module_fixture_groups_come_first_and_stay_whole(tmp_path: Path) -> None:
    """Collected by an xdist worker with --dist loadgroup, as `make test` does: the groups
    count only if the worker's nodeids carry them (`...@serial`), the suffix xdist's
    scheduler groups by; a mark added after xdist looked is ignored without a word."""
    (tmp_path / "groups_probe.py").write_text(PROBE, encoding="utf-8")
    files = ["tests/metrics/test_gate.py", "tests/e2e/test_header_mode.py",
             "tests/runner/test_kill9.py", "tests/runner/test_worker_outage.py"]
    out = tmp_path / "groups.json"
    subprocess.run(  # exit 5, "no tests ran": the probe only records the layout
        [sys.executable, "-m", "pytest", "-n", "1", "--dist", "loadgroup", "-q",
         "-p", "no:cacheprovider", "-p", "groups_probe", *files], cwd=REPO_ROOT,
        check=False, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO_ROOT}",
             "GROUPS_OUT": str(out)})
    rows = json.loads(out.read_text(encoding="utf-8"))
    groups = [group for _, group in rows]
    kill9 = [g for n, g in rows if n.startswith(files[2])]
    header = [g for n, g in rows if n.startswith(files[1])]
    gate = [g for n, g in rows if n.startswith(files[0])]
    outage = [g for n, g in rows if n.startswith(files[3])]  # integration, no group
    assert kill9 and set(kill9) == {"serial"}
    assert len(header) == 6 and set(header) == {files[1]}  # module-scoped server + chromium
    assert gate and set(gate) == {None}
    assert outage == [None]
    # groups first, each module's tests together, then single tests that start something
    assert groups == kill9 + header + outage + gate
    assert rows[len(kill9) + len(header)][0].startswith(files[3])
    # what xdist's scheduler reads: the group in the nodeid, none on an ungrouped test
    assert all(n.endswith("@serial") for n, g in rows if g == "serial")
    assert all(n.endswith(f"@{files[1]}") for n, g in rows if g == files[1])
    assert not any("@" in n for n, g in rows if g is None)
