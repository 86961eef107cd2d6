"""A model that echoes its API key spelled otherwise (spaced, reversed, upper case, hex,
rot13, dashed, zero-width-joined, fullwidth, `\\u` escapes, %XX, split by newlines): no
spelling of the key reaches the database, its WAL, an export or `runs show`."""
from __future__ import annotations

import itertools

import pytest

from tests.fakes.fault_server import FaultConfig, FaultServer
from tests.runner.conftest import add_model, dataset  # noqa: F401  (fixtures)
from tests.test_masking import _chunks, _leaks

pytestmark = pytest.mark.integration

KEY = "Hq7Zt2Lm9Xc4Vb8Nw3Ks6Pd1Rf5Gy0Ju2Ei8Ao4Wt6Ys9Ul3Mz7Qx1Cv5Bn0Dk"
KEY_VAR = "EVALCORE_FORMS_CREDENTIAL"  # a name the environment scan does not pick up


def _fullwidth(ch: str) -> str:
    return chr(ord(ch) + 0xFEE0)


SPELLED = [  # (form, per-character spelling, joiner)
    ("forward", str, " "), ("reversed", str, ""), ("forward", str.upper, ""),
    ("forward", str.lower, "-"), ("hex", str, ""), ("forward", lambda c: c, "\u200d"),
    ("forward", _fullwidth, ""), ("forward", lambda c: f"\\u{ord(c):04x}", ""),
    ("forward", lambda c: f"%{ord(c):02X}", ""), ("forward", str, "\n"),
]


def _spelled(form: str, spelling, joiner: str) -> tuple[list[str], str]:  # noqa: ANN001
    chunks = _chunks(KEY, form, spelling)
    return chunks, joiner.join(chunks)


def test_no_spelling_of_an_echoed_key_is_stored_or_shown(settings, engine, dataset,  # noqa: F811
                                                          tmp_path, monkeypatch):
    from tests.conftest import cli_here

    monkeypatch.setenv(KEY_VAR, KEY)
    turns = itertools.cycle(SPELLED)

    def echo(prompt, schema):  # noqa: ANN001, ANN202
        return f"Answer: A. (my key is {_spelled(*next(turns))[1]} by the way)"

    with FaultServer(FaultConfig(responder=echo)) as server:
        add_model(settings, server, api_key_env=KEY_VAR)
        run = cli_here(settings, "stability", "--dataset", dataset, "--model", "fake",
                       "--rounds", "4", "--csv", str(tmp_path / "s.csv"))
        shown = cli_here(settings, "runs", "show", "1")
        exported = cli_here(settings, "runs", "export", "1", "--csv",
                            str(tmp_path / "calls.csv"))
    assert run.returncode == 0 and exported.returncode == 0, run.stderr + exported.stderr
    outputs = {"run": run.stdout + run.stderr, "runs show": shown.stdout + shown.stderr,
               "csv": (tmp_path / "s.csv").read_text(encoding="utf-8"),
               "calls csv": (tmp_path / "calls.csv").read_text(encoding="utf-8")}
    for path in settings.home.iterdir():  # the database, its WAL and shared memory
        if path.is_file():
            outputs[path.name] = path.read_bytes().decode("utf-8", "replace")
    assert any(name.endswith("-wal") for name in outputs)
    assert "my key is ***" in outputs["calls csv"]  # the replies were stored, masked
    leaked = {(name, form, joiner): text[:80] for name, text in outputs.items()
              for form, spelling, joiner in SPELLED
              if _leaks(text, _chunks(KEY, form, spelling), joiner, 8)}
    assert not leaked, leaked
