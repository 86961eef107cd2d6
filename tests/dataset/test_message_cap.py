"""The one way messages quote user content (`shown`, `shown_list`) and the bound on any
error line (`describe_error`)."""
from __future__ import annotations

from evalcore.error_text import MAX_LINE, describe_error, shown, shown_list
from evalcore.errors import DatasetError


def test_a_list_shows_ten_names_then_how_many_more() -> None:
    names = [f"column_{i}" for i in range(10_000)]
    text = shown_list(names)
    assert text.startswith("['column_0', 'column_1'") and text.endswith("'column_9'] and 9,990 more")
    assert shown_list(["a", "b"]) == "['a', 'b']"
    assert shown_list([]) == "[]"


def test_a_long_value_is_cut_with_its_length() -> None:
    assert shown("x" * 1_000_000) == repr("x" * 60) + "... (1,000,000 characters)"
    assert shown("line\nbreak") == "'line\\nbreak'"  # stays on one line
    assert len(shown_list(["h" * 1_000_000] * 20)) < 1200


def test_any_error_line_is_bounded_and_keeps_its_hint() -> None:
    line = describe_error(DatasetError("f.csv: " + "y" * 1_000_000 + " (do this)"))
    assert line is not None and len(line) <= MAX_LINE
    assert line.startswith("f.csv: yyy") and line.endswith("(do this)")
    assert "characters)..." in line
    short = describe_error(DatasetError("f.csv: fine (hint)"))
    assert short == "f.csv: fine (hint)"
