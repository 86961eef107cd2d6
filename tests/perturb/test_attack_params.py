"""Attack parameter values are checked at the door: typed JSON is hostile input."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.errors import EvalcoreError
from evalcore.perturb.attack import LEVELS, PARAMS, resolve_params
from evalcore.perturb.char import CHAR_OPS
from evalcore.perturb.params import parse_params

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)


@pytest.mark.parametrize("level,params", [
    ("char", {"ops": ["explode"]}), ("char", {"ops": []}), ("char", {"ops": "insert"}),
    ("char", {"insertions": 0}), ("char", {"insertions": 1.5}), ("char", {"insertions": True}),
    ("word", {"replacements": -1}), ("word", {"min_similarity": 2}),
    ("word", {"min_similarity": "high"}), ("sentence", {"pivot": "klingon"}),
    ("sentence", {"threshold": -0.1}), ("sentence", {"similarity": "no"})])
def test_a_value_the_engine_cannot_use_is_refused_naming_key_and_allowed(level, params):
    key = next(iter(params))
    with pytest.raises(EvalcoreError, match=f"{key}=.* is not allowed; use ") as err:
        resolve_params(level, params)
    assert "\n" not in str(err.value)


def test_the_defaults_and_usual_values_pass():
    for level in LEVELS:
        assert resolve_params(level, None) == resolve_params(level, PARAMS[level])
    assert resolve_params("char", {"ops": list(CHAR_OPS), "insertions": 3})["insertions"] == 3
    assert resolve_params("sentence", {"pivot": "en", "threshold": 0.8, "similarity": False})


@settings(max_examples=200, deadline=None)
@given(level=st.sampled_from(LEVELS), value=JSON, key=st.sampled_from(
    ["ops", "insertions", "replacements", "min_similarity", "pivot", "threshold",
     "similarity"]))
def test_any_json_value_is_accepted_or_refused_in_one_line(level, value, key):
    try:
        resolve_params(level, {key: value})
    except EvalcoreError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=40) | JSON.map(json.dumps))
def test_typed_text_parses_to_an_object_or_one_line(text):
    try:
        assert isinstance(parse_params(text), dict)
    except EvalcoreError as exc:
        assert "\n" not in str(exc)
