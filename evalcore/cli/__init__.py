"""`python -m evalcore`: parse flags and call the same public functions the pages call.

Each sub-command lives in its own module with a `register(subparsers)` function; heavy
libraries are imported inside the handlers so `--help` stays fast.
"""
from __future__ import annotations

import argparse
import gc
import importlib
import sys
from typing import Sequence

COMMAND_MODULES = ("datasets", "models", "runs", "stability", "compare", "fairness",
                   "attacks", "robustness", "worker", "jobs", "users", "audit")

COMMAND_MODULES += ("leaderboard", "trend", "report")  # compare and monitor (issue 11)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with a known `command`, only that sub-command is registered.

    argparse sets up ~150 options for all commands in ~20 ms (mostly gettext look-ups);
    a run needs only its own, so it starts that much sooner.
    """
    parser = argparse.ArgumentParser(
        prog="python -m evalcore",
        description="Evaluate LLMs: datasets, stability, robustness, fairness.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    names = (command,) if command in COMMAND_MODULES else COMMAND_MODULES
    for name in names:
        importlib.import_module(f"evalcore.cli.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None, *, pause_gc: bool = False) -> int:
    """Run the CLI; returns the process exit code (errors users can act on go to stderr).

    `pause_gc` is for the `python -m evalcore` process only (see `preload`).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    preload(getattr(args, "preload", ()), pause_gc=pause_gc)
    from evalcore.errors import EvalcoreError

    try:
        return int(args.func(args) or 0)
    except EvalcoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return int(getattr(exc, "exit_code", 2))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def preload(modules: Sequence[str], *, pause_gc: bool = False) -> None:
    """Import the modules a command is about to need, before it starts any work.

    With `pause_gc` the garbage collector is off while they load and their objects are
    frozen afterwards: SQLAlchemy, SQLModel, pydantic and aiohttp create a few hundred
    thousand long-lived objects, and CPython would otherwise walk them ~200 times while
    they load (~60 ms of every CLI run, 1.5% of a 4 s benchmark run). Later collections
    skip frozen objects. Only for a process of its own: freezing in a long-lived host
    (tests, the app) would keep their garbage forever.
    """
    if pause_gc:
        gc.disable()
    try:
        for name in modules:
            importlib.import_module(name)
    finally:
        if pause_gc:
            gc.freeze()
            gc.enable()
