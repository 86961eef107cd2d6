"""Every value interpolated into an element that renders Markdown goes through the one
escape (`evalcore.markup.md`, `code_text` inside a code span), so user-supplied text
(dataset names, searches, replies, error messages) cannot fetch an image or restyle a page."""
from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import given, strategies as st

from evalcore.markup import ALWAYS, code_text, md

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "pages").glob("*.py")) + [ROOT / "streamlit_app.py"]
CALLS = {"markdown", "write", "info", "warning", "error", "success", "caption", "subheader",
         "header", "title", "toast"}
"""Streamlit calls whose text is rendered as Markdown."""
HELPERS = {"md", "code_text"}
NUMERIC = {"len", "int", "float", "round", "min", "max", "sum", "abs"}
_NUMBER_SPEC = re.compile(r".*[dfFeEgGn%xXbo]|.*[,_].*|.*%[a-zA-Z].*")
"""A number's format (`:.1%`, `:,`) or a date's (`:%Y-%m-%d`): digits and separators."""


def _spec(node: ast.FormattedValue) -> str:
    spec = node.format_spec
    if not isinstance(spec, ast.JoinedStr):
        return ""
    return "".join(str(v.value) for v in spec.values if isinstance(v, ast.Constant))


def safe(node: ast.FormattedValue) -> bool:
    """Escaped, or a number (a numeric format spec, or a count/arithmetic builtin)."""
    value = node.value
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Call):
        name = value.func.id if isinstance(value.func, ast.Name) else getattr(value.func,
                                                                               "attr", "")
        if name in HELPERS or name in NUMERIC:
            return True
    return bool(_spec(node)) and bool(_NUMBER_SPEC.fullmatch(_spec(node)))


TRUSTED = "# trusted markdown:"
"""A call whose line carries this comment (and why) shows evalcore's own Markdown."""


def needs_escape(tree: ast.AST, source: str = ""
                 ) -> Iterator[tuple[ast.Call, ast.FormattedValue, bool]]:
    """(call, interpolation, inside a code span) for each interpolation not escaped."""
    lines = source.splitlines()
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr in CALLS):
            continue
        if lines and TRUSTED in lines[call.end_lineno - 1]:
            continue
        for arg in [*call.args, *(k.value for k in call.keywords if k.arg == "body")]:
            for joined in ast.walk(arg):
                if not isinstance(joined, ast.JoinedStr):
                    continue
                ticks = 0
                for part in joined.values:
                    if isinstance(part, ast.Constant):
                        ticks += str(part.value).count("`")
                    elif isinstance(part, ast.FormattedValue) and not safe(part):
                        yield call, part, ticks % 2 == 1


def test_pages_interpolate_nothing_unescaped_into_markdown() -> None:
    found = []
    for path in PAGES:
        source = path.read_text(encoding="utf-8")
        for call, part, _ in needs_escape(ast.parse(source), source):
            found.append(f"{path.relative_to(ROOT)}:{part.lineno}: st.{call.func.attr}(... "
                         f"{{{ast.unparse(part.value)}}} ...): wrap it in _shared.md(...)")
    assert not found, "\n".join(found)


def test_the_check_finds_an_unescaped_interpolation() -> None:
    bad = ast.parse('st.info(f"No item of {name!r} contains `{search}` ({n:,})")')
    assert [(ast.unparse(p.value), code) for _, p, code in needs_escape(bad)] == [
        ("name", False), ("search", True)]
    good = ast.parse('st.info(f"{_shared.md(name)} `{_shared.code_text(s)}` {len(x)} {n:.1%}")')
    assert not list(needs_escape(good))


def _unescape(text: str) -> str:
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)


@given(st.text(max_size=200))
def test_md_keeps_the_text_and_leaves_no_markup(text: str) -> None:
    out = md(text)
    assert _unescape(out) == " ".join(text.splitlines())
    plain = re.sub(r"\\[!-/:-@\[-`{-~]", "", out)  # what is left outside escapes
    assert not set(plain) & ALWAYS
    assert "![" not in plain and "](" not in plain


@given(st.text(max_size=200))
def test_code_text_cannot_end_its_span(text: str) -> None:
    assert "`" not in code_text(text) and "\n" not in code_text(text)


@pytest.mark.parametrize("text,shown", [
    ("![t](http://127.0.0.1:9/s.png)", r"\!\[t\](http\://127.0.0.1\:9/s.png)"),
    (":red[big] :material/home:", r"\:red\[big\] \:material/home:"),
    ("max_reply_bytes: 10", "max_reply_bytes: 10"),
    ("1. first", r"1\. first"),
    ("- item", r"\- item"),
    ("$x$ **b**", r"\$x\$ \*\*b\*\*"),
])
def test_md_examples(text: str, shown: str) -> None:
    assert md(text) == shown
