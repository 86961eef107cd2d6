"""Results speed at scale; one JSON line per measure.

    .venv/bin/python bench/results_bench.py              # 1,000 runs; 4 runs x 100,000 calls
    .venv/bin/python bench/results_bench.py --calls 20000 --runs 200   # a quicker look

Measures (targets from issue 11):
- list: one page of the Results list (`runs.run_list`, filters and paging in SQL) and
  the filter options, with `--runs` runs stored (target < 1 s); and the whole Runs tab
  of the page under AppTest (list plus the details of the newest, biggest run);
- compare: `compare_runs` of 4 stability runs of `--calls` calls each (1,000 items x
  calls/1,000 rounds) on a shared dataset (target < 2 s);
- report: the trust report HTML of those 4 runs (target < 5 s).
A fresh SQLite database in a temporary directory; calls are inserted in bulk, not run.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ITEMS = 1000


def _emit(**row: object) -> None:
    print(json.dumps(row, ensure_ascii=False), flush=True)


def _timed(label: str, target: float, fn, repeat: int = 3):  # noqa: ANN001, ANN201
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    _emit(measure=label, best_s=round(min(times), 3), worst_s=round(max(times), 3),
          target_s=target, ok=min(times) < target)
    return result


def _seed(engine, runs: int, calls: int) -> tuple[list[int], int]:  # noqa: ANN001
    """`runs` small runs for the list; 4 big stability runs of `calls` calls each."""
    from sqlalchemy import insert

    from evalcore.store import queries
    from evalcore.store.tables import Call
    from tests.fakes.stored_runs import seed_dataset

    ds = seed_dataset(engine, "bench", [f"What is {i} + {i}?" for i in range(ITEMS)])
    from evalcore.dataset import load_items

    item_ids = [i.id for i in load_items(engine, ds)]
    now = datetime.now(UTC)
    models = {f"m{k}": {"name": f"m{k}", "price_in": 1.0, "price_out": 2.0} for k in range(4)}
    for n in range(runs - 4):
        queries.create_run(engine, kind=("stability", "robustness", "fairness")[n % 3],
                           dataset_id=ds, model=f"m{n % 7}", status="done", rounds=3,
                           total=3000, done=3000, started_at=now - timedelta(minutes=n + 1),
                           finished_at=now - timedelta(minutes=n),
                           config={"item_ids": item_ids, "models": models})
    rounds = max(calls // ITEMS, 1)
    rng = random.Random(0)
    big = []
    for k in range(4):
        run = queries.create_run(engine, kind="stability", dataset_id=ds, model=f"m{k}",
                                 status="done", rounds=rounds, total=ITEMS * rounds,
                                 done=ITEMS * rounds, started_at=now, finished_at=now,
                                 config={"item_ids": item_ids, "models": models})
        skill = 0.5 + 0.1 * k
        rows = [{"run_id": run.id, "item_id": item, "round": r + 1, "stage": "answer",
                 "model": f"m{k}", "prompt": "", "answer": "x",
                 "correct": rng.random() < skill, "score": None, "latency_ms": 100.0,
                 "prompt_tokens": 20, "completion_tokens": 30, "attempts": 1}
                for item in item_ids for r in range(rounds)]
        with engine.begin() as conn:
            for start in range(0, len(rows), 20_000):
                conn.execute(insert(Call), rows[start:start + 20_000])
        big.append(int(run.id))
    return big, ds


def _page_render() -> None:
    """The Results page's Runs tab under AppTest (list + the newest run's details: a
    100,000-call run), second script run timed (the first one imports everything)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / "results.py"), default_timeout=120)
    at.session_state["results.tab"] = "Runs"
    started = time.perf_counter()
    at.run()
    _emit(measure="Results page, Runs tab, first script run (imports, cold caches)",
          seconds=round(time.perf_counter() - started, 3))

    def rerun() -> None:
        at.run()
        assert not at.exception, [e.value for e in at.exception]

    _timed("Results page, Runs tab (list + newest run's details), script run", 1.0, rerun)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["EVALCORE_HOME"] = home
        from evalcore.config import load_settings
        from evalcore.report import runs
        from evalcore.report.compare_runs import compare_runs
        from evalcore.report.trust import trust_report_html
        from evalcore.store.db import get_engine

        engine = get_engine(load_settings().db_url)
        started = time.perf_counter()
        big, _ = _seed(engine, args.runs, args.calls)
        _emit(measure="seed", runs=args.runs, calls_per_big_run=args.calls,
              seconds=round(time.perf_counter() - started, 1))
        _timed("list page (100 of all runs) + filter options", 1.0,
               lambda: (runs.run_list(engine), runs.run_filter_options(engine)))
        _timed("list page, filtered (kind + model)", 1.0,
               lambda: runs.run_list(engine, kind=["stability"], model=["m1"]))
        _page_render()
        _timed(f"run details of one {args.calls:,}-call run (a Results refresh, active time "
               "included)", 0.5, lambda: runs.run_details(engine, big[0]))
        result = _timed(f"compare 4 runs x {args.calls:,} calls", 2.0,
                        lambda: compare_runs(engine, big), repeat=2)
        _emit(measure="compare result", shared=result["alignment"]["shared"],
              best=result["best"], findings=[t["finding"] for t in result["tests"]][:2])
        page = _timed(f"trust report HTML of 4 runs x {args.calls:,} calls", 5.0,
                      lambda: trust_report_html(engine, runs=big), repeat=2)
        _emit(measure="report size", mb=round(len(page.encode("utf-8")) / 1e6, 2))


if __name__ == "__main__":
    main()
