"""`python -m evalcore compare A B [--json]` on two runs seeded with known verdicts."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from scipy.stats import wilcoxon

from evalcore.cli import main
from tests.fakes.stored_runs import scipy_paired_p, seed_dataset, seed_run

REPO = Path(__file__).resolve().parents[2]
QUESTIONS = [f"Is {i} even?" for i in range(5)]
A = {0: [1, 1], 1: [0, 0], 2: [1, 0], 3: [0, 0], 4: [1, 1]}
B = {0: [1, 1], 1: [1, 1], 2: [1, 1], 3: [0, 1], 4: [0, 0]}


def rates(verdicts: dict) -> list[float]:
    return [sum(verdicts[p]) / 2 for p in sorted(verdicts)]


@pytest.fixture()
def runs(engine):
    ds = seed_dataset(engine, "evens", QUESTIONS)
    return seed_run(engine, ds, A, 2, model="m-a"), seed_run(engine, ds, B, 2, model="m-b")


def test_compare_json_matches_direct_computation(runs, capsys):
    run_a, run_b = runs
    assert main(["compare", str(run_a), str(run_b), "--json"]) == 0
    full = json.loads(capsys.readouterr().out)
    assert full["kind"] == "stability" and full["alignment"]["shared"] == len(A)
    assert full["tests"][0]["test"]["p_value"] == pytest.approx(
        scipy_paired_p(rates(A), rates(B)))
    assert set(full["failure_policy"].values()) == {"exclude"}
    assert main(["compare", str(run_a), str(run_b), "--json", "--errors-as-wrong"]) == 0
    assert set(json.loads(capsys.readouterr().out)["failure_policy"].values()) == {"as_wrong"}
    result = full["stability_pair"]
    assert result["a"]["run_id"] == run_a and result["b"]["model"] == "m-b"
    assert result["a"]["mean"] == pytest.approx(sum(rates(A)) / len(A))
    assert result["b"]["mean"] == pytest.approx(sum(rates(B)) / len(B))
    assert result["join"]["matched"] == len(A)
    # the changed questions only; their |differences| tie (1, 0.5, 0.5, 1): normal approx.
    moved = [b - a for a, b in zip(rates(A), rates(B)) if a != b]
    expected = wilcoxon(moved, method="approx")
    assert result["test"]["p_value"] == pytest.approx(float(expected.pvalue))
    assert {q["item_a"] for q in result["changed"]} == {p for p in A if A[p] != B[p]}


def test_compare_text_lists_summary_test_and_changes(runs, capsys):
    run_a, run_b = runs
    assert main(["compare", str(run_a), str(run_b), "--top", "2"]) == 0
    out = capsys.readouterr().out
    mean_a, mean_b = sum(rates(A)) / len(A), sum(rates(B)) / len(B)
    assert f"mean success{mean_a:>14.3f}{mean_b:>10.3f}" in out
    assert "Wilcoxon signed-rank" in out and f"on 4 of {len(A)} pairs" in out
    changed_lines = [ln for ln in out.splitlines() if ln.startswith("  ") and " -> " in ln]
    assert len(changed_lines) == 2  # --top 2
    assert all("1.00" in line or "0.00" in line for line in changed_lines)
    # questions by their 1-based label, as the pages show them (was the 0-based index)
    labels = {f"Q{p + 1}/Q{p + 1}" for p in A if A[p] != B[p]}
    assert all(line.split()[0] in labels for line in changed_lines)


def test_compare_errors_are_reported_with_exit_code_2(runs, engine, capsys):
    run_a, _ = runs
    assert main(["compare", str(run_a), "999"]) == 2
    assert "run 999 not found" in capsys.readouterr().err
    ds = seed_dataset(engine, "other", QUESTIONS[:1])
    fair = seed_run(engine, ds, {0: [1]}, 1, kind="fairness")
    assert main(["compare", str(run_a), str(fair)]) == 2
    assert f"run {fair} is fairness" in capsys.readouterr().err
    assert main(["compare", str(run_a)]) == 2
    assert "2 to 8" in capsys.readouterr().err


def test_compare_three_runs_text(runs, engine, capsys):
    run_a, run_b = runs
    ds = seed_dataset(engine, "evens-3", QUESTIONS)  # another dataset: no shared items
    lone = seed_run(engine, ds, A, 2)
    assert main(["compare", str(run_a), str(run_b), str(lone)]) == 2
    assert "no item in common" in capsys.readouterr().err
    third = seed_run(engine, 1, {0: [1, 1], 1: [1, 1]}, 2, model="m-c")
    assert main(["compare", str(run_a), str(run_b), str(third)]) == 0
    out = capsys.readouterr().out
    assert "2 shared items of 5" in out and f"run {third}: 2 items" in out
    assert out.count("between run") + out.count("better than run") + out.count("no test") >= 3


def test_compare_is_a_registered_command_and_help_stays_fast(capsys):
    with pytest.raises(SystemExit) as exit_:  # in this process: registered is the claim here
        main(["compare", "--help"])
    assert exit_.value.code == 0 and "RUN" in capsys.readouterr().out.upper()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    # importing the CLI module must not pull in pandas, scipy or plotly (SQLAlchemy it needs:
    # its handlers' imports are at its top, issue 22; `python -m evalcore --help` imports none)
    code = ("import sys, evalcore.cli.compare; "
            "print([m for m in ('pandas', 'scipy', 'plotly') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                         text=True, timeout=60, check=True).stdout.strip()
    assert out == "[]"
