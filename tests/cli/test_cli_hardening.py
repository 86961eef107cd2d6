"""CLI runs against a misbehaving endpoint (the fault server of `tests/fakes/`): no piece
of a key anywhere, a bounded cost per call, exit code 3 when calls fail.

The runs whose stderr and DEBUG log are searched for the key run in a process of their
own (`cli`); the commands whose printed output is the claim call `cli.main` in this process
(`main_out`: a new Python per call cost ~1 s of CPU)."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import text

from tests.fakes.fault_server import FaultConfig, FaultServer
from tests.runner.conftest import add_model, dataset  # noqa: F401  (fixtures)

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-proj-Hq7Zt2Lm9Xc4Vb8Nw3Ks6Pd1Rf5Gy0Ju2Ei8Ao4Wt6Ys9Ul3Mz7Qx1Cv5Bn0Dk"
KEY_VAR = "EVALCORE_HARDEN_CREDENTIAL"  # a name the environment scan does not pick up
LOGGED_MAIN = ("import logging, sys; logging.basicConfig(level=logging.DEBUG); "
               "from evalcore.cli import main; sys.exit(main(sys.argv[1:]))")


def cli(settings, *args: str, key: bool = True) -> subprocess.CompletedProcess[str]:
    """The CLI in its own process with DEBUG logging on stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALCORE_")}
    env["EVALCORE_HOME"] = str(settings.home)
    if key:
        env[KEY_VAR] = KEY
    return subprocess.run([sys.executable, "-c", LOGGED_MAIN, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def main_out(capsys: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess[str]:
    """`cli.main(args)` in this process, its printed stdout and stderr captured."""
    from evalcore.cli import main

    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, out, err)


def key_pieces(size: int = 8) -> list[str]:
    return [KEY[i:i + size] for i in range(len(KEY) - size + 1)]


def leaks(data: bytes | str) -> list[str]:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return [p for p in key_pieces() if p.encode() in data]


@pytest.mark.parametrize("mode", ["echo", "basic"])
def test_echoed_key_leaves_no_piece_anywhere(settings, engine, dataset, tmp_path, mode,  # noqa: F811
                                             monkeypatch, capsys):
    monkeypatch.setenv(KEY_VAR, KEY)  # for the in-process commands, as `cli` sets it
    with FaultServer(FaultConfig(mode=mode)) as server:
        add_model(settings, server, api_key_env=KEY_VAR, concurrency=8)
        out_json, out_csv = tmp_path / "s.json", tmp_path / "s.csv"
        run = cli(settings, "stability", "--dataset", dataset, "--model", "fake",
                  "--rounds", "67", "--json", str(out_json), "--csv", str(out_csv))
        shown = main_out(capsys, "runs", "show", "1", "--json")
        tested = main_out(capsys, "models", "test", "fake", "--json")
        listed = main_out(capsys, "models", "list", "--json")
        calls_json, calls_csv = tmp_path / "calls.json", tmp_path / "calls.csv"
        exported = main_out(capsys, "runs", "export", "1", "--json", str(calls_json),
                            "--csv", str(calls_csv))
        requests = server.stats.requests
    assert run.returncode == 3, run.stderr[-2000:]  # every call failed
    assert requests >= 402  # 6 questions x 67 rounds: every filler length 0..400 was sent
    with engine.connect() as conn:
        errors = [row[0] for row in conn.execute(text("SELECT error FROM call"))]
    assert len(errors) == 402 and all(e.startswith("HTTP 401: ") for e in errors)
    assert max(len(e) for e in errors) > 280  # the 300-character cut fell on the key
    outputs = {"run stdout": run.stdout, "run stderr and log": run.stderr,
               "runs show": shown.stdout + shown.stderr, "models test": tested.stdout,
               "models list": listed.stdout, "json export": out_json.read_bytes(),
               "csv export": out_csv.read_bytes(), "runs export": exported.stdout,
               "calls json": calls_json.read_bytes(), "calls csv": calls_csv.read_bytes()}
    for path in settings.home.iterdir():  # the database, its WAL and shared memory
        outputs[path.name] = path.read_bytes()
    assert any(name.endswith("-wal") for name in outputs)
    leaked = {name: leaks(data) for name, data in outputs.items() if leaks(data)}
    assert not leaked, leaked
    assert "DEBUG" in run.stderr  # the log really was captured


def test_hanging_endpoint_ends_within_the_deadline(settings, engine, dataset, capsys):  # noqa: F811
    with FaultServer(FaultConfig(mode="hang", hang=60.0)) as server:
        add_model(settings, server, timeout=1.0, deadline=2.5, concurrency=10,
                  max_retry_wait=120.0)  # several attempts fit in the deadline, none ends it
        started = time.perf_counter()
        run = main_out(capsys, "stability", "--dataset", dataset, "--model", "fake",
                       "--rounds", "2", "--limit", "5")
        wall = time.perf_counter() - started
    assert run.returncode == 3, run.stderr[-2000:]
    assert wall <= 12.5, wall  # the deadline + 10 s of slack for a loaded machine
    with engine.connect() as conn:
        errors = [row[0] for row in conn.execute(
            text("SELECT error FROM call WHERE stage = 'answer'"))]
    assert len(errors) == 10
    assert all(e and e.startswith("deadline of 2.5s passed") for e in errors), errors


def test_too_many_errors_exit_3_with_one_line(settings, engine, dataset, capsys):  # noqa: F811
    script = ["404"] * 3  # 3 of 12 calls fail (25% > 10%), the rest answer
    with FaultServer(FaultConfig(script=script)) as server:
        add_model(settings, server, concurrency=1)
        run = main_out(capsys, "stability", "--dataset", dataset, "--model", "fake",
                       "--rounds", "2")
        lenient = main_out(capsys, "runs", "show", "1")
    assert run.returncode == 3, run.stderr[-2000:]
    line = [x for x in run.stderr.splitlines() if x.startswith("error: ")]
    assert line == ["error: run 1: 3 of 12 answer calls failed (25%), above --max-error-rate 0.1"]
    assert lenient.returncode == 0


def test_error_share_under_the_threshold_exits_0(settings, engine, dataset, capsys):  # noqa: F811
    with FaultServer(FaultConfig(script=["404"])) as server:
        add_model(settings, server, concurrency=1)
        run = main_out(capsys, "stability", "--dataset", dataset, "--model", "fake",
                       "--rounds", "2", "--max-error-rate", "0.5",
                       "--json", str(settings.home / "r.json"))
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads((settings.home / "r.json").read_text(encoding="utf-8"))
    assert report["timing"]["errors"] == 1


def test_runs_export_streams_json_and_csv(settings, engine, dataset, tmp_path):  # noqa: F811
    from evalcore.cli import main

    with FaultServer(FaultConfig()) as server:
        add_model(settings, server)
        assert main(["stability", "--dataset", dataset, "--model", "fake", "--rounds", "3"]) == 0
    out_json, out_csv = tmp_path / "calls.json", tmp_path / "calls.csv"
    assert main(["runs", "export", "1", "--json", str(out_json), "--csv", str(out_csv)]) == 0
    data = json.loads(out_json.read_text(encoding="utf-8"))
    assert data["run"]["id"] == 1 and len(data["calls"]) == 18
    assert [c["round"] for c in data["calls"][:3]] == [1, 2, 3]
    assert data["calls"][0]["question"].startswith("Tom has 3 apples")
    with out_csv.open(encoding="utf-8-sig", newline="") as fh:
        assert len(list(csv.reader(fh))) == 19
