"""One failing report section never takes the whole report.

A report is drawn section by section (cards, figures, tables, exports; the CLI's summary
lines). Model output reaches every one of them, so a reply nobody foresaw may still break
one: the section then becomes one line naming itself and the run ("Could not draw the
histogram of run 7: InvalidOperation ..."), its traceback goes to the log, and the other
sections are drawn. The pages use it through `pages._shared.section`, the CLI through
`cli_section`. Bugs stay visible (the line and the log), they just stop being fatal.
"""
from __future__ import annotations

import logging
import sys
from contextlib import contextmanager
from typing import Callable, ContextManager, Iterator, Sequence, Union

log = logging.getLogger("evalcore.report")
MAX_DETAIL = 200
"""Characters of the exception's message kept in the line (the log has all of it)."""


RunIds = Union[int, Sequence[int], None]
"""The run a section belongs to, the runs of a comparison, or None."""


def failure_line(section: str, run_id: RunIds, exc: BaseException, verb: str = "draw") -> str:
    """"Could not draw the histogram of run 7: InvalidOperation <first line of message>"
    ("of runs 3, 5" for a comparison)."""
    if run_id is None:
        where = ""
    elif isinstance(run_id, int):
        where = f" of run {run_id}"
    else:
        where = f" of runs {', '.join(map(str, run_id))}"
    detail = (str(exc).strip().splitlines() or [""])[0][:MAX_DETAIL]
    return f"Could not {verb} the {section}{where}: {type(exc).__name__} {detail}".rstrip()


@contextmanager
def guarded_section(section: str, run_id: RunIds, say: Callable[[str], None],
                    verb: str = "draw", level: int = logging.ERROR) -> Iterator[None]:
    """Run the `with` body; an exception is logged with its traceback (at `level`) and
    `say` gets the one line instead. Only `Exception`: Streamlit's rerun/stop
    (BaseException) pass."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - the point: the rest of the report still draws
        log.log(level, "report section %r of run %s failed", section, run_id, exc_info=True)
        say(failure_line(section, run_id, exc, verb))


def to_stderr(line: str) -> None:
    """One `error: ...` line on stderr (the CLI's form for a failed section)."""
    print(f"error: {line}", file=sys.stderr, flush=True)


def cli_section(section: str, run_id: RunIds) -> ContextManager[None]:
    """`guarded_section` for the CLI's printed reports: the line goes to stderr, the rest
    of the report is printed and the exit code stays the run's. The traceback is logged
    at DEBUG, so the terminal shows the one line, not a traceback."""
    return guarded_section(section, run_id, to_stderr, verb="print", level=logging.DEBUG)
