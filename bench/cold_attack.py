"""CPU of one attack set generated in a fresh process, start-up and data loads included:
what an attack worker, the CLI or the app pays for its first set (`bench/attack_bench.py`
times the attack after the loads). Also lists the heavy libraries the process loaded.

    .venv/bin/python bench/cold_attack.py                      # CODAH, char level, 3 runs
    .venv/bin/python bench/cold_attack.py --set Math23K --level word --repeat 5
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "datasets" / "trusted-evaluation"
HEAVY = ("nltk", "scipy", "sklearn", "pandas", "jieba", "onnxruntime")
CHILD = """
import json, os, resource, sys, time
from evalcore.config import load_settings
from evalcore.dataset import import_dataset
from evalcore.perturb.generate import make_attack_set
from evalcore.store.db import make_engine

engine = make_engine(load_settings().db_url)
import_dataset(engine, sys.argv[1], name="bench")
start = time.process_time()
made = make_attack_set(engine, dataset="bench", level=sys.argv[2], seed=3,
                       params={"similarity": False})
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"items": made.item_count, "generate_cpu_s": round(time.process_time() - start, 2),
                  "process_cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
                  "loaded": [m for m in %r if m in sys.modules]}))
""" % (HEAVY,)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", default="CODAH", choices=("CODAH", "Math23K"))
    parser.add_argument("--level", default="char", choices=("char", "word"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    path = DATA / {"CODAH": "CODAHtest.csv", "Math23K": "Math23Ktest.csv"}[args.set]
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as home:
            out = subprocess.run([sys.executable, "-c", CHILD, str(path), args.level],
                                 cwd=ROOT, env={**_env(), "EVALCORE_HOME": home},
                                 capture_output=True, text=True, check=True)
        print(json.dumps({"set": args.set, "level": args.level,
                          **json.loads(out.stdout.strip().splitlines()[-1])}))


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("EVALCORE_DB_URL", "EVALCORE_MODELS")}


if __name__ == "__main__":
    main()
