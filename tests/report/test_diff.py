"""The review diff: what changed is marked, nothing from the text reaches HTML unescaped."""
from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from evalcore.report.diff import (
    DiffOp,
    attacked_html,
    diff_ops,
    escape_text,
    original_html,
    side_by_side_html,
    tokenize,
)

HOSTILE = [
    '<script>alert("x")</script>',
    '<img src=x onerror=alert(1)>',
    "a & b < c > d \"quoted\" 'single'",
    "价格是$5$，<b>粗体</b>\n\n**markdown** [link](javascript:alert(1))",
]
ALLOWED_TAGS = {"div", "span", "del", "ins", "br"}


class _Tags(HTMLParser):
    """Collects every tag and attribute the browser would build from the HTML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data):
        self.text.append(data)


def parse(markup: str) -> _Tags:
    parser = _Tags()
    parser.feed(markup)
    parser.close()
    return parser


def test_tokens_join_back_to_the_text_and_split_chinese_per_character():
    text = "张明有120元钱，买书 hello, world 3.5%\n"
    tokens = tokenize(text)
    assert "".join(tokens) == text
    assert tokens[:4] == ["张", "明", "有", "120"]
    assert "hello" in tokens and "3.5" in tokens and "\n" in tokens


def test_ops_rebuild_both_texts():
    a = "张明有120元钱，买书用去80%，买文具的钱是买书的15%．买文具用去多少元？"
    b = "张明有120元钱，买书用去80%，买日常用品的钱是买书的15%．卖文具用去多少元？"
    ops = diff_ops(a, b)
    assert "".join(op.old for op in ops) == a
    assert "".join(op.new for op in ops) == b
    changed = [(op.tag, op.old, op.new) for op in ops if op.tag != "equal"]
    assert changed == [("replace", "文具", "日常用品"), ("replace", "买", "卖")]


def test_character_insertion_inside_an_english_word_is_shown_as_one_insert():
    ops = diff_ops("My brother is good at math.", "My bro$ther is good at math. ~")
    inserted = [op.new for op in ops if op.tag == "insert"]
    assert inserted == ["$", " ~"]
    assert all(op.tag in ("equal", "insert") for op in ops)


def test_a_synonym_swap_stays_one_replacement():
    ops = diff_ops("I love it", "I adore it")
    assert [op for op in ops if op.tag != "equal"] == [DiffOp("replace", "love", "adore")]


def test_deletions_and_identical_and_empty_texts():
    assert [op.tag for op in diff_ops("a b c", "a c")].count("delete") == 1
    assert [op.tag for op in diff_ops("same", "same")] == ["equal"]
    assert diff_ops("", "") == []
    assert diff_ops("", "new") == [DiffOp("insert", "", "new")]


def test_side_by_side_marks_each_side():
    markup = side_by_side_html("The cat sat", "The dog sat down")
    tags = parse(markup)
    assert tags.tags.count("del") == 1 and tags.tags.count("ins") == 2
    assert re.search(r"<del[^>]*>cat</del>", markup)
    assert re.search(r"<ins[^>]*>dog</ins>", markup)
    assert re.search(r"<ins>\s*down</ins>", markup)


@pytest.mark.parametrize("hostile", HOSTILE)
@pytest.mark.parametrize("side", ["original", "attacked"])
def test_hostile_text_is_escaped_everywhere(hostile, side):
    clean = "A plain question?"
    original, attacked = (hostile, clean) if side == "original" else (clean, hostile)
    for markup in (side_by_side_html(original, attacked, labels=(hostile, "<b>x</b>")),
                   original_html(diff_ops(original, attacked)),
                   attacked_html(diff_ops(original, attacked))):
        parsed = parse(markup)
        assert set(parsed.tags) <= ALLOWED_TAGS, markup
        assert {name for name, _ in parsed.attrs} <= {"class"}, markup
        assert "<script" not in markup and "<img" not in markup
        assert "$" not in markup  # no Markdown math
        assert "\n" not in markup  # no Markdown block breaks
    # nothing is lost: the browser shows the hostile text verbatim
    shown = "".join(parse(side_by_side_html(original, attacked)).text)
    assert hostile.replace("\n", "") in shown


def test_escape_text_against_the_standard_library():
    import html

    for text in HOSTILE:
        assert html.unescape(escape_text(text).replace("<br>", "\n")) == text
