"""`python -m evalcore`: parse flags and call the same public functions the pages call.

Each sub-command lives in its own module with a `register(subparsers)` function (a kind
of evaluation's comes from its `EvalKind.cli`) and imports what its handlers need at its
top; `python -m evalcore --help` lists the commands from `COMMANDS` and the kind registry
(name and help line) without importing any command module, so it stays fast.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from typing import Any, NoReturn, Sequence

from evalcore.config import check_environment
from evalcore.error_text import describe_error
from evalcore.heap import collector_paused, frozen_heap
from evalcore.kinds import all_kinds

COMMANDS: dict[str, tuple[str, str]] = {
    "datasets": ("datasets", "import, list, show and delete datasets"),
    "models": ("models", "add, list, test or remove models (models.toml)"),
    "runs": ("runs", "list, inspect, resume or cancel runs"),
    "compare": ("compare", "compare 2 to 8 runs of one kind side by side"),
    "gate": ("gate", "check a run (any kind) against a gate config; exit 1 fail, 4 not measured"),
    "attack": ("attacks", "attack a dataset (char, word or sentence level) into a new attack "
                          "set for review"),
    "attacks": ("attacks", "attack sets: list, resume, show, import, approve, reject, edit, "
                           "export, delete"),
    "worker": ("worker", "execute queued jobs; run any number of them, on any number of hosts, "
                         "against one database"),
    "jobs": ("jobs", "list, inspect, requeue or cancel queued work"),
    "users": ("users", "team mode: list users, add them, set roles"),
    "audit": ("audit", "the audit log: every state change, who, when"),
    "leaderboard": ("leaderboard", "every model that ran on a dataset, one row each"),
    "trend": ("trend", "a metric over time across a dataset's runs, per model"),
    "report": ("report", "one self-contained trust report (HTML, PDF) per model"),
    "schedules": ("schedules", "runs that repeat (every N s/m/h/d or cron), gated and alerted"),
    "baseline": ("baseline", "the stored baseline run of a dataset and model"),
    "plan": ("plan", "questions and rounds needed to detect a difference"),
    "review": ("review", "review queues a team shares: reservations, double review, "
                         "agreement, precision"),
}
"""Command -> (its module in `evalcore.cli`, its line in `--help`), for the commands that
are no kind of evaluation (a kind's name and line come from the registry, `EvalKind.cli`
and `cli_help`). `--help` and a mistyped command are answered from here without importing
a command module (each loads SQLAlchemy and more at its top), and a command imports only
its own module: all of them would cost a worker a quarter of its start-up
(bench/startup_bench.py). tests/cli/test_cli_help.py holds the table equal to the modules."""

EXIT_OK, EXIT_GATE_FAILED, EXIT_USAGE, EXIT_RUN_FAILED = 0, 1, 2, 3
EXIT_NOT_MEASURED = 4
EXIT_CODES = """exit codes:
  0    ok
  1    a gate (`gate`, any kind of run) or a model test (`models test`) failed, or a
       gate was inconclusive with [relative] on_inconclusive = "fail" (the default)
  2    usage or settings error: a bad flag or value, models.toml, EVALCORE_HOME,
       EVALCORE_DB_URL, an unreachable or read-only database (one line on stderr;
       --debug shows the traceback)
  3    the run failed (every answer call failed) or its error share passed
       --max-error-rate (stability, robustness, fairness)
  4    a gate measured nothing it could judge: no check applies to the run, or a
       check it needs had no value (verdict NOT MEASURED; never a pass)
  130  interrupted (Ctrl-C)"""


class OneLineParser(argparse.ArgumentParser):
    """argparse with usage errors as one line `error: ... (hint)` and exit code 2, like
    every other settings error (sub-command parsers inherit the class). No abbreviated
    options: `fairness --templates X` must not be read as `--templates-dir X`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:  # noqa: D102 - argparse hook
        self.exit(EXIT_USAGE, f"error: {message} (see {self.prog} --help)\n")


def _top_parser() -> tuple[OneLineParser, argparse._SubParsersAction]:
    parser = OneLineParser(
        prog="python -m evalcore",
        description="Evaluate LLMs: datasets, stability, robustness, fairness.",
        epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an error (anywhere on the line)")
    return parser, parser.add_subparsers(dest="command", required=True, metavar="COMMAND")


def _kind_commands() -> dict[str, Any]:
    """Kind name -> the kind, for each kind with a CLI sub-command (the registry imports
    nothing heavy: a kind module defers its own imports)."""
    return {name: kind for name, kind in all_kinds().items() if kind.cli is not None}


def help_parser() -> argparse.ArgumentParser:
    """The parser for anything but a known command (`--help`, a typo, nothing): every
    command by name and help line, none of their modules imported."""
    parser, sub = _top_parser()
    lines = {name: text for name, (_module, text) in COMMANDS.items()}
    kinds = {name: kind.cli_help for name, kind in _kind_commands().items()}
    for name, text in {**lines, **kinds}.items():  # the order `build_parser` registers
        sub.add_parser(name, help=text)
    return parser


def parser_for(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser `main` uses: a known command's own, else `help_parser()`."""
    command = argv[0] if argv else None
    if command in COMMANDS or (command and command in _kind_commands()):
        return build_parser(command)
    return help_parser()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of `command` (a command of `COMMANDS` or a kind) alone, or of
    every command."""
    parser, sub = _top_parser()
    kinds = {name: kind.cli for name, kind in _kind_commands().items()}
    modules = dict.fromkeys(module for module, _text in COMMANDS.values())
    if command in COMMANDS:
        modules, kinds = {COMMANDS[command][0]: None}, {}
    elif command in kinds:
        modules, kinds = {}, {command: kinds[command]}
    for module in modules:
        importlib.import_module(f"evalcore.cli.{module}").register(sub)
    for register in kinds.values():
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code (errors users can act on go to stderr)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [arg for arg in argv if arg != "--debug"]
    try:
        with collector_paused():  # builds the command's parser: imports its modules
            parser = parser_for(argv)
        args = parser.parse_args(argv)
        _check_settings()
        with frozen_heap():  # the start-up heap left out of the collector's passes
            return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the one error boundary of the CLI
        return report_error(exc, debug=debug)


def _check_settings() -> None:
    """Every EVALCORE_* value, before any command acts on one (lease, worker, sign-in).
    Imported here: the sign-in settings load asyncio and more, which `--help` never needs."""
    from evalcore.auth.config import auth_config

    check_environment(os.environ)
    auth_config()


def report_error(exc: BaseException, *, debug: bool = False) -> int:
    """Print an expected failure as one line `error: ... (hint)` and return exit code 2;
    anything else (a bug) is raised again. `debug` prints the traceback first."""
    message = describe_error(exc)
    if message is None:
        raise exc
    if isinstance(exc, BrokenPipeError):
        _silence_stdout()
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    print(f"error: {message}", file=sys.stderr)
    return int(getattr(exc, "exit_code", EXIT_USAGE))  # a released job says 143 (SIGTERM)


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the exit flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
