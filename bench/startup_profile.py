"""Where a stability run's start-up goes, in CPU seconds: per imported module (self and
cumulative) and in total, from exec to the first request, median of `--repeat` processes.

`python -X importtime` measures wall time, which on this shared machine mostly measures the
other engineers' load; this counts the importing thread's CPU (`time.thread_time`) around
each module's execution, through a meta-path hook installed before evalcore is imported.
The hook's own bookkeeping is included (a few percent). Each process runs
`python -m evalcore stability` (100 questions x 10 rounds, C=50) against the fault server
on a fresh database and leaves at its first request.

    .venv/bin/python bench/startup_profile.py --repeat 5           # top modules, groups
    .venv/bin/python bench/startup_profile.py --repeat 5 --top 60
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from stability_bench import PY, Server, compile_bytecode, prepare  # noqa: E402

CHILD = r'''
import gc; gc.disable()
import importlib.abc, json, os, resource, sys, time
STATS, STACK = {}, []

class Timed(importlib.abc.Loader):
    def __init__(self, loader, name):
        self.loader, self.name = loader, name
    def create_module(self, spec):
        return self.loader.create_module(spec)
    def exec_module(self, module):
        start = time.thread_time()
        STACK.append(0.0)
        try:
            self.loader.exec_module(module)
        finally:
            children = STACK.pop()
            cum = time.thread_time() - start
            STATS[self.name] = [cum, cum - children]
            if STACK:
                STACK[-1] += cum
    def __getattr__(self, name):
        return getattr(self.loader, name)

class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = Timed(spec.loader, name)
                return spec
        return None

sys.meta_path.insert(0, Finder())
import aiohttp

def first(self, *args, **kwargs):
    r = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"cpu_s": r.ru_utime + r.ru_stime, "modules": STATS}), flush=True)
    os._exit(0)

aiohttp.ClientSession._request = first
import runpy
sys.argv = ["evalcore", *sys.argv[1:]]
runpy.run_module("evalcore", run_name="__main__", alter_sys=True)
'''

GROUPS = ("sqlalchemy", "sqlmodel", "pydantic", "pydantic_core", "aiohttp", "asyncio",
          "evalcore.store.tables", "evalcore.store.monitor_tables", "evalcore")


def group(module: str) -> str:
    """The first of GROUPS that `module` is or sits under, else 'other'."""
    for name in GROUPS:
        if module == name or module.startswith(name + "."):
            return name
    return "other (stdlib, attrs, yarl, ...)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--top", type=int, default=25, help="modules to list by self CPU")
    args = parser.parse_args()
    compile_bytecode()
    server = Server(latency=0.2)
    runs = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            template = Path(tmp) / "template"
            prepare(template, 100, server.port, 50)
            for n in range(args.repeat):
                home = Path(tmp) / f"run{n}"
                shutil.copytree(template, home)
                env = {**os.environ, "EVALCORE_HOME": str(home), "PYTHONPATH": str(ROOT)}
                env.pop("EVALCORE_DB_URL", None)
                out = subprocess.run([PY, "-c", CHILD, "stability", "--dataset", "bench",
                                      "--model", "fake", "--rounds", "10"], cwd=ROOT, env=env,
                                     check=True, capture_output=True, text=True).stdout
                runs.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        server.stop()
    names = set().union(*(r["modules"] for r in runs))
    med = {m: [statistics.median(r["modules"].get(m, [0.0, 0.0])[i] for r in runs)
               for i in (0, 1)] for m in names}
    total = statistics.median(r["cpu_s"] for r in runs)
    imports = sum(self_s for _, self_s in med.values())
    groups: dict[str, float] = defaultdict(float)
    for module, (_, self_s) in med.items():
        groups[group(module)] += self_s
    print(f"CPU from exec to the first request: {total:.3f} s (median of {args.repeat}); "
          f"module execution {imports:.3f} s, the rest {total - imports:.3f} s "
          f"(interpreter, settings, database, run creation, event loop); load "
          f"{os.getloadavg()[0]:.1f}")
    for name, self_s in sorted(groups.items(), key=lambda kv: -kv[1]):
        print(f"  {1000 * self_s:7.1f} ms  {name}")
    print(f"top {args.top} modules by self CPU (ms self / cumulative):")
    for module, (cum, self_s) in sorted(med.items(), key=lambda kv: -kv[1][1])[:args.top]:
        print(f"  {1000 * self_s:7.1f} {1000 * cum:7.1f}  {module}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
