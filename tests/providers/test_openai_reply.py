"""An OpenAI-format reply is read by a typed decoder first (msgspec, straight from the
bytes); whatever it accepts must read exactly as the field-by-field path reads it, and
whatever it rejects falls to that path, so a hostile body gets the same answer or the
same error either way."""
from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.providers.openai import PROVIDER

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                    st.floats(allow_nan=False), st.text(max_size=8))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=6)
maybe = st.one_of(values, scalars)

messages = st.fixed_dictionaries({}, optional={"content": st.one_of(st.text(max_size=12),
                                                                      maybe),
                                               "refusal": maybe, "role": st.just("assistant")})
choices = st.fixed_dictionaries({}, optional={"message": st.one_of(messages, maybe),
                                              "finish_reason": st.one_of(
                                                  st.sampled_from(["stop", "length",
                                                                   "content_filter"]), maybe)})
usages = st.fixed_dictionaries({}, optional={"prompt_tokens": maybe,
                                             "completion_tokens": maybe})
replies = st.fixed_dictionaries({}, optional={
    "choices": st.one_of(st.lists(st.one_of(choices, maybe), max_size=2), maybe),
    "usage": st.one_of(usages, maybe), "id": maybe})


def outcome(parse, body: bytes) -> object:
    try:
        return parse(body)
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        return (type(exc).__name__, str(exc))


@settings(max_examples=400, deadline=None)
@given(st.one_of(replies, maybe))
def test_typed_and_field_by_field_reads_agree(data: object) -> None:
    body = json.dumps(data).encode()
    typed = outcome(lambda b: PROVIDER.parse_reply(None, b), body)  # type: ignore[arg-type]
    assert typed == outcome(PROVIDER._parse_any, body)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=40) | st.text(max_size=40).map(str.encode))
def test_bodies_that_are_not_json_get_the_same_error(body: bytes) -> None:
    typed = outcome(lambda b: PROVIDER.parse_reply(None, b), body)  # type: ignore[arg-type]
    assert typed == outcome(PROVIDER._parse_any, body)
