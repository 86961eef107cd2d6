"""Model settings from outside (models.toml, a form, CLI flags, a run's stored snapshot) are
checked by `validate_model` / `values.validated`: a Struct's constructor checks no types or
ranges, so every such door must go through them. A models.toml is hostile input."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings as hsettings, strategies as st

from evalcore.errors import ModelConfigError
from evalcore.providers.base import ChatReply, ChatRequest, ModelConfig
from evalcore.providers.registry import load_models, save_models, validate_model
from evalcore.runner.run import model_snapshot
from evalcore.values import ValidationError, validated

REMOTE = {"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
FIELDS = [f.name for f in msgspec.structs.fields(ModelConfig) if f.name != "name"]


@pytest.mark.parametrize("key, value", [
    ("concurrency", 0), ("concurrency", 1001), ("concurrency", "many"), ("concurrency", 2.5),
    ("rpm", -1), ("timeout", 0), ("temperature", 3), ("top_p", 1.5), ("max_tokens", 0),
    ("stop", ["a", "b", "c", "d", "e"]), ("stop", [1]), ("stop", "\n"),
    ("repeat_penalty", -0.1), ("max_attempts", 21), ("max_retry_wait", -1.0),
    ("rate_limit_wait", -1), ("deadline", 0), ("max_reply_bytes", 10),
    ("price_in", -0.5), ("price_out", float("nan")), ("supports_json_schema", "maybe"),
    ("n_ctx", "big"), ("seed", "x"), ("model", 5),
])
def test_a_wrong_type_or_range_is_an_error_naming_file_table_and_key(key: str, value: Any) -> None:
    """The plain constructor would take every one of these silently."""
    with pytest.raises(ModelConfigError) as info:
        validate_model({**REMOTE, key: value}, "bad", "/tmp/x/models.toml")
    message = str(info.value)
    assert message.startswith("/tmp/x/models.toml: [models.bad]: ")
    assert key in message


def test_a_wrong_kind_lists_the_kinds_and_never_echoes_the_value() -> None:
    with pytest.raises(ModelConfigError) as info:
        validate_model({"kind": "sk-live-0123456789"}, "k", "models.toml")
    message = str(info.value)
    assert "sk-live-0123456789" not in message
    assert message == ("models.toml: [models.k]: kind: must be one of 'anthropic', 'local', "
                       "'ollama', 'openai'")


def test_the_types_own_checks_keep_their_text() -> None:
    with pytest.raises(ModelConfigError, match=r"^models.toml: \[models.u\]: base_url must not "
                                               r"contain a user name or password"):
        validate_model({**REMOTE, "base_url": "http://u:pw@h/v1"}, "u", "models.toml")
    with pytest.raises(ModelConfigError, match=r"\[models.h\]: api_key_header must be a header"):
        validate_model({**REMOTE, "api_key_header": "a b"}, "h", "models.toml")


def test_numbers_as_text_are_read_leniently_as_before() -> None:
    config = validate_model({**REMOTE, "concurrency": "8", "timeout": "2.5", "seed": 3.0}, "n")
    assert (config.concurrency, config.timeout, config.seed) == (8, 2.5, 3)


SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2 ** 70), max_value=2 ** 70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30),
    st.sampled_from(["openai", "ollama", "local", "http://127.0.0.1:11434", "api-key", "4"]))
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=6),
                   st.dictionaries(st.text(max_size=5), SCALARS, max_size=3))


@hsettings(max_examples=300, deadline=None)
@given(entry=st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=8))
def test_any_table_is_a_valid_config_or_an_error_naming_the_table(entry: dict) -> None:
    """Whatever a models.toml (or the database's list) holds: a config every field of which
    is in range and of its type (it survives a strict re-check unchanged), or a
    ModelConfigError naming the file and the table; never another exception."""
    try:
        config = validate_model(entry, "m", "models.toml")
    except ModelConfigError as exc:
        assert str(exc).startswith("models.toml: [models.m]")
        return
    again = msgspec.convert(msgspec.to_builtins(config), ModelConfig, strict=True)
    assert again == config
    assert 1 <= config.concurrency <= 1000 and config.timeout > 0 and config.deadline > 0
    assert all(isinstance(s, str) for s in config.stop) and len(config.stop) <= 4


TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@st.composite
def remote_configs(draw: Any) -> ModelConfig:
    """Valid remote model settings (a `local` entry reads its answer defaults back, and a
    None temperature or max_tokens is not written: it reads back as the default)."""
    floats = lambda lo, hi=1e9: st.one_of(  # noqa: E731
        st.none(), st.floats(min_value=lo, max_value=hi, allow_nan=False))
    data = {
        **REMOTE, "kind": draw(st.sampled_from(["openai", "ollama"])), "model": draw(TEXT) or "m",
        "api_key_env": draw(st.from_regex(r"[A-Z_]{0,10}", fullmatch=True)),
        "concurrency": draw(st.integers(1, 1000)), "rpm": draw(st.integers(0, 10 ** 6)),
        "timeout": draw(st.floats(0.001, 1e6)), "temperature": draw(st.floats(0, 2)),
        "top_p": draw(floats(0, 1)), "max_tokens": draw(st.integers(1, 10 ** 6)),
        "seed": draw(st.none() | st.integers(-(2 ** 63), 2 ** 63 - 1)),
        "stop": draw(st.lists(TEXT, max_size=4)), "repeat_penalty": draw(floats(0, 2)),
        "price_in": draw(floats(0)), "price_out": draw(floats(0)),
        "max_attempts": draw(st.integers(1, 20)), "supports_json_schema": draw(st.booleans()),
        "max_reply_bytes": draw(st.integers(1024, 2 ** 40)),
    }
    return validated(ModelConfig, {**data, "name": "r"})


@hsettings(max_examples=60, deadline=None)
@given(config=remote_configs())
def test_saved_settings_read_back_equal(config: ModelConfig) -> None:
    """models.toml keeps what differs from the defaults and drops None (TOML has no null):
    every valid remote entry reads back as it was saved."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "models.toml"
        save_models(path, {"r": config})
        assert load_models(path)["r"] == config


@hsettings(max_examples=60, deadline=None)
@given(config=remote_configs())
def test_a_run_snapshot_is_json_and_reads_back_equal(config: ModelConfig) -> None:
    snapshot = model_snapshot(config)
    assert snapshot["stop"] is not config.stop  # a copy: the run's record is its own
    assert validated(ModelConfig, json.loads(json.dumps(snapshot))) == config


def test_a_stored_snapshot_out_of_range_is_refused() -> None:
    snapshot = {**model_snapshot(ModelConfig(name="m", **REMOTE)), "max_attempts": 0}
    with pytest.raises(ValidationError, match="max_attempts"):
        validated(ModelConfig, snapshot)


def test_trusted_construction_stays_a_plain_constructor() -> None:
    """The client builds a reply per call and the judges a request per answer: no
    validation pass there (the hot path), only fields."""
    reply = ChatReply(text="ok", latency_ms=1.5, prompt_tokens=3)
    assert reply.ok and (reply.attempts, reply.error) == (1, None)
    request = ChatRequest.user("q", system="s", max_tokens=4)
    assert request.messages == [{"role": "system", "content": "s"},
                                {"role": "user", "content": "q"}]
    assert request.max_tokens == 4 and request.temperature is None
