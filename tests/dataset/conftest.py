"""Fixtures the dataset tests share."""
from __future__ import annotations

import pytest

from evalcore import cli


@pytest.fixture()
def run(settings, monkeypatch, capsys):
    """Call the CLI with only the datasets command registered; return (code, out, err)."""
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("datasets",))

    def call(*argv: str) -> tuple[int, str, str]:
        code = cli.main(["datasets", *argv])
        out, err = capsys.readouterr()
        return code, out, err

    return call
