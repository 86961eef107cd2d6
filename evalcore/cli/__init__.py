"""`python -m evalcore`: parse flags and call the same public functions the pages call.

Each sub-command lives in its own module with a `register(subparsers)` function; heavy
libraries are imported inside the handlers so `--help` stays fast.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

COMMAND_MODULES = ("datasets", "models", "runs", "stability", "compare", "fairness",
                   "attacks", "robustness")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evalcore",
        description="Evaluate LLMs: datasets, stability, robustness, fairness.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"evalcore.cli.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code (errors users can act on go to stderr)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    from evalcore.errors import EvalcoreError

    try:
        return int(args.func(args) or 0)
    except EvalcoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
