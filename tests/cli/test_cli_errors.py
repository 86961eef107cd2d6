"""The CLI's one error boundary: every bad setting is one line `error: ...`, exit code 2,
no traceback (and no password or key in it); `--debug` shows the traceback.

Every case runs through `cli.main` in this process (what `python -m evalcore` calls; a new
Python per case cost ~1 s of CPU): the handler, its exit code and its one line are the
same. A case per kind of failure also runs as a real `python -m evalcore` process, for
what only a process shows: the `__main__` wrapper's exit and flush, the paused collector,
imports made afresh, and anything a library prints to the real stderr."""
from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore import cli

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-harden-9f8e7d6c5b4a3210"
PG_PASSWORD = "pw-never-shown-42"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def evalcore(args: list[str], env: dict[str, str], *, stdin: str | None = None
             ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evalcore", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60, input=stdin)


def in_process(args: list[str], env: dict[str, str], monkeypatch: pytest.MonkeyPatch,
               capsys: pytest.CaptureFixture[str]) -> subprocess.CompletedProcess[str]:
    """`cli.main(args)` with exactly the EVALCORE_* variables of `env` (as the process
    gets them), stdout and stderr captured, argparse's SystemExit read as the exit code."""
    from evalcore.config import load_settings

    for name in [k for k in os.environ if k.startswith("EVALCORE_")]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        if name.startswith("EVALCORE_"):
            monkeypatch.setenv(name, value)
    capsys.readouterr()
    load_settings.cache_clear()
    try:
        code = cli.main(list(args))
    except SystemExit as exc:  # argparse's one-line usage errors, --help
        code = exc.code if isinstance(exc.code, int) else 2
    finally:
        load_settings.cache_clear()
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, out, err)


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture()
def base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALCORE_")}
    env["EVALCORE_HOME"] = str(home)
    return env


def _readonly_db(home: Path) -> str:
    """A migrated database opened read-only (root ignores file modes, so the URL says it)."""
    from evalcore.store.db import make_engine

    home.mkdir(parents=True, exist_ok=True)
    db = home / "evalcore.db"
    make_engine(f"sqlite:///{db}").dispose()  # migrated, as the CLI's first command does
    sqlite3.connect(db).execute("PRAGMA wal_checkpoint(TRUNCATE)").close()
    return f"sqlite:///file:{db}?mode=ro&uri=true"


MODEL = ["models", "add", "m", "--kind", "openai", "--model", "x"]
URL = ["--base-url", "http://127.0.0.1:9/v1"]
RUN = ["stability", "--dataset", "d", "--model", "local"]

CASES: dict[str, tuple[list[str], dict[str, str], str]] = {
    # id: (arguments, environment changes, a piece of the expected message)
    "db-url-not-a-url": (["runs", "list"], {"EVALCORE_DB_URL": "not a url"}, "EVALCORE_DB_URL"),
    "db-url-mysql": (["runs", "list"], {"EVALCORE_DB_URL": "mysql://u:p@h/d"}, "'mysql'"),
    "db-url-psycopg2": (["runs", "list"], {"EVALCORE_DB_URL": "postgresql+psycopg2://h/d"},
                        "psycopg2"),
    "postgres-down": (["runs", "list"], {"EVALCORE_DB_URL":
                      f"postgres://evalcore:{PG_PASSWORD}@127.0.0.1:{{port}}/evalcore"},
                      "127.0.0.1:{port}"),
    "home-is-a-file": (["runs", "list"], {"EVALCORE_HOME": "{file}"}, "EVALCORE_HOME"),
    "home-under-proc": (["runs", "list"], {"EVALCORE_HOME": "/proc/evalcore-x"},
                        "EVALCORE_HOME"),
    "read-only-db": (["datasets", "import", str(ROOT / "data/samples/math_zh_gbk.csv"),
                      "--name", "ro"], {"EVALCORE_DB_URL": "{readonly}"}, "read-only"),
    "models-toml-broken": (["models", "list"], {"EVALCORE_MODELS": "{broken_toml}"},
                           "not valid TOML"),
    "rounds-0": (RUN + ["--rounds", "0"], {}, "rounds"),
    "rounds-10000": (RUN + ["--rounds", "10000"], {}, "rounds"),
    "limit-minus-1": (RUN + ["--limit", "-1"], {}, "limit"),
    "limit-0": (RUN + ["--limit", "0"], {}, "limit"),
    "concurrency-0": (RUN + ["--concurrency", "0"], {}, "concurrency"),
    "concurrency-minus-5": (RUN + ["--concurrency", "-5"], {}, "concurrency"),
    "budget-0": (RUN + ["--budget", "0"], {}, "budget: Expected `float` > 0"),
    "concurrency-5000": (RUN + ["--concurrency", "5000"], {}, "concurrency: Expected `int` <= 1000"),
    "run-temperature-minus-3": (RUN + ["--temperature", "-3"], {}, "between 0 and 2"),
    "max-error-rate-2": (RUN + ["--max-error-rate", "2"], {}, "between 0 and 1"),
    "rounds-not-a-number": (RUN + ["--rounds", "many"], {}, "invalid int value"),
    "unknown-dataset": (RUN, {}, "'d'"),
    "base-url-no-scheme": (MODEL + ["--base-url", "127.0.0.1:9121/v1"], {}, "http://"),
    "base-url-garbage": (MODEL + ["--base-url", "ht!tp://::::"], {}, "base_url"),
    "base-url-userinfo": (MODEL + ["--base-url", f"http://u:{SECRET}@h/v1"], {},
                          "--api-key-env"),
    "base-url-key-param": (MODEL + ["--base-url", f"https://h/v1?api-key={SECRET}"], {},
                           "--api-key-env"),
    "temperature-minus-3": (MODEL + URL + ["--temperature", "-3"], {}, "temperature"),
    "top-p-1.5": (MODEL + URL + ["--top-p", "1.5"], {}, "top_p"),
    "max-tokens-0": (MODEL + URL + ["--max-tokens", "0"], {}, "max_tokens"),
    "deadline-0": (MODEL + URL + ["--deadline", "0"], {}, "deadline"),
    "max-reply-bytes-10": (MODEL + URL + ["--max-reply-bytes", "10"], {}, "max_reply_bytes"),
    "key-header-bad": (MODEL + URL + ["--api-key-header", "bad header!"], {}, "api_key_header"),
    "unknown-model": (["models", "test", "nope"], {}, "'nope'"),
    "unknown-flag": (["runs", "list", "--colour"], {}, "--colour"),
}


