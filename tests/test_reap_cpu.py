"""bench/reap_cpu.py counts the CPU of orphans: a process whose parent ended first (how
chromium's renderers end, uncounted by pytest's own bookkeeping)."""
from __future__ import annotations

import re
import subprocess
import sys

from tests.conftest import REPO_ROOT

BUSY = "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass\n"


def test_an_orphans_cpu_is_counted() -> None:
    # the shell starts the busy Python in the background and ends at once: an orphan
    script = f"{sys.executable} -c '{BUSY}' & exit 3"
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "bench" / "reap_cpu.py"),
                           "bash", "-c", script], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 3, proc.stderr  # the command's own exit code
    m = re.search(r"reap_cpu: exit 3, wall [\d.]+ s, CPU ([\d.]+) s", proc.stderr)
    assert m, proc.stderr
    assert float(m.group(1)) >= 0.4, proc.stderr  # the orphan's 0.4 s are in the total


def test_without_a_command_it_says_how() -> None:
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "bench" / "reap_cpu.py")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2 and "usage: reap_cpu.py COMMAND" in proc.stderr


def _proc_cpu():  # type: ignore[no-untyped-def]
    import importlib.util

    spec = importlib.util.spec_from_file_location("proc_cpu", REPO_ROOT / "bench" / "proc_cpu.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_proc_cpu_names_the_suites_processes() -> None:
    kind_of = _proc_cpu().kind_of
    assert kind_of("/usr/lib/chromium/chromium --type=renderer --lang=en-US") == "chromium"
    assert kind_of("/x/.venv/bin/python -u -c import sys;exec(eval(sys.stdin.readline()))"
                   ) == "xdist worker"
    assert kind_of(".venv/bin/python -m evalcore worker --name w1") == "evalcore worker"
    assert kind_of(".venv/bin/python -m evalcore runs list --home /tmp/pytest-of-root/x"
                   ) == "evalcore cli"
    assert kind_of(".venv/bin/python -m streamlit run streamlit_app.py") == "streamlit"
    assert kind_of("/usr/bin/bash -c true") == "other"


def test_proc_cpu_counts_a_commands_python_by_kind(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "by_kind.json"
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "bench" / "proc_cpu.py"),
                           "--interval", "0.05", "--out", str(out), "--",
                           sys.executable, "-c", BUSY], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    import json

    processes, cpu = json.loads(out.read_text())["python, other"]
    assert processes == 1 and cpu >= 0.3, proc.stderr  # its 0.4 s, less one interval
