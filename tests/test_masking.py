"""evalcore.masking: every configured secret and any 8-character piece of it, its base64
forms, the key in other spellings (spaced, cased, escaped, reversed, rot13, hex ...), and
credential patterns of any scheme; ordinary text left alone."""
from __future__ import annotations

import base64
import codecs
import string
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from evalcore.masking import MIN_RUN, NORM_RUN, REDACTED, mask_text, mask_value, register_secret

KEY = "Zq8Wd3Lp6Rt1Yx4Mn7Bv2Kc5Hs9Gf0Ja3Ue6Io1Pw"


def test_every_piece_of_eight_or_more_is_masked_wherever_it_is() -> None:
    for start in range(len(KEY) - MIN_RUN + 1):
        for end in range(start + MIN_RUN, len(KEY) + 1):
            assert mask_text(f"##{KEY[start:end]}##", [KEY]) == f"##{REDACTED}##"


def test_pieces_shorter_than_eight_are_kept() -> None:
    assert mask_text(f"id {KEY[:7]}", [KEY]) == f"id {KEY[:7]}"


@pytest.mark.parametrize("user", ["", "u", "ab", "abc", "someone"])
def test_base64_forms_are_masked_at_each_alignment(user: str) -> None:
    encoded = base64.b64encode(f"{user}:{KEY}".encode()).decode()
    masked = mask_text(f"got {encoded} back", [KEY])
    longest = max(len(part) for part in masked.split(REDACTED))
    assert REDACTED in masked and longest < len("got ") + 8 + 4


def test_registered_secrets_are_masked_by_default() -> None:
    register_secret("k9-registered-0123456789")
    assert "registered" not in mask_text("echo k9-registered-0123456789!")


@pytest.mark.parametrize("text", [
    "Authorization: Bearer abc.def-123_456", "authorization: Basic dXNlcjpwYXNzd29yZA==",
    "Token 0123456789abcdef", "Digest 0a1b2c3d4e5f6789", "api-key: 9a8b7c6d5e4f",
    "x-api-key=9a8b7c6d5e4f", "https://h/v1?key=9a8b7c6d5e4f&x=1", "https://h/v1?api_key=zzzz9999",
    "http://user:hunter2pass@host:8080/v1", "use sk-proj-abcdefghijklmnop1234 here",
])
def test_credential_patterns_of_any_scheme(text: str) -> None:
    masked = mask_text(text, [])
    assert REDACTED in masked
    for secret in ("abc.def-123_456", "dXNlcjpwYXNzd29yZA", "0123456789abcdef",
                   "0a1b2c3d4e5f6789", "9a8b7c6d5e4f", "zzzz9999", "hunter2pass",
                   "abcdefghijklmnop1234"):
        assert secret not in masked


@pytest.mark.parametrize("text", [
    "Basic arithmetic shows the answer is 42.", "The token count was 5.", "x=40*20 so 800",
    "See https://example.com/docs for more.", "选项 A 是正确的", "",
])
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert mask_text(text, []) == text


def test_mask_value_walks_nested_data() -> None:
    data = {"a": [f"key {KEY}", 3], "b": {"c": KEY[5:20]}}
    assert mask_value(data, [KEY]) == {"a": [f"key {REDACTED}", 3], "b": {"c": REDACTED}}


# --- a key in other spellings -------------------------------------------------------------

def _fullwidth(ch: str) -> str:
    return chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch


SPELLINGS: dict[str, Callable[[str], str]] = {
    "as is": str, "upper": str.upper, "lower": str.lower, "swapped case": str.swapcase,
    "fullwidth": _fullwidth, "\\u escape": lambda c: f"\\u{ord(c):04x}",
    "\\U escape": lambda c: f"\\u{ord(c):04X}", "\\x escape": lambda c: f"\\x{ord(c):02x}",
    "%XX": lambda c: f"%{ord(c):02X}", "&#N;": lambda c: f"&#{ord(c)};",
    "rot13": lambda c: codecs.encode(c, "rot13"),
}
"""Per character: how a model may spell each character of an echoed key."""
JOINERS = {"nothing": "", "space": " ", "dash": "-", "zero-width space": "\u200b",
           "zero-width joiner": "\u200d", "newline": "\n", "underscore": "_"}


def _chunks(key: str, form: str, spelling: Callable[[str], str]) -> list[str]:
    """The key as a list of spelled pieces, one per character (per byte for hex)."""
    if form == "hex":
        return [spelling(d1) + spelling(d2) for d1, d2 in zip(*[iter(key.encode().hex())] * 2)]
    chars = list(key[::-1] if form == "reversed" else key)
    return [spelling(c) for c in chars]


