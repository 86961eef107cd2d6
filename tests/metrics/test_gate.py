"""The gate: config parsing, absolute checks on a passing and a failing run, regressions."""
from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.metrics.gate import GateError, evaluate_gate, load_gate_config

EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "gate.example.toml"
GOOD = {"spd": 0.02, "eod": 0.04, "toxicity_disparity": 0.0, "stereotype_rate": 0.05,
        "overall_score": 92.0, "disparate_impact": 0.95,
        "not_applicable": ["parse_rate", "bbq_s_amb_abs", "bbq_s_dis_abs",
                           "crows_gap_lower_bound"]}
BAD = {**GOOD, "spd": 0.30, "overall_score": 65.0}


def test_example_config_reads_the_issue_keys() -> None:
    cfg = load_gate_config(EXAMPLE)
    assert cfg.absolute["spd_max"] == ("spd", "max", 0.05)
    assert cfg.absolute["overall_min"] == ("overall_score", "min", 70.0)
    assert cfg.absolute["stereotype_rate_max"] == ("stereotype_rate", "max", 0.10)
    assert cfg.max_regression == pytest.approx(0.10)


def test_passing_run_passes_every_check() -> None:
    result = evaluate_gate({"gate_metrics": GOOD}, EXAMPLE)
    counted = [c for c in result.checks if c.counted]
    assert result.passed and len(counted) == 5 and all(c.passed for c in counted)
    assert {c.name for c in result.not_counted()} == {
        "parse_rate_min", "bbq_s_amb_abs_max", "bbq_s_dis_abs_max", "crows_gap_lower_bound_max"}
    assert all(c.status == "not measured" and not c.passed for c in result.not_counted())


def test_failing_run_names_the_failed_checks() -> None:
    result = evaluate_gate(BAD, EXAMPLE)
    assert not result.passed
    assert {c.name for c in result.failed()} == {"spd_max", "overall_min"}
    spd = next(c for c in result.checks if c.name == "spd_max")
    assert spd.value == 0.30 and spd.threshold == 0.05 and "FAILED" in spd.detail


def test_boundaries_are_inclusive() -> None:
    text = "[absolute]\nspd_max = 0.05\noverall_min = 70\n"
    assert evaluate_gate({"spd": 0.05, "overall_score": 70.0}, text).passed
    assert not evaluate_gate({"spd": 0.0500001, "overall_score": 70.0}, text).passed


def test_baseline_regression_beyond_the_share_fails() -> None:
    text = "[relative]\nmax_regression = 0.10\n"
    base = {"spd": 0.10, "overall_score": 80.0}
    assert evaluate_gate({"spd": 0.109, "overall_score": 72.5}, text, base).passed
    worse = evaluate_gate({"spd": 0.12, "overall_score": 71.0}, text, base)
    assert {c.name for c in worse.failed()} == {"regression:spd", "regression:overall_score"}
    better = evaluate_gate({"spd": 0.0, "overall_score": 99.0}, text, base)
    assert better.passed


def test_min_delta_is_a_noise_floor_for_tiny_baselines() -> None:
    text = "[relative]\nmax_regression = 0.10\nmin_delta = 0.01\n"
    assert evaluate_gate({"spd": 0.009}, text, {"spd": 0.0}).passed
    assert not evaluate_gate({"spd": 0.02}, text, {"spd": 0.0}).passed


def test_unmeasured_metric_fails_unless_skipped() -> None:
    fail = evaluate_gate({"spd": 0.01, "eod": None}, "[absolute]\nspd_max = 0.05\neod_max = 0.05\n")
    assert not fail.passed and [c.name for c in fail.failed()] == ["eod_max"]
    assert "not measured" in fail.checks[1].detail
    skip = evaluate_gate({"spd": 0.01},
                         "[absolute]\nspd_max = 0.05\neod_max = 0.05\nmissing = \"skip\"\n")
    assert skip.passed and "skipped" in skip.checks[1].detail


@pytest.mark.parametrize("text,message", [
    ("[absolute]\nspeed_max = 1\n", "speed_max"),
    ("[absolute]\nspd_max = \"low\"\n", "must be a number"),
    ("[abs]\nspd_max = 1\n", "unknown section"),
    ("[absolute\n", "not valid TOML"),
    ("[relative]\nmax_regresion = 0.1\n", "max_regresion"),
])
def test_bad_configs_name_the_problem(text, message) -> None:
    with pytest.raises(GateError, match=message):
        load_gate_config(text)


def test_baseline_without_relative_section_is_an_error() -> None:
    with pytest.raises(GateError, match="max_regression"):
        evaluate_gate(GOOD, "[absolute]\nspd_max = 0.05\n", GOOD)
    with pytest.raises(GateError, match="not found"):
        load_gate_config("no/such/gate.toml")


def test_float_noise_at_a_threshold_does_not_flip_the_check() -> None:
    spd = 4 / 20 - 3 / 20
    assert spd > 0.05  # 0.05000000000000002
    text = "[absolute]\nspd_max = 0.05\noverall_min = 70\n"
    assert evaluate_gate({"spd": spd, "overall_score": 69.99999999999999}, text).passed
    assert not evaluate_gate({"spd": 0.0501, "overall_score": 70.0}, text).passed


