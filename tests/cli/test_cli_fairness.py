"""`python -m evalcore fairness` and `gate`: a CI script gets a non-zero exit when a run is
worse than the gate or its baseline."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore import cli
from tests.fakes.fault_server import FaultConfig, FaultServer

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_GATE = REPO / "data" / "gate.example.toml"


def even(prompt: str, schema: dict | None) -> str:
    if "没有相关学历" in prompt or "no relevant degree" in prompt:
        return "评分：3/10。经验不足，不推荐录用。"
    return "评分：8/10。经验丰富，专业能力强，推荐录用。"


def favours_men(prompt: str, schema: dict | None) -> str:
    if "没有相关学历" in prompt:
        return "评分：3/10。经验不足，不推荐录用。"
    if "他" in prompt:
        return "评分：9/10。经验丰富，能力出众，强烈推荐录用。"
    if "她" in prompt:
        return "评分：5/10。她可能比较情绪化，婚育也会影响工作。"
    return "评分：8/10。经验丰富，推荐录用。"


@pytest.fixture()
def run(settings, monkeypatch, capsys):

    def call(*argv: str) -> tuple[int, str, str]:
        code = cli.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return call


def add_model(settings, server, name: str) -> None:
    from evalcore.providers.base import ModelConfig
    from evalcore.providers.registry import add_model as add

    add(settings.models_path, ModelConfig(name=name, kind="openai", base_url=server.openai_url,
                                          model=name, concurrency=8, timeout=5.0))


def fairness_run(run, settings, responder, model: str, tmp_path: Path) -> tuple[int, dict, str]:
    out_json = tmp_path / f"{model}.json"
    with FaultServer(FaultConfig(responder=responder)) as server:
        add_model(settings, server, model)
        code, out, err = run("fairness", "--generate", "occupations", "--lang", "zh",
                             "--model", model, "--samples", "1", "--json", str(out_json))
    assert code == 0, err
    return code, json.loads(out_json.read_text(encoding="utf-8")), out


def test_generate_run_report_and_gate(run, settings, tmp_path) -> None:
    _, good, out = fairness_run(run, settings, even, "fair-model", tmp_path)
    assert "generated suite 'fairness-occupations-zh': 80 prompts, 20 pairs" in out
    assert "fairness: EXCELLENT (100.0/100)" in out
    assert {"run_id", "attributes", "violations", "score", "level"} <= set(good)
    assert good["level"] == "EXCELLENT" and good["violations"] == []
    assert set(good["attributes"]["gender"]["groups"][0]) >= {"group", "score", "sentiment",
                                                               "selection_rate", "auc"}

    _, bad, out = fairness_run(run, settings, favours_men, "biased-model", tmp_path)
    assert "already stored (same content); reusing it" in out  # same suite, not a copy
    assert bad["level"] == "POOR" and len(bad["violations"]) >= 10
    assert re.search(r"gender: SPD 0\.500\s+EOD 1\.000", out)
    top = bad["effects"][0]  # the evidence across pairs leads, the spreads are detail
    assert (top["attribute"], top["metric"], top["significant"]) == ("gender", "score", True)
    assert out.index("effects across pairs:") < out.index("largest single-pair spreads")
    assert "gender · score: favours" in out
    assert good["gate_metrics"]["significant_effects"] == 0

    code, out, _ = run("gate", "--run", str(good["run_id"]), "--config", str(EXAMPLE_GATE))
    assert code == 0 and "gate: PASSED" in out and "PASS  spd_max" in out
    code, out, _ = run("gate", "--run", str(bad["run_id"]), "--config", str(EXAMPLE_GATE))
    assert code == 1 and "gate: FAILED" in out and "FAIL  spd_max" in out
    verdict = tmp_path / "verdict.json"
    code, out, _ = run("gate", "--run", str(bad["run_id"]), "--baseline", str(good["run_id"]),
                       "--config", str(EXAMPLE_GATE), "--json", str(verdict))
    assert code == 1 and "FAIL  regression:spd" in out
    assert json.loads(verdict.read_text())["passed"] is False

    # the same through a real process, as a CI script would call it
    env = {**os.environ, "EVALCORE_HOME": str(settings.home)}
    env.pop("EVALCORE_DB_URL", None)
    proc = subprocess.run([sys.executable, "-m", "evalcore", "gate", "--run", str(bad["run_id"]),
                           "--baseline", str(good["run_id"]), "--config", str(EXAMPLE_GATE)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "gate: FAILED" in proc.stdout


def test_bad_gate_config_and_unknown_generator_exit_2(run, settings, tmp_path) -> None:
    bad = tmp_path / "gate.toml"
    bad.write_text("[absolute]\nspeed_max = 1\n", encoding="utf-8")
    code, _, err = run("gate", "--run", "1", "--config", str(bad))
    assert code == 2 and "speed_max" in err
    code, _, err = run("fairness", "--generate", "nope", "--model", "local")
    assert code == 2 and "occupations" in err


def test_judge_analysis_rates_every_answer_after_the_run(run, settings, tmp_path) -> None:
    def model_and_judge(prompt: str, schema: dict | None) -> str:
        if "fairness audit" in prompt:  # the judge rubric
            cold = "情绪化" in prompt.rsplit("ANSWER:", 1)[-1]
            return json.dumps({"sentiment": -0.5 if cold else 0.5, "professionalism": 0.7,
                               "stereotype": cold, "reason": "r"})
        return favours_men(prompt, schema)

    out_json = tmp_path / "judged.json"
    with FaultServer(FaultConfig(responder=model_and_judge)) as server:
        add_model(settings, server, "m")
        add_model(settings, server, "judge")
        code, out, err = run("fairness", "--generate", "occupations", "--lang", "zh",
                             "--model", "m", "--limit", "8", "--judge-analysis", "judge",
                             "--json", str(out_json))
        assert server.stats.requests == 16  # 8 answers, then 8 ratings
    assert code == 0, err
    assert "judge judge: rated 8 answers, 0 without a usable rating, 0 rated before" in out
    assert re.search(r"judge model: 8 answers rated \(0 without a rating\); stereotype rate "
                     r"0\.\d{3}; agreement with the word lists", out)
    report = json.loads(out_json.read_text(encoding="utf-8"))
    assert report["judge_analysis"]["rated"] == 8
    assert all(r["judge_sentiment"] in (-0.5, 0.5) for r in report["rows"])


def test_suite_must_be_a_fairness_suite_or_bias_benchmark(run, settings, engine) -> None:
    from tests.fakes.stored_runs import seed_dataset

    seed_dataset(engine, "plain-maths", ["1+1?"])
    code, out, err = run("fairness", "--suite", "plain-maths", "--model", "local")
    assert code == 2
    assert "'plain-maths'" in err and "not a fairness suite or a bias benchmark" in err
    assert "Datasets that qualify: none yet" in err
