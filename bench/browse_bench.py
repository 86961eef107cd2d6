"""Browsing a large stored dataset (the Datasets page's item browser); one JSON line per measure.

    .venv/bin/python bench/browse_bench.py                # 200,000 items, SQLite in a temp dir
    .venv/bin/python bench/browse_bench.py --items 50000

Imports a generated `q,a` CSV, then times `store.run_items.list_items` for the first page,
a page deep in the file, a search with few hits, a search with many hits and one with
none, and reports the process's peak memory: the page must never load the dataset whole.
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _emit(**row: object) -> None:
    print(json.dumps(row, ensure_ascii=False), flush=True)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200_000)
    args = parser.parse_args()

    from evalcore.dataset import import_dataset
    from evalcore.store.db import make_engine
    from evalcore.store.run_items import list_items

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.csv"
        with path.open("w", encoding="utf-8") as fh:
            fh.write("id,q,a\n")
            for n in range(1, args.items + 1):
                fh.write(f"row{n},Question {n}: how many apples are in basket {n % 997}?,{n}\n")
        engine = make_engine(f"sqlite:///{tmp}/bench.db")
        start = time.perf_counter()
        dataset = import_dataset(engine, path, name="big")
        _emit(measure="import", items=dataset.item_count,
              seconds=round(time.perf_counter() - start, 2), peak_mb=round(_peak_mb()))
        cases = {"first page": ("", 0), "deep page": ("", args.items - 50),
                 "search few hits": ("basket 996?", 0), "search many hits": ("apples", 0),
                 "search no hit": ("pears", 0), "search id": ("row12345", 0)}
        for label, (search, offset) in cases.items():
            start = time.perf_counter()
            rows, total = list_items(engine, int(dataset.id), search=search, offset=offset,
                                     limit=50)
            _emit(measure=label, search=search, offset=offset, rows=len(rows), total=total,
                  ms=round((time.perf_counter() - start) * 1000, 1), peak_mb=round(_peak_mb()))
        engine.dispose()


if __name__ == "__main__":
    main()
