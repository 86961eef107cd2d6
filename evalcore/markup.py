"""User-supplied text shown by a Streamlit element that renders Markdown, made inert.

`st.markdown`, `st.info`, `st.caption` ... render Markdown: a dataset name, a search
string, a model reply or an error message holding `![t](http://host/x.png)` would make
every viewer's browser fetch that URL, and `:red[...]`, `$...$` or `**` would restyle the
page. Pages pass every such value through `md` (or `code_text` inside a `code span`);
`tests/pages/test_markup_escaped.py` checks the pages for interpolations that do not.
No streamlit here, so the escaping is tested on its own.
"""
from __future__ import annotations

import re
from typing import Any

ALWAYS = frozenset("\\`*~[]<>$&!|{}#")
"""Escaped wherever they are: links and images (`[`, `]`, `!`, `<...>` autolinks),
emphasis and strike-through, code, math (`$`), HTML and entities, tables, headings.
A backslash-escaped ASCII punctuation character is always literal text in CommonMark."""
_AT_START = frozenset("-+=.>0123456789")
"""Could start a block (a list, a setext heading, a quote) when the value opens a line."""


def md(value: Any) -> str:
    """`value` as text Markdown shows exactly as written.

    Escapes the characters that start markup: ALWAYS everywhere, `_` and `*` emphasis at
    word edges, `:` before a word (`:smile:`, `:material/x:`, `:red[...]`), a block
    marker at the start. `_` inside a word (max_reply_bytes) and `:` before a space stay
    as they are: CommonMark reads them as text, and messages stay greppable.
    """
    text = " ".join(str(value).splitlines())
    numbered = re.match(r"\d{1,9}[.)]", text)  # "1. x" would start an ordered list
    marker = numbered.end() - 1 if numbered else -1
    out = []
    for i, ch in enumerate(text):
        before = text[i - 1] if i else " "
        after = text[i + 1] if i + 1 < len(text) else " "
        if (ch in ALWAYS
                or (ch == "_" and not (before.isalnum() and after.isalnum()))
                or (ch == ":" and (after.isalnum() or after in "/_"))
                or (i == 0 and ch in _AT_START and not ch.isdigit()) or i == marker):
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def code_text(value: Any) -> str:
    """`value` for the inside of an inline code span (`...`): escapes are not read there,
    so the one character that could end the span, the backtick, becomes a quote."""
    return " ".join(str(value).splitlines()).replace("`", "'")
