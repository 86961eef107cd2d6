"""A gate config is user input (a TOML file, the page's text box, a schedule's stored gate):
whatever it holds, `load_gate_config` gives a checked `GateConfig` or one `GateError` that
names the file; a verdict round-trips through the page's cache and the JSON it writes."""
from __future__ import annotations

import math
import pickle
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings, strategies as st

from evalcore.metrics.gate import (Check, GateConfig, GateError, evaluate_gate, gate_text,
                                   load_gate_config)

SCALARS = st.one_of(st.booleans(), st.integers(-10**9, 10**9), st.floats(),
                    st.text(max_size=12), st.sampled_from(["skip", "fail"]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6)
KEYS = st.one_of(st.sampled_from(["spd_max", "overall_min", "eod_max", "di_min", "missing",
                                  "parse_rate_min", "speed_max"]), st.text(max_size=12))
SECTION = st.one_of(st.dictionaries(KEYS, VALUES, max_size=4), VALUES)
RELATIVE = st.one_of(st.dictionaries(st.sampled_from(["max_regression", "min_delta", "x"]),
                                     VALUES, max_size=3), VALUES)
CONFIGS = st.dictionaries(st.sampled_from(["absolute", "relative", "abs"]),
                          st.one_of(SECTION, RELATIVE), max_size=3)


def _checked(config: GateConfig) -> None:
    assert config.missing in ("skip", "fail")
    for key, (metric, kind, limit) in config.absolute.items():
        assert isinstance(key, str) and kind in ("max", "min") and type(limit) is float
    assert config.max_regression is None or type(config.max_regression) is float
    assert type(config.min_delta) is float


@settings(max_examples=400, deadline=None)
@given(CONFIGS)
def test_any_parsed_config_is_checked_or_one_gate_error(data: dict[str, Any]) -> None:
    try:
        config = load_gate_config(data)
    except GateError as exc:
        assert str(exc).startswith("gate config: ") and "\n" not in str(exc).strip()
        return
    _checked(config)


@pytest.mark.parametrize("text, key", [
    ("absolute = 3\n", "[absolute]"),
    ("relative = \"x\"\n", "[relative]"),
    ("[absolute]\nspd_max = [1]\n", "[absolute] spd_max"),
    ("[relative]\nmin_delta = \"a\"\n", "[relative] min_delta"),
])
def test_a_gate_file_error_names_the_file_and_the_key(tmp_path: Path, text: str,
                                                      key: str) -> None:
    path = tmp_path / "gate.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(GateError) as caught:
        load_gate_config(path)
    assert str(caught.value).startswith(f"{path}: ") and key in str(caught.value)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from(["spd", "eod", "overall_score", "parse_rate"]),
                       st.one_of(st.none(), st.floats(-1e6, 1e6)), max_size=4))
def test_a_verdict_comes_back_from_the_pages_cache(metrics: dict[str, Any]) -> None:
    """The pages cache the `GateResult` itself (`st.cache_data` pickles it): the same
    verdict comes back, its checks `Check`s."""
    text = "[absolute]\nspd_max = 0.05\noverall_min = 70\n[relative]\nmax_regression = 0.1\n"
    result = evaluate_gate(metrics, text, {k: v for k, v in metrics.items() if v is not None})
    back = pickle.loads(pickle.dumps(result))
    assert back == result and all(isinstance(c, Check) for c in back.checks)
    assert back.failed() == result.failed()


def test_json_of_a_verdict_is_plain_data() -> None:
    result = evaluate_gate({"spd": 0.2}, "[absolute]\nspd_max = 0.05\n")
    data = msgspec.to_builtins(result)
    assert data["passed"] is False and data["checks"][0]["name"] == "spd_max"
    assert math.isclose(data["checks"][0]["value"], 0.2)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_any_uploaded_gate_file_is_text_or_one_gate_error_naming_it(data: bytes) -> None:
    """The page's upload box hands `gate_text` whatever bytes a person picked."""
    try:
        text = gate_text(data, "up.toml")
    except GateError as exc:
        assert str(exc).startswith("up.toml: not UTF-8 text (byte ")
        return
    assert text == data.decode("utf-8-sig")