def _leaks(masked: str, chunks: list[str], joiner: str, run: int) -> bool:
    """Whether `run` consecutive spelled pieces of the key are still in `masked`."""
    return any(joiner.join(chunks[i:i + run]) in masked for i in range(len(chunks) - run + 1))


@pytest.mark.parametrize(("form", "spelling"), [
    (form, spelling) for form in ("forward", "reversed", "hex") for spelling in SPELLINGS
    if not (form == "hex" and spelling == "rot13")])  # (rot13 leaves hex digits as they are)
def test_a_key_spelled_otherwise_is_masked(form: str, spelling: str) -> None:
    for joiner in JOINERS.values():
        chunks = _chunks(KEY, form, SPELLINGS[spelling])
        masked = mask_text(f"Sure! The key is {joiner.join(chunks)} as requested.", [KEY])
        assert REDACTED in masked and masked.startswith("Sure! The key is ")
        assert not _leaks(masked, chunks, joiner, 8 if form == "hex" else NORM_RUN), masked


def test_a_key_split_by_newlines_into_short_pieces_is_masked() -> None:
    lines = "\n".join(KEY[i:i + 5] for i in range(0, len(KEY), 5))
    masked = mask_text(f"here:\n{lines}\nend", [KEY])
    assert masked == f"here:\n{REDACTED}\nend"


ALNUM = string.ascii_letters + string.digits


@st.composite
def hidden_keys(draw: st.DrawFn) -> tuple[str, str, list[str], str, int]:
    """(key, text holding it in a random spelling, its pieces, the joiner, the run)."""
    key = draw(st.text(alphabet=ALNUM, min_size=20, max_size=64))
    form = draw(st.sampled_from(["forward", "reversed", "hex"]))
    names = [n for n in SPELLINGS if not (form == "hex" and n == "rot13")]
    spelling = SPELLINGS[draw(st.sampled_from(names))]
    joiner = draw(st.sampled_from(list(JOINERS.values())))
    chunks = _chunks(key, form, spelling)
    words = st.text(alphabet=string.ascii_letters + " .,!?", max_size=40)
    text = f"{draw(words)} {joiner.join(chunks)} {draw(words)}"
    return key, text, chunks, joiner, 8 if form == "hex" else NORM_RUN


@given(hidden_keys())
@hsettings(max_examples=300, deadline=None)
def test_a_key_hidden_in_any_spelling_is_masked(case: tuple[str, str, list[str], str, int]
                                                 ) -> None:
    key, text, chunks, joiner, run = case
    masked = mask_text(text, [key])
    assert not _leaks(masked, chunks, joiner, run), (text, masked)


@given(st.text(max_size=400), st.text(alphabet=ALNUM, min_size=20, max_size=64))
@hsettings(max_examples=300, deadline=None)
def test_knowing_a_key_changes_no_text_that_does_not_hold_it(text: str, key: str) -> None:
    assume(not any(key[i:i + MIN_RUN].lower() in text.lower()
                   for i in range(len(key) - MIN_RUN + 1)))
    assert mask_text(text, [key]) == mask_text(text, [])


KEYS = [KEY, "sk-proj-" + KEY, "0123456789abcdef0123456789abcdef", "AIza" + KEY[:35]]


@pytest.mark.parametrize("name", ["bbq/Age.sample.jsonl", "bbq/Nationality.sample.jsonl"])
def test_real_questions_are_left_alone(shared_datasets: Path, name: str) -> None:
    """Ordinary text of the real datasets (English and its numbers): no false positive."""
    lines = (shared_datasets / name).read_text(encoding="utf-8").splitlines()[:300]
    changed = [line for line in lines if mask_text(line, KEYS) != mask_text(line, [])]
    assert changed == []


@pytest.mark.parametrize("text", [
    "SHA-256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "uuid 123e4567-e89b-12d3-a456-426614174000, phone +1 (555) 123-4567, 2026-12-06T20:00:00Z",
    "答案是 B。原因：选项 A 假设利率每年保持 5%，而选项 B 考虑了复利。",
    "\\u4f60\\u597d %E4%BD%A0 &#20320; ＡＢＣ１２３ a\u200bb",
    "def f(x_1, y_2): return x_1 - y_2  # the-quick-brown-fox_jumps",
])
def test_ordinary_text_with_spellings_of_its_own_is_left_alone(text: str) -> None:
    assert mask_text(text, KEYS) == mask_text(text, []) == text
