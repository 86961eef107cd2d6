"""CPU seconds by kind of process while a command runs: the whole suite's split between
the xdist workers, chromium, streamlit servers, evalcore workers and CLI processes.

`bench/reap_cpu.py` gives one total; `bench/pytest_cpu.py` gives CPU per test but misses
what is not reaped by pytest (chromium's renderers). This samples /proc every
`--interval` seconds for the command's process tree and keeps each process's last
reading: a process that ends between two samples loses at most one interval of CPU,
one that starts and ends between two is missed. Linux only.

    .venv/bin/python bench/proc_cpu.py --out by_proc.json -- \\
        .venv/bin/python -m pytest -n 3 --dist loadgroup --no-loadscope-reorder -q
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

_TICKS = os.sysconf("SC_CLK_TCK")
_KINDS = (  # (kind, pattern in the command line): the first match names the process
    ("chromium", re.compile(r"chrom")),
    ("xdist worker", re.compile(r"exec\(eval\(sys\.stdin")),
    ("pytest", re.compile(r" -m pytest")),
    ("streamlit", re.compile(r"streamlit|serve_app\.py")),
    ("postgres", re.compile(r"postgres")),
    ("evalcore worker", re.compile(r"-m evalcore worker")),
    ("evalcore cli", re.compile(r"-m evalcore")),
    ("playwright node", re.compile(r"playwright/driver/node")),
    ("python, other", re.compile(r"python")),
)


def kind_of(cmdline: str) -> str:
    """The kind a process counts under, from its command line (NULs as spaces)."""
    for kind, pattern in _KINDS:
        if pattern.search(cmdline):
            return kind
    return "other"


def _sample(seen: dict[tuple[str, str], list], tree: set[str]) -> None:
    """Read every process once; those descended from the command (`tree`: its pids,
    grown here) are recorded. A process is joined to the tree while its parent is alive,
    so chromium's renderers stay counted after their zygote ends."""
    rows = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            rows[pid] = (fields[1], fields[19], (int(fields[11]) + int(fields[12])) / _TICKS)
        except (OSError, IndexError, ValueError):  # ended while read
            continue
    grown = True
    while grown:  # a new child and its new grandchild in the same sample
        grown = False
        for pid, (ppid, _, _) in rows.items():
            if pid not in tree and ppid in tree:
                tree.add(pid)
                grown = True
    for pid, (_, start, used) in rows.items():
        key = (pid, start)  # a pid with its start time: never reused
        if pid not in tree:
            continue
        if key not in seen:
            try:
                with open(f"/proc/{pid}/cmdline") as fh:
                    cmdline = fh.read().replace("\0", " ").strip()
            except OSError:
                continue
            seen[key] = [kind_of(cmdline), 0.0]
        seen[key][1] = used


def main(argv: list[str]) -> int:
    """Run the command after `--`, print CPU seconds by kind; the command's exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interval", type=float, default=0.5)
    parser.add_argument("--out", help="also write {kind: [processes, cpu_s]} as JSON")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give a command after --")
    proc = subprocess.Popen(command)
    seen: dict[tuple[str, str], list] = {}
    tree = {str(proc.pid)}
    while proc.poll() is None:
        time.sleep(args.interval)  # first: the command has exec'd when it is first read
        _sample(seen, tree)
    cpu: collections.Counter[str] = collections.Counter()
    count: collections.Counter[str] = collections.Counter()
    for kind, used in seen.values():
        cpu[kind] += used
        count[kind] += 1
    for kind, used in cpu.most_common():
        print(f"{used:8.1f} s  {count[kind]:5d} processes  {kind}", file=sys.stderr)
    print(f"{sum(cpu.values()):8.1f} s  total", file=sys.stderr)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({k: [count[k], round(v, 2)] for k, v in cpu.items()}, fh, indent=1)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
