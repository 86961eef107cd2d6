"""Cells a database cannot store (NUL, a lone surrogate) are refused by the import the
same way on SQLite and PostgreSQL, naming the row, and nothing is stored; PostgreSQL used
to refuse NUL with 'check EVALCORE_DB_URL' while SQLite stored it."""
from __future__ import annotations

import pytest

from evalcore.dataset import import_dataset, list_datasets
from evalcore.errors import DatasetError

BBQ_HEADER = "context,question,ans0,ans1,ans2,label,answer_info,additional_metadata\n"


@pytest.mark.parametrize(("filename", "data", "message"), [
    ("nul.csv", b"question,answer\nok,1\nbad\x00cell,2\n",
     ("nul.csv row 3, column 'question': the cell holds a NUL character (code 0) at "
      "character 4, which a database cannot store")),
    ("nul.jsonl", b'{"question": "ok", "answer": "1"}\n{"question": "x", "answer": "a\\u0000"}\n',
     "nul.jsonl line 2, column 'answer': the cell holds a NUL character"),
    ("surrogate.jsonl", b'{"question": "\\udc00", "answer": "1"}\n',
     ("surrogate.jsonl line 1, column 'question': the cell holds the invalid character "
      "U+DC00")),
])
def test_unstorable_cells_are_refused_alike_on_both_databases(store, filename: str, data: bytes,
                                                              message: str) -> None:
    with pytest.raises(DatasetError) as caught:
        import_dataset(store, data, filename=filename)
    assert message in str(caught.value)
    assert "EVALCORE_DB_URL" not in str(caught.value)
    assert list_datasets(store) == []


def test_a_nul_escaped_inside_nested_json_round_trips_on_both(store) -> None:
    """Not a NUL in a cell but the JSON text of one (kept as text by the reader, or
    decoded into BBQ's answer_info): stored and read back alike on both databases."""
    from evalcore.dataset import load_questions

    nested = b'{"question": "q", "answer": "1", "extra": {"k": "\\u0000"}}\n'
    dataset = import_dataset(store, nested, filename="nested_nul.jsonl")
    [question] = load_questions(store, dataset.id)
    assert question.meta["extra"] == '{"k": "\\u0000"}'
    bbq = (BBQ_HEADER + 'c,q,a,b,d,0,"{""k"": ""\\u0000""}",{}\n').encode()
    dataset = import_dataset(store, bbq, filename="escaped_nul.csv")
    [question] = load_questions(store, dataset.id)
    assert question.meta["answer_info"] == {"k": "\x00"}


def test_text_around_the_refused_characters_is_stored_exactly(store) -> None:
    data = '{"question": "smile \\ud83d\\ude00 tab\\t end", "answer": "é"}\n'.encode()
    dataset = import_dataset(store, data, filename="fine.jsonl")
    from evalcore.dataset import load_questions

    [question] = load_questions(store, dataset.id)
    assert (question.question, question.reference) == ("smile \U0001F600 tab\t end", "é")
