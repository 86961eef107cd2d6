"""`evalcore.values`: outside data becomes a checked value type, and what was wrong is said
by field without echoing the value."""
from __future__ import annotations

from typing import Annotated, Literal, Optional

import msgspec
import pytest

from evalcore.error_text import describe_error
from evalcore.values import ValidationError, problem, validated


class Inner(msgspec.Struct, kw_only=True):
    language: Literal["zh", "en"] = "en"


class Outer(msgspec.Struct, kw_only=True):
    name: str
    kind: Literal["openai", "ollama", "local"] = "openai"
    schedule: Optional[Literal["question", "round"]] = None
    concurrency: Annotated[int, msgspec.Meta(ge=1, le=1000)] = 4
    inner: list[Inner] = msgspec.field(default_factory=list)
    url: str = ""

    def __post_init__(self) -> None:
        if self.url.startswith("ftp:"):
            raise ValueError("url must start with http:// or https://")


class Row:
    """A database row: fields as attributes."""

    name = "from-a-row"
    concurrency = "8"


def _problem(data: object) -> str:
    with pytest.raises(ValidationError) as caught:
        validated(Outer, data)
    return problem(caught.value, Outer)


def test_validated_is_lenient_on_types_and_reads_attributes() -> None:
    assert validated(Outer, {"name": "a", "concurrency": "5"}).concurrency == 5
    value = validated(Outer, Row())
    assert (value.name, value.concurrency, value.kind) == ("from-a-row", 8, "openai")


@pytest.mark.parametrize("data, text", [
    ({}, "name: required"),
    ({"name": "a", "concurrency": 0}, "concurrency: Expected `int` >= 1"),
    ({"name": "a", "concurrency": "many"}, "concurrency: Expected `int`, got `str`"),
    ({"name": "a", "kind": "sk-secret-value"}, "kind: must be one of 'openai', 'ollama', 'local'"),
    ({"name": "a", "schedule": "daily"}, "schedule: must be one of 'question', 'round'"),
    ({"name": "a", "inner": [{"language": "fr"}]}, "inner[0].language: must be one of 'zh', 'en'"),
    ({"name": "a", "url": "ftp://x"}, "url must start with http:// or https://"),
])
def test_problem_names_the_field_and_what_is_allowed(data: dict, text: str) -> None:
    assert _problem(data) == text


def test_a_wrong_allowed_value_is_never_echoed() -> None:
    assert "sk-secret-value" not in _problem({"name": "a", "kind": "sk-secret-value"})
    with pytest.raises(ValidationError) as caught:
        validated(Outer, {"name": "a", "kind": "sk-secret-value"})
    line = describe_error(caught.value) or ""
    assert line.startswith("invalid setting: kind: ") and "sk-secret-value" not in line


def test_the_constructor_runs_the_types_own_checks() -> None:
    with pytest.raises(ValueError, match="url must start"):
        Outer(name="a", url="ftp://x")


def test_fail_makes_the_callers_error_of_the_problem() -> None:
    """Each edge names its file, row or model: `fail` words the problem its way."""
    with pytest.raises(LookupError) as caught:
        validated(Outer, {"name": "a", "kind": "sk-secret-value"},
                  fail=lambda why: LookupError(f"models.toml [models.a]: {why}"))
    assert str(caught.value) == "models.toml [models.a]: kind: must be one of 'openai', 'ollama', 'local'"
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
