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
