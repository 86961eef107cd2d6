"""A relative gate that can say "inconclusive": a planted regression too small for the
run's size is neither passed nor failed, and names the questions that would tell; a
large one fails; none passes. Through the CLI (exit codes), the verdict line the pages
show and the reason alerts carry."""
from __future__ import annotations

import json
from itertools import count

import numpy as np
import pytest

from evalcore.cli import main
from evalcore.metrics.gate import evaluate_gate, load_gate_config
from evalcore.metrics.uncertainty import paired_difference
from evalcore.report.gates import gate_any, gate_reason, verdict_line
from tests.fakes.stored_runs import seed_dataset, seed_run

K = 4
_names = count()
GATE = """[relative]
max_regression = 0.05
min_delta = 0.01
"""


def _planted(n: int, seed: int, shift: int) -> tuple[dict, dict]:
    """Baseline verdicts of n questions x K rounds, and a run whose every question lost
    `shift` right rounds (at most what it had), or the same when shift is 0."""
    rng = np.random.default_rng(seed)
    base = {i: [int(v) for v in rng.random(K) < rng.uniform(0.3, 0.9)] for i in range(n)}
    run = {}
    for i, rounds in base.items():
        lost, rounds = 0, list(rounds)
        for r in range(K):
            if lost < shift and rounds[r] == 1:
                rounds[r], lost = 0, lost + 1
        run[i] = rounds
    return base, run


def _gate(engine, tmp_path, base: dict, run: dict, *extra: str) -> tuple[int, int, int]:  # noqa: ANN001
    ds = seed_dataset(engine, f"g{len(base)}-{next(_names)}", [f"q{i}?" for i in base])
    a, b = seed_run(engine, ds, base, K, model="m"), seed_run(engine, ds, run, K, model="m")
    config = tmp_path / "gate.toml"
    config.write_text(GATE + "".join(extra))
    return main(["gate", "--run", str(b), "--baseline", str(a), "--config", str(config),
                 "--json", str(tmp_path / "out.json")]), a, b


def test_a_regression_too_small_for_the_run_is_inconclusive(engine, tmp_path, capsys):
    base, run = _planted(12, 1, shift=0)
    run[0] = [0] * K  # one question of twelve lost its right rounds: a small shift
    run[1] = [0] * K
    code, a, b = _gate(engine, tmp_path, base, run)
    out = capsys.readouterr().out
    verdict = json.loads((tmp_path / "out.json").read_text())
    assert code == 1 and verdict["verdict"] == "inconclusive", out
    assert "INCONCLUSIVE" in out and "questions would tell" in out
    assert "counted as fail" in out
    check = next(c for c in verdict["checks"] if c["name"] == "regression:mean_success_rate")
    assert check["inconclusive"] and check["needed"] > 12
    result = gate_any(engine, b, load_gate_config(tmp_path / "gate.toml"), baseline_id=a)
    assert verdict_line(result).startswith("INCONCLUSIVE (the run is too small")
    assert gate_reason(result).startswith("inconclusive: mean_success_rate moved from")
    # the config decides what CI does with it
    code, _, _ = _gate(engine, tmp_path, base, run, 'on_inconclusive = "pass"\n')
    assert code == 0 and "counted as pass" in capsys.readouterr().out


def test_a_large_regression_fails(engine, tmp_path, capsys):
    base, run = _planted(12, 2, shift=3)
    code, _, _ = _gate(engine, tmp_path, base, run)
    assert code == 1
    assert json.loads((tmp_path / "out.json").read_text())["verdict"] == "fail"


def test_no_regression_on_a_large_run_passes(engine, tmp_path, capsys):
    base, _ = _planted(300, 3, shift=0)
    code, _, _ = _gate(engine, tmp_path, base, dict(base))
    assert code == 0, capsys.readouterr().out
    assert json.loads((tmp_path / "out.json").read_text())["verdict"] == "pass"


def test_the_interval_decides_only_when_it_holds_both_zero_and_the_limit() -> None:
    config = load_gate_config({"relative": {"max_regression": 0.1, "min_delta": 0.01}})
    base = {i: (2, 4) for i in range(10)}

    def gate(now: dict) -> str:  # noqa: ANN202
        paired = paired_difference(base, now)
        rate = np.mean([r / k for r, k in now.values()])
        return evaluate_gate({"mean_success_rate": rate}, config,
                             {"mean_success_rate": 0.5},
                             paired={"mean_success_rate": paired}).verdict()

    assert gate({i: (2, 4) for i in range(10)}) == "pass"  # no spread: no change
    noisy = {i: ((0, 4) if i < 3 else (3, 4)) for i in range(10)}  # mean 0.525, wide
    assert gate(noisy) == "inconclusive"
    assert gate({i: (0, 4) for i in range(10)}) == "fail"  # every question lost all
    with pytest.raises(Exception, match="on_inconclusive"):
        load_gate_config({"relative": {"max_regression": 0.1, "on_inconclusive": "maybe"}})