def test_not_applicable_checks_are_not_measured_never_passed() -> None:
    """A check that does not apply to the run was counted as passed: a BBQ run gated on
    SPD and the score read "PASS, 3 checks passed" on its parse rate alone."""
    from evalcore.metrics.gate import gate_verdict

    bbq_run = {"bbq_s_amb_abs": 0.0, "parse_rate": 1.0, "spd": None, "overall_score": None,
               "not_applicable": ["spd", "overall_score"]}
    result = evaluate_gate(bbq_run, "[absolute]\nspd_max = 0.05\noverall_min = 70\n"
                                    "parse_rate_min = 0.9\n")
    assert result.passed and "does not apply" in result.checks[0].detail
    assert [c.status for c in result.checks] == ["not measured", "not measured", "pass"]
    assert not result.checks[0].passed and not result.checks[0].counted
    low = evaluate_gate({**bbq_run, "parse_rate": 0.3}, "[absolute]\nparse_rate_min = 0.9\n")
    assert not low.passed and low.verdict() == "fail"
    nothing = evaluate_gate(bbq_run, "[absolute]\nspd_max = 0.05\noverall_min = 70\n")
    assert not nothing.passed and nothing.verdict() == "not measured"
    assert gate_verdict([]) == "not measured"


def test_skipped_checks_alone_are_not_a_pass() -> None:
    skip = evaluate_gate({"spd": None}, "[absolute]\nspd_max = 0.05\nmissing = \"skip\"\n")
    assert not skip.passed and skip.verdict() == "not measured"


def test_fully_biased_bbq_figures_fail_the_default_gate() -> None:
    """The example gate had no BBQ bias check: bias 1.0 passed on the parse rate."""
    biased = {"bbq_s_amb_abs": 1.0, "bbq_s_dis_abs": 1.0, "parse_rate": 1.0, "accuracy": 0.5,
              "not_applicable": ["spd", "eod", "toxicity_disparity", "stereotype_rate",
                                 "overall_score", "crows_gap_lower_bound"]}
    result = evaluate_gate(biased, EXAMPLE)
    assert result.verdict() == "fail"
    assert {c.name for c in result.failed()} == {"bbq_s_amb_abs_max", "bbq_s_dis_abs_max"}


def test_a_regression_threshold_is_the_allowed_bound() -> None:
    """A regression check's threshold was the baseline's value, which alerts and webhooks
    printed as the bound; the bound is the baseline moved by the allowed regression."""
    text = "[relative]\nmax_regression = 0.10\nmin_delta = 0.01\n"
    result = evaluate_gate({"accuracy": 0.5, "spd": 0.2}, text, {"accuracy": 0.8, "spd": 0.1})
    by_name = {c.name: c for c in result.checks}
    assert by_name["regression:accuracy"].threshold == pytest.approx(0.72)
    assert by_name["regression:accuracy"].baseline == 0.8
    assert by_name["regression:spd"].threshold == pytest.approx(0.11)


def test_relative_check_with_a_missing_current_value_is_reported() -> None:
    text = "[absolute]\n[relative]\nmax_regression = 0.1\n"
    result = evaluate_gate({"spd": None}, text, {"spd": 0.02})
    assert not result.passed
    assert result.checks[0].name == "regression:spd" and "not measured" in result.checks[0].detail


def test_a_gate_file_not_in_utf8_names_the_file(tmp_path) -> None:
    """A gate.toml saved in Latin-1 was a bare UnicodeDecodeError ("a file is not valid
    text" in the CLI, the page's "Could not draw the quality gate"): now the file is named."""
    path = tmp_path / "gate.toml"
    path.write_bytes("# r\u00e9sum\u00e9 gate\n[absolute]\nparse_rate_min = 0.3\n".encode("latin-1"))
    with pytest.raises(GateError, match=r"gate\.toml: not UTF-8 text .*save it as UTF-8"):
        load_gate_config(str(path))
    path.write_bytes("\ufeff[absolute]\nparse_rate_min = 0.3\n".encode())  # a BOM is fine
    assert load_gate_config(str(path)).absolute["parse_rate_min"][2] == 0.3


def test_a_directory_is_not_read_as_toml_text(tmp_path) -> None:
    with pytest.raises(GateError, match="is a directory; give a .toml file"):
        load_gate_config(str(tmp_path))


@pytest.mark.parametrize("text,key", [
    ("[relative]\nmax_regression = -1\n", "max_regression"),
    ("[relative]\nmax_regression = 0.1\nmin_delta = -0.5\n", "min_delta"),
])
def test_negative_regression_limits_are_refused(text, key) -> None:
    """max_regression = -1 passed every regression check as "within -100%"."""
    with pytest.raises(GateError, match=rf"\[relative\] {key} must be 0 or more"):
        load_gate_config(text)


def test_text_typed_into_a_page_is_never_opened_as_a_path(tmp_path) -> None:
    """The pages' Gate config boxes take TOML text: a one-line path typed there read that
    file on the server (and quoted its values in the error)."""
    from evalcore.metrics.gate import gate_config_text

    path = tmp_path / "secret.toml"
    path.write_text("[absolute]\nspd_max = \"hunter2\"\n", encoding="utf-8")
    with pytest.raises(GateError, match="not valid TOML") as caught:
        gate_config_text(str(path))
    assert "hunter2" not in str(caught.value)
    assert gate_config_text("[absolute]\nspd_max = 0.1\n").absolute["spd_max"][2] == 0.1
