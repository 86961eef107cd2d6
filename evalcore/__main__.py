import atexit
import os
import sys
import threading

from evalcore.cli import main, report_error


def _flushed(code: int) -> int:
    """`code`, or the broken pipe's when the reader left (`| head -1`) before the end."""
    try:
        sys.stdout.flush()
    except BrokenPipeError as exc:
        return report_error(exc)
    return code


def _exit(code: int) -> None:
    """End the process once its work is done, without the interpreter's teardown when
    nothing needs it: the exit handlers run (a local model server is stopped, logs are
    flushed), the database connections are closed (SQLite merges its write-ahead log as
    at a normal exit), the output is flushed, and `os._exit` skips freeing every module's
    objects one by one (SQLAlchemy's, pydantic's and aiohttp's: a noticeable part of a
    short command's CPU). With a thread still running, the normal exit waits for it."""
    if any(t.is_alive() and not t.daemon for t in threading.enumerate()
           if t is not threading.main_thread()):
        sys.exit(_flushed(code))
    atexit._run_exitfuncs()  # what the interpreter runs first at exit
    store = sys.modules.get("evalcore.store.db")  # (a command that opened no database)
    if store is not None:
        store.dispose_engines()
    code = _flushed(code)
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    _exit(main())
