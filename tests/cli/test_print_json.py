"""`print_json` writes the text `json.dumps(indent=2)` would, faster (see its docstring)."""
from __future__ import annotations

import json
import math
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore.cli.common import print_json

_SCALARS = (st.none() | st.booleans() | st.integers() | st.text()
            | st.floats(allow_nan=False) | st.datetimes(timezones=st.just(UTC)))
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.text() | st.integers(), inner, max_size=4),
                       max_leaves=30)


def _expected(data) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n"


@given(_VALUES)
def test_print_json_writes_what_json_would(data) -> None:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_json(data)
    assert out.getvalue() == _expected(data)


@pytest.mark.parametrize("data", [{"a": math.nan, "b": [math.inf]},
                                  {"at": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), "é": "\u2028"}])
def test_print_json_nan_and_odd_values(data, capsys) -> None:
    print_json(data)
    assert capsys.readouterr().out == _expected(data)
