"""Fixtures the dataset tests share."""
from __future__ import annotations

import pytest

from evalcore import cli


@pytest.fixture()
def run(settings, monkeypatch, capsys):
    """Call `datasets ...` through the CLI; return (code, out, err)."""

    def call(*argv: str) -> tuple[int, str, str]:
        code = cli.main(["datasets", *argv])
        out, err = capsys.readouterr()
        return code, out, err

    return call
