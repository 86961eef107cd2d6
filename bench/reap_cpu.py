"""CPU seconds of a command and of every process it started, orphans included.

`bench/pytest_cpu.py` counts the children pytest reaps. Chromium's renderers are not
among them: their parent (chromium's zygote) ends before them, so init reaps them and
their CPU is counted nowhere; for the browser tests that is more than half of the real
cost (docs/test-timing-log.md, session 5). Here the command runs under a child subreaper
(Linux's PR_SET_CHILD_SUBREAPER), which reaps every orphan of the tree, so the total is
the CPU the command really used, daemons it started included (a PostgreSQL cluster
started with pg_ctl) once they have ended.

    .venv/bin/python bench/reap_cpu.py .venv/bin/python -m pytest tests/e2e/test_x.py -q
"""
from __future__ import annotations

import ctypes
import os
import resource
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def main(argv: list[str]) -> int:
    """Run `argv`, wait for every process of its tree, print the CPU they used; the
    command's exit code."""
    if not argv:
        print("usage: reap_cpu.py COMMAND [ARG...]", file=sys.stderr)
        return 2
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("error: prctl(PR_SET_CHILD_SUBREAPER) failed (Linux only)", file=sys.stderr)
        return 2
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    code = 0
    while True:
        try:
            done, status = os.wait()
        except ChildProcessError:  # no child left: the whole tree has ended
            break
        if done == pid:
            code = os.waitstatus_to_exitcode(status)
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"reap_cpu: exit {code}, wall {time.monotonic() - start:.1f} s, CPU "
          f"{used.ru_utime + used.ru_stime:.1f} s (user {used.ru_utime:.1f}, sys "
          f"{used.ru_stime:.1f})", file=sys.stderr)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
