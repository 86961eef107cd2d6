"""A few-shot prompt file (FSamples.json) handed in as a dataset says what it is."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.dataset import parse_dataset
from evalcore.dataset.prompt_file import is_prompt_file
from evalcore.errors import DatasetError

PROMPTS = {"codah": "\nLearn from the following sample.\nSample1: ...\nThe question is:",
           "math23k": "\n从下面的样本中学习.\nSample1: ...\n问题是："}


def test_a_prompt_file_is_named_as_one() -> None:
    data = json.dumps(PROMPTS, ensure_ascii=False, indent=4).encode("utf-8")
    with pytest.raises(DatasetError, match=r"^FSamples\.json: this is a few-shot prompt file"):
        parse_dataset(data, "FSamples.json")


@pytest.mark.parametrize("value", [{"data": [{"question": 1}]}, [], {"a": 1}, {}])
def test_other_json_is_not_a_prompt_file(value) -> None:
    assert not is_prompt_file(json.dumps(value).encode(), "x.json")


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_give_an_answer(data: bytes) -> None:
    assert is_prompt_file(data, "x.json") in (True, False)

