"""Uploaded files are hostile input: whatever the bytes, a CSV/TSV/JSONL/JSON file is
imported or refused with `DatasetError`, never another exception, and what is accepted
can be stored (no NUL, no lone surrogate, no cell over the limit)."""
from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalcore.dataset import parse_dataset, read_table
from evalcore.errors import DatasetError

SUFFIXES = (".csv", ".tsv", ".txt", ".jsonl", ".json")
LIMIT = 1 << 20
FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

_TRICKY = st.sampled_from(['"', ",", ";", "\t", "\n", "\r", "\r\n", "\x00", "\ufeff", "é",
                           "题", "\u2028", "\\", "{", "}", "[", "]", ":", " ", "question",
                           "answer", "\udc80", "\ud83d", "ÿþ"])
_TEXT = st.lists(st.one_of(_TRICKY, st.text(max_size=8)), max_size=40).map("".join)
_ENCODED = st.tuples(_TEXT, st.sampled_from(["utf-8", "utf-16", "gb18030", "latin-1",
                                             "utf-16-le"])).map(
    lambda pair: pair[0].encode(pair[1], errors="surrogatepass")
    if pair[1].startswith("utf") else pair[0].encode(pair[1], errors="replace"))
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
    | st.sampled_from(["\ud800", "a\x00b", "\udfff x"]),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(["question", "answer", "q", "\x00", "\ud800", "x"]),
                      inner, max_size=4),
    max_leaves=30)


def _storable(data: bytes, filename: str) -> None:
    """Parse `data`; a refusal must be a DatasetError, an acceptance storable text."""
    try:
        parsed = parse_dataset(data, filename)
    except DatasetError as exc:
        assert str(exc) and "\n" not in " ".join(str(exc).split())
        return
    for question in parsed.questions:
        for text in (question.question, question.reference or "", *question.choices):
            assert "\x00" not in text
            assert len(text.encode("utf-8")) <= LIMIT  # raises on a lone surrogate


def _columns_or_refusal(data: bytes, filename: str) -> None:
    """The page's first call (`read_table`, for the column list)."""
    try:
        read_table(data, filename)
    except DatasetError:
        pass


@FUZZ
@given(data=st.binary(max_size=400), suffix=st.sampled_from(SUFFIXES))
def test_arbitrary_bytes_are_read_or_refused(data: bytes, suffix: str) -> None:
    _storable(data, "fuzz" + suffix)
    _columns_or_refusal(data, "fuzz" + suffix)


@FUZZ
@given(data=_ENCODED, suffix=st.sampled_from(SUFFIXES))
def test_text_full_of_quotes_separators_and_odd_characters(data: bytes, suffix: str) -> None:
    _storable(b"question,answer\n" + data, "fuzz" + suffix)
    _storable(data, "fuzz" + suffix)
    _columns_or_refusal(data, "fuzz" + suffix)


@FUZZ
@given(records=st.lists(_JSON, max_size=5), depth=st.integers(0, 2000))
def test_arbitrary_json_and_jsonl(records: list, depth: int) -> None:
    whole = json.dumps(records).encode("utf-8", errors="surrogatepass")
    _storable(whole, "fuzz.json")
    lines = "\n".join(json.dumps(r) for r in records).encode("utf-8", errors="surrogatepass")
    _storable(lines, "fuzz.jsonl")
    deep = '{"question": "q", "answer": ' + "[" * depth + "]" * depth + "}"
    _storable(deep.encode(), "deep.jsonl")
    _storable(("[" + deep + "]").encode(), "deep.json")


@FUZZ
@given(data=_ENCODED)
def test_what_is_accepted_is_stored(engine, data: bytes) -> None:
    """The last step too: an accepted file goes into the database without an error
    (SQLite here; `tests/store/test_store_dataset_cells.py` does NUL on PostgreSQL)."""
    from evalcore.dataset import import_dataset

    try:
        dataset = import_dataset(engine, b"question,answer\n" + data, filename="fuzz.csv",
                                 name=uuid.uuid4().hex, allow_duplicate=True)
    except DatasetError:
        return
    assert dataset.item_count >= 1


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_refusal_is_a_dataset_error_not_a_crash(suffix: str, tmp_path: Path) -> None:
    """A fixed sample of the worst inputs, so a failure shows without hypothesis."""
    for data in (b"\xff" * 64, b"\x00" * 64, b"[" * 100_000, b'"' * 1000, b"\xef\xbb\xbf",
                 "\ud800".encode("utf-8", "surrogatepass"), b'{"question": "\\ud800"}'):
        _storable(data, "worst" + suffix)
