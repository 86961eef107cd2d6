"""Small helpers the sub-commands share: the engine, JSON output, a progress bar."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import msgspec

from evalcore.auth import auth_config, cli_actor
from evalcore.cli import EXIT_OK, EXIT_RUN_FAILED
from evalcore.config import DEFAULT_MODEL, load_settings
from evalcore.kinds import get_kind
from evalcore.providers.base import REFUSAL
from evalcore.report.estimate import estimate_run
from evalcore.service.database import get_engine
from evalcore.service.runs import answer_error_counts, get_run, run_in_foreground

def bounded(low: float | None = None, high: float | None = None, kind: type = float) -> Any:
    """An argparse `type=` that reads a number and refuses one outside [low, high]."""
    def read(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            what = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if (low is not None and value < low) or (high is not None and value > high):
            span = (f"between {low:g} and {high:g}" if low is not None and high is not None
                    else f">= {low:g}" if low is not None else f"<= {high:g}")
            raise argparse.ArgumentTypeError(f"{text} is out of range: must be {span}")
        return value

    read.__name__ = kind.__name__  # argparse names the type in its messages
    return read


TEMPERATURE = bounded(0, 2)
"""`--temperature`: 0-2, as every OpenAI-compatible endpoint accepts."""


def engine_and_settings():  # noqa: ANN201 - returns (Engine, Settings); imports stay lazy
    """The configured engine (schema up to date) and settings."""
    settings = load_settings()
    return get_engine(settings.db_url), settings


def print_rows(rows: list[Any], as_json: bool, to_dict: Any, line: Any, empty: str) -> int:
    """A listing command's output: JSON of `to_dict(row)` each, or one `line(row)` each
    (`empty` when there is none); returns exit code 0."""
    if as_json:
        print_json([to_dict(r) for r in rows])
        return 0
    if not rows:
        print(empty)
    for row in rows:
        print(line(row))
    return 0


def print_json(data: Any) -> None:
    """`data` as indented JSON. Encoded in one piece by json's C encoder and indented by
    msgspec: json's own indenting runs in Python, seconds for a run of 10,000 questions.
    The text is the same; a NaN (which msgspec refuses to read) takes json's slow path."""
    flat = json.dumps(data, ensure_ascii=False, default=str)
    try:
        text = msgspec.json.format(flat.encode(), indent=2).decode()
    except msgspec.DecodeError:
        text = json.dumps(data, ensure_ascii=False, indent=2, default=str)
    sys.stdout.write(text)
    sys.stdout.write("\n")


def detach_or_run(args: Any, engine: Any, run_id: int) -> str | None:
    """With `--detach`: print {"run_id": N} (the run stays queued for a worker) and
    return None; otherwise say its calls and expected time ("estimate: 60 calls, about
    30 s on local ...") and execute it here with a progress bar."""
    if getattr(args, "detach", False):
        print_json({"run_id": run_id})
        return None

    print(f"estimate: {estimate_run(engine, run_id).line()}", flush=True)
    return run_with_progress(engine, run_id)


def add_model_arg(parser: Any) -> None:
    """`--model`, the embedded local model unless named: a first run needs no flag to learn."""
    parser.add_argument("--model", default=DEFAULT_MODEL,
                        help=f"model name (see `models list`; default {DEFAULT_MODEL!r}, the "
                             "embedded model)")


def add_detach(parser: Any) -> None:
    parser.add_argument("--detach", action="store_true",
                        help='only queue the run for a worker and print {"run_id": N}')


VARIANT_HELP = {
    "option_order": ("--option-order", "ORDER",
                     "also ask each choice item (BBQ / CBBQ: its own three options) with its "
                     "options reordered: circular (every rotation, CircularEval) or shuffle:N "
                     "(N seeded shuffles); reports circular accuracy and position bias (extra "
                     "calls, stated before the run starts)"),
    "templates": ("--templates", "LIST",
                  "also ask each item under 2-6 prompt templates: zero, few or a template "
                  "FILE, comma-separated (e.g. zero,few,mine.txt); reports accuracy per "
                  "template, the spread, the worst, McNemar best vs worst"),
}


def add_variant_args(parser: Any, kind: str, where: str = "") -> None:
    """The run options `kind` declares (`EvalKind.run_options`: --option-order,
    --templates) and --variant-seed; `where` says which items they ask."""
    for option in get_kind(kind).run_options:
        flag, metavar, text = VARIANT_HELP[option]
        parser.add_argument(flag, metavar=metavar, help=text + where)
    parser.add_argument("--variant-seed", type=int, default=0, metavar="S",
                        help="seed of the shuffles of --option-order shuffle:N (default 0)")


def write_json(path: str, data: Any) -> None:
    """A report as UTF-8 JSON (Chinese left readable) at `path`."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, ensure_ascii=False, indent=2, default=str)


def run_with_progress(engine: Any, run_id: int, *, force: bool = False) -> str:
    """Execute a stored run in this process with a tqdm bar on stderr (hidden when stderr
    is not a terminal); returns the run's final status."""
    from tqdm import tqdm

    bar = tqdm(desc=f"run {run_id}", unit="call", file=sys.stderr, dynamic_ncols=True,
               disable=None)

    def update(progress: Any) -> None:
        bar.total = progress.total
        bar.n = progress.done
        bar.set_postfix(errors=progress.errors, retries=progress.retries, refresh=False)
        bar.refresh()

    try:
        return run_in_foreground(engine, run_id, on_progress=update, force=force)
    finally:
        bar.close()


def acting_user(engine: Any) -> Any:
    """The CLI's `Actor`: EVALCORE_USER or the OS user (single-user mode: may do
    everything; team mode: the role stored for that email)."""
    return cli_actor(engine, auth_config())
DEFAULT_MAX_ERROR_RATE = 0.1


def add_exit_flags(parser: Any) -> None:
    """`--max-error-rate` for the commands that execute a run (see `run_exit_code`)."""
    parser.add_argument(
        "--max-error-rate", type=bounded(0, 1), default=DEFAULT_MAX_ERROR_RATE, metavar="SHARE",
        help="exit with code 3 when more than this share of answer calls failed "
             f"(default {DEFAULT_MAX_ERROR_RATE}; 1 = never)")


def error_counts(engine: Any, run_id: int) -> tuple[int, int, int]:
    """(answer calls, answer calls with an error, of those the provider's refusals)."""
    return answer_error_counts(engine, run_id, REFUSAL)


def run_exit_code(engine: Any, run_id: int, status: str, max_error_rate: float) -> int:
    """0 when the run is done with at most `max_error_rate` of its answer calls failed;
    3 (with one line on stderr) when it failed or too many calls did; 130 if cancelled."""
    if status == "cancelled":
        return 130
    if status != "done":
        run = get_run(engine, run_id)
        print(f"error: run {run_id} {status}: {run.error or 'no error recorded'}",
              file=sys.stderr)
        return EXIT_RUN_FAILED
    calls, errors, refusals = error_counts(engine, run_id)
    share = errors / calls if calls else 0.0
    if share > max_error_rate:
        refused = f", {refusals} refused by the provider" if refusals else ""
        print(f"error: run {run_id}: {errors} of {calls} answer calls failed ({share:.0%}"
              f"{refused}), above --max-error-rate {max_error_rate:g}", file=sys.stderr)
        return EXIT_RUN_FAILED
    return EXIT_OK