PROCESS_CASES = ("unknown-flag", "db-url-not-a-url", "postgres-down", "unknown-dataset")
"""One case per place a failure starts: argparse, the settings check, the database driver
(with a password in the URL), and a command after its module loaded."""


def _case_env(case: str, base_env: dict[str, str], home: Path, tmp_path: Path
              ) -> tuple[list[str], dict[str, str], str]:
    args, changes, expected = CASES[case]
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    broken = tmp_path / "models.toml"
    broken.write_text("[models.x\nkind = ")
    fill = {"port": str(_closed_port()), "file": str(a_file), "broken_toml": str(broken)}
    if "{readonly}" in changes.values():
        fill["readonly"] = _readonly_db(home)
    env = {**base_env, **{k: v.format(**fill) for k, v in changes.items()}}
    return args, env, expected.format(**fill)


def _assert_one_line(result: subprocess.CompletedProcess[str], expected: str) -> None:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert expected in lines[0], lines[0]
    assert "Traceback" not in result.stderr + result.stdout
    for secret in (SECRET, PG_PASSWORD):
        assert secret[:8] not in result.stderr + result.stdout


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_setting_is_one_line_exit_2(case: str, base_env: dict[str, str], home: Path,
                                        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    args, env, expected = _case_env(case, base_env, home, tmp_path)
    _assert_one_line(in_process(args, env, monkeypatch, capsys), expected)


@pytest.mark.parametrize("case", PROCESS_CASES)
def test_bad_setting_is_one_line_exit_2_from_a_process(case: str, base_env: dict[str, str],
                                                       home: Path, tmp_path: Path) -> None:
    args, env, expected = _case_env(case, base_env, home, tmp_path)
    _assert_one_line(evalcore(args, env), expected)


def test_debug_shows_the_traceback(base_env: dict[str, str], monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    result = in_process(["--debug", "runs", "list"], {**base_env, "EVALCORE_DB_URL": "not a url"},
                        monkeypatch, capsys)
    assert result.returncode == 2
    assert "Traceback" in result.stderr and result.stderr.strip().endswith(
        "(expected sqlite:///path/to/evalcore.db or postgresql://USER@HOST:5432/DBNAME)")


def test_broken_pipe_is_one_line(base_env: dict[str, str]) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "evalcore", "--help"], cwd=ROOT, env=base_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader went away (`| head -0`)
    err = proc.stderr.read().decode()
    proc.wait(30)
    assert "Traceback" not in err


def test_help_documents_exit_codes(base_env: dict[str, str], monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    result = in_process(["--help"], base_env, monkeypatch, capsys)
    assert result.returncode == 0
    assert "exit codes:" in result.stdout and "3    the run failed" in result.stdout
