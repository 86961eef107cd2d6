"""A provider that admits fewer calls than the model's concurrency (429 + Retry-After above
its cap): every call of a stability run is answered, none ends as an error.

Smaller than the bench's 1,000 calls at 200 ms (bench/stability_bench.py keeps the
efficiency targets); here 300 calls at 20 ms, with the model's default retry settings.
"""
from __future__ import annotations

import json

import pytest

from evalcore.cli import main
from tests.fakes.fault_server import FaultConfig, FaultServer
from tests.runner.conftest import QUESTIONS, add_model, dataset, right_for_odd  # noqa: F401

pytestmark = pytest.mark.integration

ROUNDS = 50  # 6 questions x 50 rounds = 300 calls


@pytest.mark.parametrize("cap, concurrency", [(8, 10), (40, 50)])
def test_capped_provider_loses_no_answer(settings, engine, dataset, tmp_path, cap, concurrency):
    config = FaultConfig(latency=0.02, cap=cap, retry_after=0.02, responder=right_for_odd)
    with FaultServer(config) as server:
        add_model(settings, server, concurrency=concurrency, max_retry_wait=120.0)
        out = tmp_path / "report.json"
        code = main(["stability", "--dataset", dataset, "--model", "fake", "--rounds",
                     str(ROUNDS), "--json", str(out)])
        stats = server.stats
    assert code == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    rounds = [r for q in report["stability_results"].values() for r in q["rounds"]]
    assert len(rounds) == len(QUESTIONS) * ROUNDS
    assert all(r["answer"] is not None for r in rounds)
    assert report["timing"]["errors"] == 0 and report["summary"]["errored_rounds"] == 0
    assert stats.outcomes["429"] > 0  # the cap was hit: the scenario tested something
    assert stats.max_in_flight <= cap
    # the answers are the fake's: odd items right in every round, even items never
    counts = {int(k): q["correct_count"] for k, q in report["stability_results"].items()}
    assert sorted(counts.values()) == [0, 0, 0, ROUNDS, ROUNDS, ROUNDS]
