"""CPU seconds per test, for finding where the suite's time goes (docs/test-timing-log.md).

On a shared machine wall seconds mostly measure the neighbours; CPU seconds of the pytest
process and of the children it reaped (a streamlit server, a worker, chromium: counted
when they end, usually at teardown) do not. As a pytest plugin it writes one JSON file;
run as a script it sums one or more of them.

    PYTEST_CPU_OUT=pages.json PYTHONPATH=bench .venv/bin/python -m pytest tests/pages \\
        -q -p no:cacheprovider -p pytest_cpu
    .venv/bin/python bench/pytest_cpu.py pages.json [--top 25] [--by-file 20]

Under xdist each worker writes its own file (x.gw0.json, ...); pass them all.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import time
from collections.abc import Iterator

import pytest

_rows: list[tuple[str, str, float, float, float]] = []


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def _measure(item: pytest.Item, phase: str) -> Iterator[None]:
    before, start = _cpu(), time.perf_counter()
    yield
    after = _cpu()
    _rows.append((item.nodeid, phase, time.perf_counter() - start, after[0] - before[0],
                  after[1] - before[1]))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    yield from _measure(item, "setup")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    yield from _measure(item, "call")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    yield from _measure(item, "teardown")


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get("PYTEST_CPU_OUT")
    if out:
        worker = os.environ.get("PYTEST_XDIST_WORKER")
        if worker:  # one file per xdist worker: `--cpu-out x.json` -> x.gw0.json, ...
            out = out.replace(".json", f".{worker}.json")
        own, kids = _cpu()
        with open(out, "w", encoding="utf-8") as f:
            json.dump({"rows": _rows, "process_cpu": own, "children_cpu": kids}, f)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--top", type=int, default=0, help="also list the N costliest phases")
    parser.add_argument("--by-file", type=int, default=0, metavar="N",
                        help="also list the N test files with the most CPU, over all the "
                             "given files (xdist workers), with wall and wall - CPU")
    args = parser.parse_args()
    by_file: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
    for name in args.files:
        with open(name, encoding="utf-8") as f:
            rows = json.load(f)["rows"]
        phases: collections.Counter[str] = collections.Counter()
        for _, phase, _, own, kids in rows:
            phases[phase] += own + kids
        print(f"{name}: {len({r[0] for r in rows})} tests, CPU {sum(phases.values()):.1f} s "
              f"({', '.join(f'{k} {v:.1f}' for k, v in phases.items())}), wall "
              f"{sum(r[2] for r in rows):.1f} s")
        for nodeid, phase, wall, own, kids in sorted(rows, key=lambda r: -(r[3] + r[4]))[
                :args.top]:
            print(f"  {own + kids:7.2f} CPU {wall:7.2f} wall  {phase:8s} {nodeid}")
        for nodeid, phase, wall, own, kids in rows:
            row = by_file[nodeid.split("::", 1)[0]]
            row[0] += own + kids
            row[1] += wall
            row[2] += phase == "call"
    if args.by_file:
        # wall - CPU: waiting (sleeps, leases, servers' own CPU such as PostgreSQL's) plus,
        # on a loaded machine, time spent queued for a core
        print(f"{'CPU':>8} {'wall':>8} {'wall-CPU':>8} {'tests':>5}  file")
        for name, (cpu, wall, tests) in sorted(by_file.items(), key=lambda kv: -kv[1][0])[
                :args.by_file]:
            print(f"{cpu:8.1f} {wall:8.1f} {wall - cpu:8.1f} {int(tests):5d}  {name}")


if __name__ == "__main__":
    main()
