"""`preload`: a command's modules load before it starts, with the collector paused in
the CLI's own process."""
from __future__ import annotations

import gc
import importlib
import subprocess
import sys

import pytest

from evalcore.cli import build_parser, preload
from evalcore.cli.common import RUN_IMPORTS
from tests.conftest import REPO_ROOT


@pytest.mark.parametrize("argv", [
    ["stability", "--dataset", "d", "--model", "m"],
    ["robustness", "--attack-set", "1", "--model", "m"],
    ["fairness", "--suite", "s", "--model", "m"],
    ["runs", "resume", "1"],
])
def test_run_commands_preload_what_a_run_needs(argv):
    args = build_parser().parse_args(argv)
    assert set(RUN_IMPORTS) <= set(args.preload)
    for name in args.preload:
        importlib.import_module(name)  # every name is a real module


def test_other_commands_preload_nothing():
    assert getattr(build_parser().parse_args(["datasets", "list"]), "preload", ()) == ()


def test_preload_without_pause_leaves_the_collector_alone():
    frozen = gc.get_freeze_count()
    preload(["json"])
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen


def _printed_by(code: str) -> list[str]:
    """Run `code` in a fresh interpreter (freezing would leak into this test process)."""
    return subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, check=True,
                          capture_output=True, text=True).stdout.split()


def test_preload_with_pause_freezes_and_turns_the_collector_back_on():
    assert _printed_by(
        "import gc; from evalcore.cli import preload; "
        "before = gc.get_freeze_count(); preload(['evalcore.store.db'], pause_gc=True); "
        "print(gc.isenabled(), gc.get_freeze_count() > before)") == ["True", "True"]


def test_preload_turns_the_collector_back_on_when_an_import_fails():
    assert _printed_by(
        "import gc; from evalcore.cli import preload\n"
        "try:\n    preload(['no_such_module_x'], pause_gc=True)\n"
        "except ModuleNotFoundError:\n    print(gc.isenabled())") == ["True"]


def _commands(parser) -> set[str]:
    return set(parser._subparsers._group_actions[0].choices)


def test_a_known_command_builds_only_its_own_module():
    assert _commands(build_parser("stability")) == {"stability"}  # a kind's own (EvalKind.cli)
    assert _commands(build_parser("fairness")) == {"fairness"}
    assert _commands(build_parser("gate")) == {"gate"}


def test_anything_else_builds_every_command():
    everything = _commands(build_parser())
    assert {"stability", "gate", "attack", "attacks", "datasets"} <= everything
    assert _commands(build_parser("attack")) == everything  # a command named apart from its module
    assert _commands(build_parser("-h")) == everything
