"""A CrowS-Pairs fairness run end to end: fault server model, stored answers, the report."""
from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from scipy.stats import binomtest

from evalcore.fairness import fairness_report
from tests.fakes.starters import start
from evalcore.report.crows import crows_lines
from evalcore.runner.start import run_in_foreground
from tests.fakes.fault_server import FaultConfig, FaultServer
from tests.report.test_fairness_report import add_model

CROWS = Path(__file__).resolve().parents[2] / "data" / "samples" / "crows_pairs_en.csv"
ROWS = list(csv.DictReader(CROWS.open(encoding="utf-8", newline="")))
STEREOTYPED = {r["sent_more"] for r in ROWS}


def _options(prompt: str) -> dict[int, str]:
    return {int(n): text.strip() for n, text in re.findall(r"choice (\d): (.+)", prompt)}


def stereotyping(prompt: str, schema: dict | None) -> str:
    options = _options(prompt)
    return next(f"Sentence {n} is more plausible." for n, t in options.items()
                if t in STEREOTYPED)


def first_or_refuse(prompt: str, schema: dict | None) -> str:
    """Option 0, except for the disability pairs, where it refuses."""
    if "wheelchair" in prompt or "deaf" in prompt:
        return "I would rather not pick either sentence."
    return "0"


def _run(engine, settings, responder) -> dict:
    from evalcore.dataset import import_dataset

    import_dataset(engine, CROWS, name="crows")
    with FaultServer(FaultConfig(responder=responder)) as server:
        add_model(settings, server)
        run_id = start("fairness", engine, suite="crows", model="fake", samples=1,
                                     models_path=settings.models_path)
        assert run_in_foreground(engine, run_id) == "done"
        prompts = list(server.stats.prompts)
    assert all("Which of these two sentences is more plausible?" in p for p in prompts)
    return fairness_report(engine, run_id)


def test_a_model_that_always_stereotypes(engine, settings) -> None:
    report = _run(engine, settings, stereotyping)
    crows = report["crows_pairs"]
    assert report["bbq"] is None and report["attributes"] == {}
    assert (crows["answers"], crows["unreadable"]) == (12, 0)
    assert crows["overall"]["share"] == 1.0 and crows["overall"]["stereotyped"] == 12
    ci = binomtest(12, 12).proportion_ci(method="wilson")
    assert (crows["overall"]["low"], crows["overall"]["high"]) == pytest.approx((ci.low, ci.high))
    assert crows["overall"]["preference"] == "stereotyped"
    counts = {}
    for row in ROWS:
        counts[row["bias_type"]] = counts.get(row["bias_type"], 0) + 1
    assert {k: v["n"] for k, v in crows["by_bias_type"].items()} == counts
    assert report["gate_metrics"]["crows_stereotype_share"] == 1.0
    assert report["gate_metrics"]["crows_preference_gap"] == 0.5


def test_position_picks_and_refusals(engine, settings) -> None:
    report = _run(engine, settings, first_or_refuse)
    crows = report["crows_pairs"]
    refused = [r for r in ROWS if r["bias_type"] == "disability"]
    assert crows["unreadable"] == len(refused) == 2
    assert crows["by_bias_type"]["disability"]["n"] == 0
    assert crows["by_bias_type"]["disability"]["share"] is None
    # independently: the sentence shown first is the row's sent_more how often?
    from evalcore.dataset import get_dataset, load_questions

    questions = load_questions(engine, get_dataset(engine, "crows").id)
    first_is_more = sum(q.choices[0] == row["sent_more"]
                        for q, row in zip(questions, ROWS, strict=True)
                        if row["bias_type"] != "disability")
    assert crows["overall"]["stereotyped"] == first_is_more and crows["overall"]["n"] == 10
    assert crows["overall"]["p_value"] == pytest.approx(binomtest(first_is_more, 10).pvalue)
    assert any("2 of 12 replies named neither sentence" in w for w in crows["warnings"])
    lines = crows_lines(crows)
    assert lines[0].startswith("CrowS-Pairs: share choosing the stereotyped sentence")
    assert any(line.startswith("  disability: n/a of 0") for line in lines)


def test_the_cli_summary_prints_the_shares(engine, settings, capsys) -> None:
    from evalcore.cli.fairness import print_summary

    print_summary(_run(engine, settings, stereotyping))
    out = capsys.readouterr().out
    assert "fairness: n/a" not in out
    assert "  overall: 100.0% of 12 [" in out and "stereotyped" in out
    assert "  gender: 100.0% of 3 [" in out
