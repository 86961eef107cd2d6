"""Cost per call, per run and the estimate before a run."""
from __future__ import annotations

import pytest

from evalcore.metrics.cost import budget_exceeded, call_cost, estimate_cost, run_cost
from evalcore.providers.base import ModelConfig


def test_call_and_run_cost():
    assert call_cost(1_000_000, 500_000, 2.0, 8.0) == pytest.approx(2.0 + 4.0)
    assert call_cost(10, 10, None, 8.0) is None
    models = {"a": {"price_in": 1.0, "price_out": 2.0},
              "judge": ModelConfig(name="judge", price_in=0.5, price_out=0.5)}
    assert run_cost({"a": (1000, 2000), "judge": (4000, 0)}, models) == pytest.approx(
        (1000 * 1 + 2000 * 2 + 4000 * 0.5) / 1e6)
    assert run_cost({"a": (1000, 0), "b": (5, 5)}, models) is None  # b has no price
    assert run_cost({"a": (1000, 0), "b": (0, 0)}, models) == pytest.approx(1000 / 1e6)


def test_estimate_and_budget():
    est = estimate_cost([40, 80], 3, price_in=1.0, price_out=4.0, completion_tokens=100,
                        chars_per_token=4.0, prompt_overhead=0)
    assert est["calls"] == 6 and est["prompt_tokens"] == (10 + 20) * 3
    assert est["completion_tokens"] == 600
    assert est["cost"] == pytest.approx((90 * 1.0 + 600 * 4.0) / 1e6)
    judged = estimate_cost([40], 1, price_in=1.0, price_out=1.0, completion_tokens=10,
                           prompt_overhead=0, judge=(1.0, 1.0))
    assert judged["judge_cost"] == pytest.approx((20 + 32) / 1e6)
    assert estimate_cost([40], 1, price_in=None, price_out=1.0)["cost"] is None
    assert budget_exceeded(0.9, 0.2, 1.0) and not budget_exceeded(0.5, 0.2, 1.0)
    assert not budget_exceeded(None, 0.2, 1.0) and not budget_exceeded(5.0, 1.0, None)


def test_estimate_for_a_stored_dataset(engine):
    from evalcore.report.cost import estimate_run_cost
    from tests.fakes.stored_runs import seed_dataset

    seed_dataset(engine, "short", ["abcd" * 10, "xy" * 10])
    model = ModelConfig(name="m", price_in=1.0, price_out=2.0, max_tokens=100)
    est = estimate_run_cost(engine, "short", model, 2)
    assert est["prompt_tokens"] == ((40 // 4 + 40) + (20 // 4 + 40)) * 2
    assert est["completion_tokens"] == 100 * 2 * 2  # max_tokens caps the expected answer
    assert est["cost"] == pytest.approx((est["prompt_tokens"] + 2 * 400) / 1e6)
