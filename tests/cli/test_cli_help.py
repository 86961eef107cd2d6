"""`python -m evalcore --help`: answered from `cli.COMMANDS` and the kind registry
(`EvalKind.cli_help`) without importing a command module, and word for word what the
command modules themselves register."""
from __future__ import annotations

import subprocess
import sys

import pytest

from evalcore import cli
from evalcore.kinds import all_kinds, register, unregister
from tests.conftest import REPO_ROOT


def test_the_help_table_says_what_the_command_modules_register():
    assert cli.help_parser().format_help() == cli.build_parser().format_help()


def test_each_command_names_the_module_that_registers_it():
    for command, (module, _text) in cli.COMMANDS.items():
        assert command in _choices(cli.build_parser(module))


def _choices(parser):
    return parser._subparsers._group_actions[0].choices


def test_every_module_command_is_in_the_table_or_the_kind_registry():
    kinds = {name for name, kind in all_kinds().items() if kind.cli is not None}
    assert kinds and not kinds & set(cli.COMMANDS)
    assert set(_choices(cli.build_parser())) == set(cli.COMMANDS) | kinds


def test_each_kind_registers_its_own_command_with_its_help_line():
    for name, kind in all_kinds().items():
        if kind.cli is not None:
            assert kind.cli_help
            assert set(_choices(cli.build_parser(name))) == {name}


def test_a_command_builds_only_its_own_module():
    assert set(_choices(cli.build_parser("gate"))) == {"gate"}
    assert set(_choices(cli.parser_for(["attack", "-h"]))) == {"attack", "attacks"}
    assert set(_choices(cli.parser_for(["stability"]))) == {"stability"}  # a kind's own
    assert set(_choices(cli.parser_for(["-h"]))) == set(_choices(cli.build_parser()))


def test_a_registered_kind_is_listed_in_the_help_without_a_table_entry():
    base = all_kinds()["stability"]

    def register_cli(sub):
        sub.add_parser("drift", help="how answers drift")

    register(base._replace(name="drift", cli=register_cli, cli_help="how answers drift",
                           order=999))
    try:
        assert "how answers drift" in cli.help_parser().format_help()
        assert cli.help_parser().format_help() == cli.build_parser().format_help()
        assert set(_choices(cli.parser_for(["drift"]))) == {"drift"}
    finally:
        unregister("drift")


@pytest.mark.parametrize("argv", [["--help"], ["-h"], []])
def test_the_top_level_help_imports_no_command_module(argv):
    code = ("import sys, json\nfrom evalcore.cli import main\ntry:\n    main(%r)\n"
            "except SystemExit:\n    pass\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('evalcore.cli.') "
            "or m.split('.')[0] in ('sqlalchemy', 'aiohttp', 'pandas'))))" % argv)
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, check=True,
                         capture_output=True, text=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_a_mistyped_command_exits_2_with_the_choices(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["stabilty", "--dataset", "d"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: argument COMMAND: invalid choice: 'stabilty'")
    assert "'stability'" in err
