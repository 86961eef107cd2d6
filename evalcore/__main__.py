import sys

from evalcore.cli import main, report_error

if __name__ == "__main__":
    code = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError as exc:  # the reader left (`| head -1`) after the last write
        code = report_error(exc)
    sys.exit(code)
