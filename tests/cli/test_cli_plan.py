"""How sure a figure is, through the CLI: a stability run's clustered standard error in
its JSON, compare's paired difference, and `plan` from one run and from two."""
from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from evalcore.cli import main
from evalcore.metrics.uncertainty import questions_needed
from tests.fakes.stored_runs import seed_dataset, seed_run

rng = np.random.default_rng(5)
N, K = 30, 4
RATES = rng.beta(2, 2, size=N)
A = {i: [int(v) for v in rng.random(K) < RATES[i]] for i in range(N)}
B = {i: [int(v) for v in rng.random(K) < min(1, RATES[i] + 0.1)] for i in range(N)}


def _s(verdicts: dict) -> np.ndarray:
    return np.array([sum(verdicts[i]) / K for i in sorted(verdicts)])


@pytest.fixture()
def runs(engine):
    ds = seed_dataset(engine, "plan", [f"q{i}?" for i in range(N)])
    return seed_run(engine, ds, A, K, model="a"), seed_run(engine, ds, B, K, model="b")


def test_the_stability_json_carries_the_clustered_error(runs, capsys):
    assert main(["runs", "show", str(runs[0]), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)["report"]["summary"]
    s = _s(A)
    assert found["accuracy_se"] == pytest.approx(s.std(ddof=1) / np.sqrt(N))
    low, _ = found["accuracy_ci"]
    assert low == pytest.approx(max(0, s.mean() - 1.959964 * s.std(ddof=1) / np.sqrt(N)),
                                abs=1e-6)
    assert {"variance_within", "variance_between", "within_share"} <= set(found)


def test_compare_gives_the_paired_difference_with_its_interval(runs, capsys):
    assert main(["compare", str(runs[0]), str(runs[1]), "--json"]) == 0
    paired = json.loads(capsys.readouterr().out)["tests"][0]["paired"]
    d = _s(B) - _s(A)
    assert paired["n"] == N and paired["diff"] == pytest.approx(d.mean())
    assert paired["diff"] / paired["diff_se"] == pytest.approx(
        stats.ttest_rel(_s(B), _s(A)).statistic)
    assert paired["diff_ci"][0] < paired["diff"] < paired["diff_ci"][1]


def test_plan_from_one_run_and_from_two(runs, capsys):
    assert main(["plan", "--run", str(runs[0]), "--effect", "0.05", "--json"]) == 0
    one = json.loads(capsys.readouterr().out)
    s = _s(A)
    within = np.mean([x * (1 - x) * K / (K - 1) for x in s])
    var = max(0.0, s.var(ddof=1) - within / K) + within / K
    assert one["questions"] == questions_needed(var, 0.05)
    assert (one["rounds"], one["effect"], one["power"], one["alpha"], one["from_runs"]) == (
        K, 0.05, 0.8, 0.05, [runs[0]])
    assert one["mde_now"] == pytest.approx((1.959964 + 0.841621) * np.sqrt(var / N), rel=1e-4)

    assert main(["plan", "--runs", str(runs[0]), str(runs[1]), "--effect", "0.05",
                 "--rounds", "8", "--power", "0.9"]) == 0
    words = capsys.readouterr().out
    assert "questions at 8 rounds" in words and "90% power" in words

    assert main(["plan", "--run", str(runs[0]), "--effect", "5"]) == 2
    assert "between 0 and 1" in capsys.readouterr().err


def test_a_start_form_says_what_the_run_could_detect(runs, engine):
    from evalcore.metrics.uncertainty import detectable_effect
    from evalcore.report.plan import start_plan, start_words
    from evalcore.store import queries

    dataset = queries.get_run(engine, runs[1]).dataset_id
    plan = start_plan(engine, dataset_id=dataset, kind="stability", questions=20, rounds=5)
    s = _s(B)  # the newest finished run of the dataset
    within = np.mean([x * (1 - x) * K / (K - 1) for x in s])
    var = max(0.0, s.var(ddof=1) - within / K) + within / 5
    assert plan["from_run"] == runs[1]
    assert plan["mde"] == pytest.approx(detectable_effect(var, 20))
    assert "With 20 questions x 5 rounds" in start_words(plan)
    assert start_plan(engine, dataset_id=dataset + 99, kind="stability", questions=20,
                      rounds=5) is None


def test_the_start_line_is_always_one_sentence(runs, engine):
    from evalcore.report.plan import start_line
    from evalcore.store import queries

    dataset = queries.get_run(engine, runs[1]).dataset_id
    line = start_line(engine, dataset_id=dataset, kind="stability", questions=20, rounds=5)
    assert line.startswith("With 20 questions x 5 rounds this run can detect")
    assert start_line(engine, dataset_id=dataset, kind="robustness", questions=20,
                      rounds=5).startswith("No finished robustness run of this dataset yet")
    assert "fewer than two questions" in start_line(engine, dataset_id=dataset,
                                                    kind="stability", questions=1, rounds=5)
    assert start_line(engine, dataset_id=None, kind="stability", questions=20,
                      rounds=5).startswith("Choose a dataset")
