"""Run commands default to the embedded model: a first run needs no `--model`."""
from __future__ import annotations

import pytest

from evalcore.cli import build_parser
from evalcore.providers.registry import DEFAULT_MODEL


@pytest.mark.parametrize("argv", [
    ["stability", "--dataset", "d"],
    ["robustness", "--attack-set", "1"],
    ["fairness", "--suite", "s"],
])
def test_run_commands_use_the_embedded_model_unless_named(argv):
    assert build_parser().parse_args(argv).model == DEFAULT_MODEL == "local"
    assert build_parser().parse_args([*argv, "--model", "gpt"]).model == "gpt"


def test_the_help_says_which_model_runs_by_default(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["stability", "--help"])
    assert "default 'local', the embedded model" in " ".join(capsys.readouterr().out.split())


def test_the_top_level_help_loads_no_provider_code():
    import subprocess
    import sys

    code = ("import sys; from evalcore.cli import main\ntry:\n    main(['--help'])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith(('evalcore.providers', "
            "'aiohttp', 'sqlalchemy'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
