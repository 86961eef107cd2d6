"""A run on the Anthropic provider, through the CLI from `models add` to `compare`,
against the local Messages API server: stored, scored and compared like any other."""
from __future__ import annotations

import json

import pytest

from tests.conftest import cli_here
from tests.fakes.anthropic_server import KEY, AnthropicServer
from tests.fakes.fault_server import FaultConfig, FaultServer
from tests.runner.conftest import add_model, dataset, right_for_odd  # noqa: F401  (fixture)

pytestmark = pytest.mark.integration


def test_an_anthropic_run_is_stored_scored_and_compared(settings, engine, dataset,
                                                        monkeypatch):
    from evalcore.store import queries

    monkeypatch.setenv("ANTHROPIC_TEST_KEY", KEY)
    with AnthropicServer(lambda text, system: right_for_odd(text, None),
                         script=["529", "429"]) as claude, \
            FaultServer(FaultConfig(responder=right_for_odd)) as other:
        added = cli_here(settings, "models", "add", "claude", "--kind", "anthropic",
                         "--base-url", claude.url, "--model", "claude-test",
                         "--api-key-env", "ANTHROPIC_TEST_KEY", "--max-tokens", "64")
        assert added.returncode == 0, added.stderr
        add_model(settings, other, "gpt")
        ids = []
        for model in ("claude", "gpt"):
            ran = cli_here(settings, "stability", "--dataset", dataset, "--model", model,
                           "--rounds", "2")
            assert ran.returncode == 0, ran.stderr
            ids.append(queries.list_runs(engine, limit=1)[0].id)
        sent = [r["body"] for r in claude.requests]
    assert len(sent) == 12 + 2  # 6 items x 2 rounds, one 529 and one 429 retried
    assert all(b["model"] == "claude-test" and b["max_tokens"] == 64 for b in sent)
    runs = {r.id: r for r in queries.list_runs(engine)}
    assert [(runs[i].model, runs[i].status, runs[i].done) for i in ids] == [
        ("claude", "done", 12), ("gpt", "done", 12)]
    compared = cli_here(settings, "compare", str(ids[0]), str(ids[1]), "--json")
    assert compared.returncode == 0, compared.stderr
    pair = json.loads(compared.stdout)["stability_pair"]
    assert (pair["a"]["model"], pair["b"]["model"]) == ("claude", "gpt")
    assert pair["a"]["mean"] == pair["b"]["mean"] == 0.5  # items 1, 3, 5 right on both
    assert pair["join"]["matched"] == 6
