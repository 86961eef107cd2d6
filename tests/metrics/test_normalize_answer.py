"""`normalize_answer` finds punctuation with one precomputed character class; it must fold
exactly as asking `unicodedata` about every character does, on any text."""
from __future__ import annotations

import sys
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.metrics.consistency import _punctuation, _punctuation_for, normalize_answer


def _by_character(text: str) -> str:
    """The definition: every character's Unicode category read one by one."""
    text = unicodedata.normalize("NFKC", text).casefold()
    out = []
    for i, ch in enumerate(text):
        if unicodedata.category(ch).startswith("P"):
            prev = text[i - 1] if i > 0 else ""
            nxt = text[i + 1] if i + 1 < len(text) else ""
            in_number = ch in {".", ","} and prev.isdigit() and nxt.isdigit()
            sign = ch in {"-", "+"} and nxt.isdigit() and not (prev.isalnum() or prev in {".", ","})
            out.append(ch if in_number or sign else " ")
        else:
            out.append(ch)
    return " ".join("".join(out).split())


def test_each_class_holds_every_punctuation_mark_below_its_end() -> None:
    every = {chr(c) for c in range(sys.maxunicode + 1)
             if unicodedata.category(chr(c)).startswith("P")} - {".", ",", "-"}  # by context
    for end in (0x80, 0x10000, 0x20000):
        pattern = _punctuation(end)
        assert {ch for ch in every if pattern.fullmatch(ch)} == {ch for ch in every
                                                                 if ord(ch) < end}
        # symbols, spaces, letters, digits are no punctuation
        assert not any(pattern.fullmatch(ch) for ch in "aZ09 \n\t中文١٢+=$^`|~<>\U0001F600")
    # the smallest class that covers the text
    assert _punctuation_for("abc") is _punctuation(0x80)
    assert _punctuation_for("中，") is _punctuation(0x10000)
    assert _punctuation_for("\U0001F600!") is _punctuation(0x20000)


TEXTY = st.text(alphabet=st.sampled_from(
    list("0123456789-+.,;:!?()[]\"' abcXYZ") + ["，", "。", "－", "＋", "１", "２", "、", "…",
                                                   "«", "»", "¿", "‐", "_", "·", "٫", "٣"]))


@settings(max_examples=300, deadline=None)
@given(st.one_of(TEXTY, st.text(), st.text(alphabet=st.characters(min_codepoint=0x10000,
                                                                   max_codepoint=0x1FFFF))))
def test_it_folds_as_reading_each_character_does(text: str) -> None:
    assert normalize_answer(text) == _by_character(text)


def test_numbers_and_signs_keep_their_marks() -> None:
    assert normalize_answer("The answer: -1,200.5!") == "the answer -1,200.5"
    assert normalize_answer("ＡＢＣ，１２３。") == "abc 123"
    assert normalize_answer("3-4") == "3 4"
