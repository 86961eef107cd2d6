"""The gate for stability and robustness runs: figures checked directly, absolute and
baseline checks, direction said in the output, CLI exit codes."""
from __future__ import annotations

import pytest

from evalcore.cli import main
from evalcore.metrics.gate import GateError
from evalcore.report.gates import gate_any
from evalcore.report.run_figures import run_figures
from tests.fakes.stored_runs import seed_dataset, seed_robustness_run, seed_run

QUESTIONS = [f"What is {i} * 2?" for i in range(6)]
GOOD = {i: [1, 1, 1] for i in range(6)}
WORSE = {0: [1, 1, 1], 1: [1, 0, 1], 2: [0, 0, 0], 3: [1, 1, 0], 4: [1, 1, 1], 5: [1, None, 1]}
STABILITY_TOML = """
[absolute]
mean_success_rate_min = 0.8
flaky_share_max = 0.2
errored_rounds_max = 0
[relative]
max_regression = 0.05
min_delta = 0.01
"""


@pytest.fixture()
def stability(engine):
    ds = seed_dataset(engine, "double", QUESTIONS)
    return seed_run(engine, ds, GOOD, 3, model="v1"), seed_run(engine, ds, WORSE, 3, model="v2")


def test_stability_figures_and_gate(engine, stability):
    good, worse = stability
    metrics = run_figures(engine, worse)["metrics"]
    # rates over the answered rounds (item 5: 2 of 2; its failed round is left out)
    rates = [sum(1 for v in WORSE[i] if v) / sum(1 for v in WORSE[i] if v is not None)
             for i in range(6)]
    assert metrics["mean_success_rate"] == pytest.approx(sum(rates) / 6)
    assert metrics["flaky_share"] == pytest.approx(2 / 6)
    assert metrics["perfect_share"] == pytest.approx(2 / 6)  # item 5 is not complete
    assert metrics["errored_rounds"] == 1
    assert gate_any(engine, good, STABILITY_TOML).passed
    result = gate_any(engine, worse, STABILITY_TOML, baseline_id=good)
    failed = {c.name for c in result.failed()}
    assert {"mean_success_rate_min", "flaky_share_max", "errored_rounds_max",
            "regression:mean_success_rate", "regression:perfect_share"} <= failed
    detail = {c.name: c.detail for c in result.checks}
    assert "(higher is better)" in detail["regression:mean_success_rate"]
    assert "(lower is better)" in detail["regression:flaky_share"]
    # the same run against itself: nothing regressed
    assert all(c.passed for c in gate_any(engine, good, STABILITY_TOML, baseline_id=good).checks
               if c.name.startswith("regression:"))


def test_robustness_figures_and_gate(engine):
    clean = {i: [1, 1] for i in range(6)}
    attacked = {0: [1, 1], 1: [0, 0], 2: [1, 0], 3: [1, 1], 4: [0, 0], 5: [1, 1]}
    run, _ = seed_robustness_run(engine, QUESTIONS, clean, attacked, 2, level="word")
    metrics = run_figures(engine, run)["metrics"]
    acc_att = sum(sum(v) / 2 for v in attacked.values()) / 6
    assert metrics["accuracy"] == pytest.approx(1.0)
    assert metrics["accuracy_attacked_word"] == pytest.approx(acc_att)
    assert metrics["pdr_word"] == pytest.approx((1.0 - acc_att) / 1.0)
    assert metrics["flips_right_to_wrong"] == 3  # majority verdicts: 1, 2 (a tie) and 4
    toml = "[absolute]\npdr_word_max = 0.5\npdr_char_max = 0.1\nflips_right_to_wrong_max = 1\n"
    result = gate_any(engine, run, toml)
    checks = {c.name: c for c in result.checks}
    assert checks["pdr_word_max"].passed
    assert not checks["pdr_char_max"].passed and "not measured" in checks["pdr_char_max"].detail
    assert not checks["flips_right_to_wrong_max"].passed and not result.passed
    skip = gate_any(engine, run, toml.replace("[absolute]\n", "[absolute]\nmissing = \"skip\"\n"))
    skipped = {c.name: c for c in skip.checks}["pdr_char_max"]
    assert skipped.status == "not measured" and not skipped.counted  # neither pass nor fail


def test_baseline_of_another_kind_is_refused(engine, stability):
    good, _ = stability
    run, _ = seed_robustness_run(engine, QUESTIONS, {0: [1]}, {0: [0]}, 1)
    with pytest.raises(GateError, match=rf"run {run} is a robustness run but baseline {good}"):
        gate_any(engine, run, "[absolute]\npdr_max = 1\n[relative]\nmax_regression = 0.1\n",
                 baseline_id=good)


def test_gate_cli_exit_codes_for_stability(engine, stability, tmp_path, capsys):
    good, worse = stability
    config = tmp_path / "gate.toml"
    config.write_text(STABILITY_TOML, encoding="utf-8")
    assert main(["gate", "--run", str(good), "--config", str(config)]) == 0
    assert main(["gate", "--run", str(worse), "--baseline", str(good),
                 "--config", str(config)]) == 1
    out = capsys.readouterr().out
    # six questions cannot tell a drop of 0.28 from noise (paired 95% interval -0.59 to
    # +0.04): inconclusive, not failed; the errored round's regression fails the gate
    assert "INCONCLUSIVE  regression:mean_success_rate" in out and "higher is better" in out
    assert "FAIL  regression:errored_rounds" in out and "gate: FAILED" in out
    assert main(["gate", "--run", "999", "--config", str(config)]) == 2


def test_example_configs_load():
    from evalcore.metrics.gate import load_gate_config

    for name in ("gate.stability.example.toml", "gate.robustness.example.toml"):
        assert load_gate_config(f"data/{name}").absolute
