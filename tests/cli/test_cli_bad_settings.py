"""Settings that used to be accepted without a word (issue 23): each bad value below is
one line `error: ...` naming what to fix, exit code 2, no traceback. The table is listed
in docs/hardening.md ("Bad settings refused")."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.cli import main

ROOT = Path(__file__).resolve().parents[2]
ADD = ["models", "add", "m", "--kind", "openai", "--model", "x"]
URL = ["--base-url", "http://127.0.0.1:9/v1"]
LIST = ["runs", "list"]

CASES: dict[str, tuple[list[str], dict[str, str], str]] = {
    # id: (arguments, environment, a piece of the expected message)
    "lease-0": (LIST, {"EVALCORE_LEASE_S": "0"}, "EVALCORE_LEASE_S=0 is out of range"),
    "lease-minus-1": (LIST, {"EVALCORE_LEASE_S": "-1"}, "EVALCORE_LEASE_S=-1 is out of range"),
    "lease-half-second": (LIST, {"EVALCORE_LEASE_S": "0.5"}, "use 2 to 3600"),
    "lease-nan": (LIST, {"EVALCORE_LEASE_S": "nan"}, "EVALCORE_LEASE_S=nan"),
    "lease-inf": (LIST, {"EVALCORE_LEASE_S": "inf"}, "EVALCORE_LEASE_S=inf"),
    "lease-a-day": (LIST, {"EVALCORE_LEASE_S": "86400"}, "use 2 to 3600"),
    "lease-words": (LIST, {"EVALCORE_LEASE_S": "fifteen"}, "not a number of seconds"),
    "lease-unit": (LIST, {"EVALCORE_LEASE_S": "15s"}, "not a number of seconds"),
    "embedded-maybe": (LIST, {"EVALCORE_EMBEDDED_WORKER": "maybe"}, "use 1 or 0"),
    "embedded-2": (LIST, {"EVALCORE_EMBEDDED_WORKER": "2"}, "EVALCORE_EMBEDDED_WORKER"),
    "embedded-disabled": (LIST, {"EVALCORE_EMBEDDED_WORKER": "disabled"}, "not a switch"),
    "worker-jobs-0": (LIST, {"EVALCORE_WORKER_JOBS": "0"}, "EVALCORE_WORKER_JOBS=0"),
    "worker-jobs-minus": (LIST, {"EVALCORE_WORKER_JOBS": "-3"}, "use 1 to 64"),
    "worker-jobs-1000": (LIST, {"EVALCORE_WORKER_JOBS": "1000"}, "use 1 to 64"),
    "worker-jobs-float": (LIST, {"EVALCORE_WORKER_JOBS": "2.5"}, "not a whole number"),
    "auth-ldap": (LIST, {"EVALCORE_AUTH": "ldap"}, "none, oidc, header"),
    "default-role-boss": (LIST, {"EVALCORE_DEFAULT_ROLE": "boss"}, "EVALCORE_DEFAULT_ROLE"),
    "default-role-worker": (LIST, {"EVALCORE_DEFAULT_ROLE": "worker"},
                            "EVALCORE_DEFAULT_ROLE"),
    "header-secret-short": (LIST, {"EVALCORE_AUTH": "header", "EVALCORE_HEADER_SECRET": "abc"},
                            "at least 16"),
    "user-header-space": (LIST, {"EVALCORE_USER_HEADER": "X Email"}, "EVALCORE_USER_HEADER"),
    "secret-header-colon": (LIST, {"EVALCORE_SECRET_HEADER": "X-Secret:"},
                            "not an HTTP header name"),
    "name-header-newline": (LIST, {"EVALCORE_NAME_HEADER": "X-User\nX-Evil"},
                            "EVALCORE_NAME_HEADER"),
    "db-port-99999": (LIST, {"EVALCORE_DB_URL": "postgresql://u@127.0.0.1:99999/d"},
                      "port 99999 is out of range"),
    "db-port-words": (LIST, {"EVALCORE_DB_URL": "postgresql://u@127.0.0.1:pg/d"},
                      "EVALCORE_DB_URL"),
    "model-name-traversal": (["models", "add", "bad name/../x", "--kind", "local"], {},
                             "not a valid model name"),
    "model-name-slash": (["models", "add", "a/b", "--kind", "local"], {},
                         "not a valid model name"),
    "model-name-dots": (["models", "add", "..", "--kind", "local"], {}, "no '..'"),
    "model-name-space": (["models", "add", "my model", "--kind", "local"], {},
                         "letters, digits and . _ : -"),
    "model-name-newline": (["models", "add", "a\nb", "--kind", "local"], {},
                           "not a valid model name"),
    "model-name-markdown": (["models", "add", "![x](http://h/x.png)", "--kind", "local"], {},
                            "not a valid model name"),
    "model-name-long": (["models", "add", "m" * 65, "--kind", "local"], {}, "at most 64"),
    "model-name-empty": (["models", "add", "", "--kind", "local"], {}, "not a valid model name"),
    "base-url-port-99999": (ADD + ["--base-url", "http://127.0.0.1:99999/v1"], {},
                            "port 99999 is out of range"),
    "base-url-port-0": (ADD + ["--base-url", "http://127.0.0.1:0/v1"], {},
                        "port 0 is out of range"),
    "base-url-port-words": (ADD + ["--base-url", "http://127.0.0.1:http/v1"], {},
                            "is not a number"),
    "base-url-ftp": (ADD + ["--base-url", "ftp://h/v1"], {}, "http://"),
    "concurrency-0": (ADD + URL + ["--concurrency", "0"], {}, "concurrency"),
    "concurrency-huge": (ADD + URL + ["--concurrency", "100000"], {}, "concurrency"),
    "rpm-minus": (ADD + URL + ["--rpm", "-1"], {}, "rpm"),
    "timeout-0": (ADD + URL + ["--timeout", "0"], {}, "timeout"),
    "rate-limit-wait-minus": (ADD + URL + ["--rate-limit-wait", "-1"], {}, "rate_limit_wait"),
    "price-in-minus": (ADD + URL + ["--price-in", "-1"], {}, "price_in"),
    "max-tokens-words": (ADD + URL + ["--max-tokens", "many"], {}, "invalid int value"),
    "kind-unknown": (["models", "add", "m", "--kind", "gpt"], {}, "--kind"),
    "openai-without-url": (ADD, {}, "needs base_url"),
    "worker-jobs-flag-0": (["worker", "--jobs", "0"], {}, "between 1 and 64"),
    "worker-kind-unknown": (["worker", "--kinds", "bogus"], {}, "unknown job kind"),
    "audit-limit-0": (["audit", "list", "--limit", "0"], {}, "between 1 and 100000"),
    "audit-since-words": (["audit", "list", "--since", "last tuesday"], {}, "30m, 12h, 7d"),
    "users-role-unknown": (["users", "add", "a@x.com", "--role", "boss"], {}, "valid roles"),
    "users-empty-email": (["users", "add", " ", "--role", "viewer"], {}, "an email is needed"),
}


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's one-line usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_the_table_is_wide() -> None:
    assert len(CASES) >= 40


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_setting_is_one_line_exit_2(case: str, settings, monkeypatch, capsys) -> None:
    from evalcore.config import load_settings

    args, env, expected = CASES[case]
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    load_settings.cache_clear()
    try:
        code, out, err = _run(args, capsys)
    finally:
        load_settings.cache_clear()
    lines = err.strip().splitlines()
    assert code == 2, (code, err)
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert expected in lines[0], lines[0]
    assert "Traceback" not in out + err
    assert not settings.models_path.exists()  # nothing was written


def test_lease_below_the_floor_is_refused_by_the_process(tmp_path: Path) -> None:
    """The same through `python -m evalcore` (the worker units' way), not only in-process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALCORE_")}
    env.update(EVALCORE_HOME=str(tmp_path / "home"), EVALCORE_LEASE_S="0")
    result = subprocess.run([sys.executable, "-m", "evalcore", "worker", "--once"], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.startswith("error: EVALCORE_LEASE_S=0 is out of range: use 2 to 3600")
    assert result.stderr.count("\n") == 1


def test_good_values_still_pass() -> None:
    from evalcore.config import check_environment, embedded_worker, lease_seconds, worker_jobs

    env = {"EVALCORE_LEASE_S": "2", "EVALCORE_EMBEDDED_WORKER": "Off",
           "EVALCORE_WORKER_JOBS": "4", "EVALCORE_AUTH": "header",
           "EVALCORE_HEADER_SECRET": "x" * 32, "EVALCORE_USER_HEADER": "X-Auth-Request-Email"}
    check_environment(env)
    assert lease_seconds(env) == 2.0 and embedded_worker(env) is False
    assert worker_jobs(env) == 4 and lease_seconds({}) == 15.0 and embedded_worker({}) is True
