"""Two stability runs compare when one has failed rounds: its pass^k / pass@k at a k
beyond some question's answered rounds is None (no figure), and the side-by-side rows
say None there instead of failing."""
from __future__ import annotations

from evalcore.report.compare import compare_stability
from tests.fakes.stored_runs import seed_dataset, seed_run


def test_a_run_with_failed_rounds_compares(engine) -> None:
    ds = seed_dataset(engine, "errored", [f"What is {i} + {i}?" for i in range(6)])
    a = seed_run(engine, ds, {i: [1, 1, 0, 1] for i in range(6)}, rounds=4)
    b = seed_run(engine, ds, {i: [0, None, 0, i % 2] for i in range(6)}, rounds=4, model="m2")
    result = compare_stability(engine, a, b)
    rows = {row["k"]: row for row in result["pass_k"]}
    assert set(rows) == {1, 2, 3, 4}
    assert rows[1]["pass_hat_k_a"] is not None
    assert any(rows[k][f"{key}_b"] is None for k in rows for key in ("pass_hat_k", "pass_at_k"))
