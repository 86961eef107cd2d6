"""evalcore.masking: every configured secret and any 8-character piece of it, its base64
forms, and credential patterns of any scheme; ordinary text left alone."""
from __future__ import annotations

import base64

import pytest

from evalcore.masking import MIN_RUN, REDACTED, mask_text, mask_value, register_secret

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
