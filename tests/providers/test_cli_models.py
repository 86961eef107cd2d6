"""`models add|list|test|remove` through the sub-command's own parser."""

from __future__ import annotations

import argparse
import json

import pytest

from evalcore.cli import models as models_cli
from evalcore.errors import ModelConfigError
from evalcore.providers.registry import load_models


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    models_cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_add_list_remove(settings, capsys, monkeypatch):
    monkeypatch.setenv("CLI_TEST_KEY", "sk-cli-secret")
    assert (
        run(
            [
                "models",
                "add",
                "remote",
                "--kind",
                "openai",
                "--base-url",
                "http://h/v1",
                "--model",
                "m1",
                "--api-key-env",
                "CLI_TEST_KEY",
                "--concurrency",
                "3",
                "--rpm",
                "120",
                "--rate-limit-wait",
                "900",
                "--temperature",
                "0",
            ]
        )
        == 0
    )
    models = load_models(settings.models_path)
    assert set(models) == {"local", "remote"}
    assert models["remote"].rpm == 120 and models["remote"].temperature == 0.0
    assert models["remote"].rate_limit_wait == 900.0
    assert "sk-cli-secret" not in settings.models_path.read_text()
    capsys.readouterr()
    assert run(["models", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [m["name"] for m in listed] == ["local", "remote"]
    assert run(["models", "list"]) == 0
    assert "local (default)" in capsys.readouterr().out
    assert run(["models", "remove", "remote"]) == 0
    assert set(load_models(settings.models_path)) == {"local"}


def test_add_rejects_a_key_and_bad_entries(settings):
    with pytest.raises(ModelConfigError, match="NAME of an environment variable"):
        run(
            [
                "models",
                "add",
                "x",
                "--kind",
                "openai",
                "--base-url",
                "http://h/v1",
                "--model",
                "m",
                "--api-key-env",
                "sk-abcdef",
            ]
        )
    with pytest.raises(ModelConfigError, match="base_url"):
        run(["models", "add", "y", "--kind", "ollama", "--model", "m"])
    assert not settings.models_path.exists()


@pytest.mark.integration
def test_models_test_against_fault_server(settings, capsys):
    from tests.fakes.fault_server import FaultConfig, FaultServer

    with FaultServer(FaultConfig()) as server:
        run(
            [
                "models",
                "add",
                "fake",
                "--kind",
                "openai",
                "--base-url",
                server.openai_url,
                "--model",
                "f",
            ]
        )
        capsys.readouterr()
        assert run(["models", "test", "fake", "--json"]) == 0
        result = json.loads(capsys.readouterr().out)
        assert result["ok"] and result["text"] == "The answer is 42." and result["latency_ms"] > 0
        server.reconfigure(error_rate=1.0)
        assert run(["models", "test", "fake"]) == 1
        assert "HTTP 500" in capsys.readouterr().err
    with pytest.raises(ModelConfigError, match="ghost"):
        run(["models", "test", "ghost"])


def test_add_with_prices_for_cost_figures(settings):
    assert run(["models", "add", "priced", "--kind", "openai", "--base-url", "http://h/v1",
                "--model", "m", "--price-in", "0.15", "--price-out", "0.6"]) == 0
    priced = load_models(settings.models_path)["priced"]
    assert (priced.price_in, priced.price_out) == (0.15, 0.6)
    with pytest.raises((ModelConfigError, SystemExit)):
        run(["models", "add", "bad", "--kind", "openai", "--base-url", "http://h/v1",
             "--model", "m", "--price-in", "-1"])


@pytest.mark.parametrize("flag, value, key", [
    ("--concurrency", "0", "concurrency"), ("--top-p", "1.5", "top_p"),
    ("--max-reply-bytes", "10", "max_reply_bytes"), ("--price-in", "-1", "price_in"),
    ("--api-key-header", "a b", "api_key_header")])
def test_add_out_of_range_flag_is_one_line_naming_model_and_key(settings, flag, value, key):
    """Flags become a model through `validate_model`, never the plain constructor: an
    out-of-range value is `error: <file>: [models.NAME]: <key>...`, exit 2, nothing written."""
    from tests.conftest import cli_here

    done = cli_here(settings, "models", "add", "flagged", "--kind", "openai", "--base-url",
                    "http://127.0.0.1:9/v1", "--model", "m", flag, value)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert f"[models.flagged]: {key}" in lines[0] and str(settings.models_path) in lines[0]
    assert "flagged" not in load_models(settings.models_path)
