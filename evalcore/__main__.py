import logging
import os
import sys

from evalcore.cli import main

if __name__ == "__main__":
    code = main(pause_gc=True)
    # Everything is stored and every file closed by now. Skip the interpreter's teardown
    # of SQLAlchemy, pydantic and aiohttp modules (~0.2 s, a tenth of a short CI run's
    # overhead): flush what is buffered and leave.
    logging.shutdown()
    try:
        sys.stdout.flush()
    except BrokenPipeError as exc:  # the reader left (`| head -1`) after the last write
        from evalcore.cli import report_error

        code = report_error(exc)
    sys.stderr.flush()
    os._exit(code)
