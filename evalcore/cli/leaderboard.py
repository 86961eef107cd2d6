"""`leaderboard --dataset NAME`: one row per model that ran on a dataset or suite."""
from __future__ import annotations

import argparse
from typing import Any

from evalcore.cli.common import engine_and_settings, print_json
from evalcore.errors import EvalcoreError
from evalcore.report.leaderboard import leaderboard
from evalcore.report.run_figures import interval_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("leaderboard", help="every model that ran on a dataset, one row each")
    p.add_argument("--dataset", required=True, help="dataset or fairness suite (name or id)")
    p.add_argument("--runs", default="", help="run ids to use instead of the latest "
                                              "(comma-separated, e.g. 12,15)")
    p.add_argument("--sort", default="accuracy", help="column to sort by (default accuracy; mg_pass_at_k ranks "
                        "by right in most of N rounds)")
    p.add_argument("--json", action="store_true", help="print the leaderboard as JSON")
    p.set_defaults(func=_leaderboard)


def run_ids(text: str) -> list[int]:
    """'12, 15' -> [12, 15]; a clear error for anything else."""
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise EvalcoreError(f"--runs {text!r}: give run ids separated by commas, e.g. 12,15"
                            ) from None


def _leaderboard(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    board = leaderboard(engine, args.dataset, runs=run_ids(args.runs), sort=args.sort)
    if args.json:
        print_json(board)
    else:
        print_board(board)
    return 0


def _cell(row: dict[str, Any], name: str) -> str:
    value = row.get(name)
    if name in ("errors", "tokens"):
        return f"{value:,}"
    if name == "cost":
        return "-" if value is None else f"{value:.4f}"
    if name == "mean_latency_ms":
        return "-" if value is None else f"{value:.0f} ms"
    if name in ("fairness_score", "fairness_level"):
        return "-" if value is None else str(value if isinstance(value, str) else f"{value:.1f}")
    low, high = row.get(f"{name}_low"), row.get(f"{name}_high")
    return interval_text(value, {"low": low, "high": high} if low is not None else None)


def print_board(board: dict[str, Any]) -> None:
    """One block per model (the table is too wide for a terminal), best first."""
    print(f"leaderboard of {board['dataset']} by {board['sort']} "
          f"({len(board['rows'])} models; 95% intervals in brackets)")
    for rank, row in enumerate(board["rows"], start=1):
        runs = ", ".join(f"{k} #{v}" for k, v in row["runs"].items())
        print(f"{rank}. {row['model']}  ({runs})")
        for name in board["columns"]:
            if name in ("model", "runs") or row.get(name) is None:
                continue
            print(f"     {name:<20} {_cell(row, name)}")
