"""models.toml: defaults, round trip, validation messages, never a key on disk."""

from __future__ import annotations

import tomllib

import pytest

from evalcore.errors import ModelConfigError
from evalcore.providers.base import ModelConfig
from evalcore.providers.registry import (
    DEFAULT_MODEL,
    add_model,
    get_model,
    load_models,
    remove_model,
    save_models,
    update_model,
)


def test_missing_file_gives_local_default(tmp_path):
    models = load_models(tmp_path / "nope.toml")
    assert list(models) == [DEFAULT_MODEL] == ["local"]
    assert models["local"].kind == "local" and models["local"].api_key_env == ""


def test_round_trip_and_no_key_written(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_TEST_KEY", "sk-very-secret-value")
    path = tmp_path / "home" / "models.toml"
    remote = ModelConfig(
        name="gpt.mini",
        kind="openai",
        base_url="https://api.x/v1",
        model="gpt-4o-mini",
        api_key_env="MY_TEST_KEY",
        concurrency=8,
        rpm=500,
        temperature=0.0,
        seed=3,
    )
    add_model(path, remote)
    models = load_models(path)
    assert set(models) == {"local", "gpt.mini"}
    assert models["gpt.mini"] == remote
    assert models["gpt.mini"].api_key() == "sk-very-secret-value"
    text = path.read_text()
    assert "sk-very-secret-value" not in text and "MY_TEST_KEY" in text
    assert '[models."gpt.mini"]' in text or "[models.'gpt.mini']" in text
    assert not list(path.parent.glob("*.tmp"))  # atomic write left no temp file


def test_update_and_remove(tmp_path):
    path = tmp_path / "models.toml"
    add_model(path, ModelConfig(name="o", kind="ollama", base_url="http://h:11434", model="m"))
    updated = update_model(path, "o", concurrency=3, timeout=9.5, seed=4)
    assert updated.concurrency == 3 and get_model(path, "o").timeout == 9.5
    reverted = update_model(path, "o", seed=None, timeout=None)
    assert reverted.seed is None and reverted.timeout == ModelConfig(name="o").timeout
    assert reverted.concurrency == 3
    remove_model(path, "o")
    assert "o" not in load_models(path)
    with pytest.raises(ModelConfigError, match="already exists"):
        add_model(path, ModelConfig(name="local", kind="local"))


def test_get_model_error_names_model_file_and_choices(tmp_path):
    path = tmp_path / "models.toml"
    save_models(path, {"a": ModelConfig(name="a", kind="local")})
    with pytest.raises(ModelConfigError) as info:
        get_model(path, "ghost")
    message = str(info.value)
    assert "ghost" in message and str(path) in message and "a" in message


@pytest.mark.parametrize(
    "table, words",
    [
        (
            '[models.bad]\nkind = "openai"\nbase_url = "http://x/v1"\nmodel = "m"\nconcurrency = 0\n',
            ["bad", "concurrency"],
        ),
        ('[models.typo]\nkind = "local"\nconcurency = 4\n', ["typo", "concurency", "unknown"]),
        ('[models.leak]\nkind = "openai"\napi_key = "sk-1"\n', ["leak", "api_key_env"]),
        ('[models.nourl]\nkind = "openai"\nmodel = "m"\n', ["nourl", "base_url"]),
        ('[models.k]\nkind = "gemini"\n', ["k", "kind"]),
        ("models = [1, 2]\n", ["[models.NAME]"]),
        ("[models.x\n", ["not valid TOML"]),
    ],
)
def test_validation_errors_name_file_and_entry(tmp_path, table, words):
    path = tmp_path / "models.toml"
    path.write_text(table)
    with pytest.raises(ModelConfigError) as info:
        load_models(path)
    message = str(info.value)
    assert str(path) in message
    for word in words:
        assert word in message


def test_saved_file_is_plain_toml(tmp_path):
    path = tmp_path / "models.toml"
    save_models(path, {"local": ModelConfig(name="local", kind="local", threads=2)})
    data = tomllib.loads(path.read_text())
    assert data == {"models": {"local": {"kind": "local", "threads": 2}}}
