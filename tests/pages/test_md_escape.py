"""`md_escape`: any text (column names, file names) reads back as typed from Markdown."""
from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from pages._shared import MD_SPECIAL, md_escape


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_escaped_text_reads_back_as_typed_and_leaves_no_markup(text):
    escaped = md_escape(text)
    assert "\n" not in escaped and "\r" not in escaped
    assert _unescape(escaped) == " ".join(text.splitlines())
    # read left to right: a backslash always starts an escape pair, and no markup
    # character stands on its own
    pos = 0
    while pos < len(escaped):
        if escaped[pos] == "\\":
            assert MD_SPECIAL.fullmatch(escaped[pos + 1:pos + 2]), (text, escaped)
            pos += 2
            continue
        assert not MD_SPECIAL.fullmatch(escaped[pos]), (text, escaped, pos)
        pos += 1
