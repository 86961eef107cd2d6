"""Import memory and speed: a generated Math23K-format CSV (default 200,000 rows, ~67 MB)
imported by `python -m evalcore datasets import` in its own process.

Prints one JSON line: rows, file MB, wall seconds, rows/s and the process's peak RSS (MB,
from wait4). The file is generated from the rows of the shared Math23K test file when it
is there (synthetic Chinese maths questions otherwise), each row given its own id and
numbers, so the file is what a real export of that size looks like.

    .venv/bin/python bench/import_bench.py [--rows 200000] [--keep FILE] [--root DIR]
        [--page-path]

`--root` runs another checkout's evalcore (e.g. `git archive <commit> | tar -x -C DIR`)
with this venv, for before/after figures.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "datasets" / "trusted-evaluation" / "Math23Ktest.csv"
HEADER = ["id", "question", "segmented_text", "equation", "answer"]


def _seed_rows() -> list[list[str]]:
    if SHARED.is_file():
        with SHARED.open(encoding="utf-8", newline="") as fh:
            rows = [row for row in csv.reader(fh)][1:]
        if rows:
            return rows
    question = "小明有{a}个苹果，又买了{b}个，一共有多少个苹果？他把其中的一半分给同学，还剩多少个？"
    return [["0", question, " ".join(question), "x=(a+b)/2", "0"]]


def write_csv(path: Path, rows: int) -> None:
    """`rows` data rows in Math23K's columns, streamed to `path`."""
    seed = _seed_rows()
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(HEADER)
        for i in range(rows):
            base = seed[i % len(seed)]
            a, b = i % 997 + 1, i // 997 + 3
            question = base[1].replace("{a}", str(a)).replace("{b}", str(b))
            extra = f"（第{i}题，数据{a}和{b}）"
            writer.writerow([str(i), question + extra, f"{base[2]} {i}",
                             base[3], str(a + b)])


def run_import(path: Path, home: Path, root: Path = ROOT) -> dict[str, float]:
    """Import `path` in a child process; wall seconds and the child's peak RSS in MB."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALCORE_")}
    env["EVALCORE_HOME"] = str(home)
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "evalcore", "datasets", "import", str(path),
                             "--name", "big"], cwd=root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    out, err = proc.stdout.read().decode(), proc.stderr.read().decode()  # type: ignore[union-attr]
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"import failed: {err or out}")
    return {"wall_s": round(wall, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}


PAGE_PATH = """
import os, resource, sys, time
from pathlib import Path
from evalcore.config import load_settings
from evalcore.dataset import parse_dataset, store_parsed
from evalcore.store.db import get_engine
data = Path(sys.argv[1]).read_bytes()
started = time.perf_counter()
parsed = parse_dataset(data, "big.csv")
store_parsed(get_engine(load_settings().db_url), parsed, name="big")
print(time.perf_counter() - started)
"""


def run_page_path(path: Path, home: Path, root: Path = ROOT) -> dict[str, float]:
    """What the Datasets page does with an upload (bytes, parse all for the preview, then
    store), in a child process; wall seconds and its peak RSS in MB."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALCORE_")}
    env["EVALCORE_HOME"] = str(home)
    proc = subprocess.Popen([sys.executable, "-c", PAGE_PATH, str(path)], cwd=root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    out, err = proc.stdout.read().decode(), proc.stderr.read().decode()  # type: ignore[union-attr]
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"page path failed: {err or out}")
    return {"wall_s": round(float(out), 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--keep", help="write the CSV here (and keep it) instead of a temp dir")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to run")
    parser.add_argument("--page-path", action="store_true",
                        help="measure the Datasets page's path (parse_dataset + store_parsed "
                             "on the uploaded bytes) instead of `datasets import`")
    args = parser.parse_args()
    run = run_page_path if args.page_path else run_import
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.keep) if args.keep else Path(tmp) / "big.csv"
        write_csv(path, args.rows)
        result = run(path, Path(tmp) / "home", args.root)
        size = path.stat().st_size / 1e6
    what = "page path" if args.page_path else "import"
    print(json.dumps({"scenario": f"{what} {args.rows} rows CSV", "rows": args.rows,
                      "file_mb": round(size, 1), **result,
                      "rows_per_s": round(args.rows / result["wall_s"])}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
