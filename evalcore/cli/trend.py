"""`trend --dataset NAME --metric M`: a metric over time per model, regressions flagged."""
from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta

from evalcore.cli.common import engine_and_settings, print_json
from evalcore.metrics.gate import load_gate_config
from evalcore.report.trend import trend


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("trend", help="a metric over time across a dataset's runs, per model")
    p.add_argument("--dataset", required=True, help="dataset or fairness suite (name or id)")
    p.add_argument("--metric", required=True,
                   help="e.g. accuracy, mean_success_rate, flaky_share, pdr_word, spd, "
                        "overall_score (see evalcore/metrics/gate.py)")
    p.add_argument("--model", help="only this model")
    p.add_argument("--baseline", type=int, help="baseline run (default: each model's oldest)")
    p.add_argument("--config", help="gate TOML: mark each run's gate verdict")
    p.add_argument("--days", type=int, help="only runs of the last DAYS days (e.g. 30)")
    p.add_argument("--json", action="store_true", help="print the trend as JSON")
    p.set_defaults(func=_trend)


def _trend(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()

    gate = load_gate_config(args.config) if args.config else None
    since = datetime.now(UTC) - timedelta(days=args.days) if args.days else None
    result = trend(engine, args.dataset, args.metric, model=args.model,
                   baseline=args.baseline, gate=gate, since=since)
    if args.json:
        print_json(result)
        return 0
    print(f"{result['metric']} on {result['dataset']} ({result['better']} is better)")
    if not result["series"]:
        print("no finished run on this dataset measures this metric")
    for model, points in result["series"].items():
        print(f"{model}:")
        for p in points:
            interval = (f" [{p['low']:.3f}, {p['high']:.3f}]" if p["low"] is not None else "")
            marks = [m for m in ("baseline" if p["baseline"] else "",
                                 "REGRESSION" if p["regression"] else "",
                                 {True: "gate passed", False: "gate FAILED", None: ""}[p["gate"]])
                     if m]
            print(f"  {p['created_at']:%Y-%m-%d %H:%M}  run {p['run_id']:>5}  "
                  f"{p['value']:.3f}{interval}  {' '.join(marks)}")
            if p["test"]:
                print(f"      {p['test']}")
    return 0
