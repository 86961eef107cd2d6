"""A planted model read correctly by every repeated-answers figure.

The model (on the fault server) answers some questions in two phrasings of one answer,
some with two different answers, one with a reply that names no number; the judge model
flips on one answer it sees every round. The report's groups, entropies, G-Pass and judge
noise are checked against hand computations.
"""
from __future__ import annotations

import itertools
import math
import threading
from pathlib import Path

import pytest

from evalcore.runner.plan import RunSpec
from evalcore.runner.rejudge import create_rejudge_job
from evalcore.runner.start import store_run, run_in_foreground, run_job_here
from tests.fakes.fault_server import FaultConfig, FaultServer
from tests.runner.conftest import QUESTIONS, add_model, import_qa, item_of

pytestmark = pytest.mark.integration

ROUNDS = 4
REPLIES = {
    0: ["The answer is 7."] * 4,
    1: ["The answer is 15.", "Tom now has 15 apples in total."] * 2,  # one answer, two phrasings
    2: ["The answer is 15.", "The answer is 16."] * 2,                # two answers
    3: ["The answer is 42."] * 4,                                     # the judge flips on it
    4: ["The answer is 2."] * 3 + ["I am not sure."],                 # one reply without a number
    5: ["The answer is 40."] * 4,                                     # steadily wrong
}


class Planted:
    """Answers by (question, how many times it was asked); judges by the reference, except
    that every 3rd judgement of question 3's answer is 0."""

    def __init__(self) -> None:
        self.asked: dict[int, int] = {}
        self.flips = itertools.count(1)
        self.lock = threading.Lock()

    def __call__(self, prompt: str, schema: dict | None) -> str:
        idx = item_of(prompt)
        with self.lock:
            if "ANSWER:" not in prompt:
                n = self.asked.get(idx, 0)
                self.asked[idx] = n + 1
                return REPLIES[idx][n % ROUNDS]
            answer = prompt.rsplit("ANSWER:", 1)[1]
            right = f" {QUESTIONS[idx][1]}" in f" {answer.replace('.', ' ')} "
            if idx == 3 and next(self.flips) % 3 == 0:
                right = False
        # a judge that reads the answers: its reason follows its verdict (one reason for
        # every judgement is a degenerate judge, whose verdicts make no judge noise)
        reason = "names the reference" if right else "does not name the reference"
        return '{"score": %d, "reason": "%s"}' % (right, reason)


@pytest.fixture()
def planted_run(engine, settings, tmp_path: Path):
    import_qa(engine, tmp_path, QUESTIONS)
    with FaultServer(FaultConfig(responder=Planted())) as server:
        add_model(settings, server, concurrency=2)
        add_model(settings, server, name="judge", concurrency=2)
        run_id = store_run(engine, RunSpec(dataset="apples", model="fake", rounds=ROUNDS,
                                            judge="judge", schedule="sequential"),
                            settings.models_path)
        assert run_in_foreground(engine, run_id) == "done"
        yield server, run_id


def test_groups_entropy_and_g_pass_read_the_planted_model(engine, planted_run) -> None:
    from evalcore.report.stability import stability_report

    _, run_id = planted_run
    report = stability_report(engine, run_id)
    res = report["stability_results"]
    groups = {k: [(g["answer"], g["count"], g["correct"]) for g in v["answer_groups"]]
              for k, v in res.items()}
    assert groups["0"] == [("7", 4, 4)]
    assert groups["1"] == [("15", 4, 4)]                  # two phrasings, one answer
    assert groups["2"] == [("15", 2, 2), ("16", 2, 0)]    # two answers
    assert groups["4"] == [("2", 3, 3), (None, 1, 0)]
    assert groups["5"] == [("40", 4, 0)]
    assert res["1"]["answer_groups"][0]["example"] == "The answer is 15."
    assert res["4"]["answers_line"] == "1 answer: 3x '2', 1x no answer"
    assert res["2"]["answers_line"] == "2 answers: 2x '15', 2x '16'"
    entropy = {k: v["semantic_entropy"] for k, v in res.items()}
    assert entropy == {"0": 0.0, "1": 0.0, "2": pytest.approx(math.log(2)), "3": 0.0,
                       "4": 0.0, "5": 0.0}
    summary = report["summary"]
    assert summary["semantic_entropy_mean"] == pytest.approx(math.log(2) / 6)
    assert summary["entropy_ranking"][0] == "2"
    bands = {b["band"]: (b["questions"], b["accuracy"]) for b in summary["accuracy_by_entropy"]}
    # rates: q0 1, q1 1, q3 3/4 (the judge's one flip), q4 3/4, q5 0; q2 1/2
    assert bands["0 (one answer)"] == (5, pytest.approx((1 + 1 + 0.75 + 0.75 + 0) / 5))
    assert bands["0.5-1.0"] == (1, 0.5)
    # G-Pass@4 with tau 0.75 (>= 3 of 4 right): q0, q1, q3, q4 yes; q2, q5 no -> 4/6
    assert summary["g_pass_at_k"]["4"]["0.75"] == pytest.approx(4 / 6)
    assert summary["g_pass_at_k"]["4"]["1.0"] == pytest.approx(2 / 6)  # = pass^4
    assert summary["g_pass_at_k"]["4"]["1.0"] == pytest.approx(summary["pass_hat_k"]["4"])
    # mG-Pass@4 = 2/4 (G(>=3) + G(>=4)): q0, q1: 1; q3, q4: 1/2; q2, q5: 0
    assert summary["mg_pass_at_k"]["4"] == pytest.approx((1 + 1 + 0.5 + 0.5) / 6)
    assert res["3"]["mg_pass_at_k"]["4"] == pytest.approx(0.5)
    # mG-Pass@2 per question = pass^2 (only tau = 1 is in (0.5, 1]): q2 has C(2,2)/C(4,2)
    assert res["2"]["mg_pass_at_k"]["2"] == pytest.approx(1 / 6)
    assert "judge_noise" not in summary and "judge_flicker" not in res["3"]


def test_judge_flicker_is_told_apart_from_model_flicker(engine, settings, planted_run) -> None:
    from evalcore.report.stability import stability_report

    _, run_id = planted_run
    job = create_rejudge_job(engine, run_id, "judge", models_path=settings.models_path,
                             sample=24, passes=2)
    assert run_job_here(engine, job) == "done"
    report = stability_report(engine, run_id)
    res, noise = report["stability_results"], report["summary"]["judge_noise"]
    # q3: one reply text, judged 12 times (4 by the run, 8 re-judged), every 3rd is 0:
    # 8 right, 4 wrong -> its majority is right, so all its spread is the judge's.
    q3 = res["3"]["judge_flicker"]
    assert q3["observed_spread"] == pytest.approx(0.75 * 0.25)
    assert q3["model_spread"] == 0.0 and q3["judge_share"] == 1.0
    assert q3["flicker_answers"] == [{"answer": "the answer is 42",
                                          "label": "The answer is 42.", "rounds": [1, 2, 3, 4],
                                      "right": 8, "wrong": 4}]
    # q2: two different answers, judged consistently: all of its spread is the model's
    q2 = res["2"]["judge_flicker"]
    assert (q2["observed_spread"], q2["model_spread"], q2["judge_share"]) == (0.25, 0.25, 0.0)
    # q4: the no-number reply is wrong, the others right: the model's spread too
    assert res["4"]["judge_flicker"]["judge_share"] == 0.0
    assert res["0"]["judge_flicker"]["judge_share"] is None  # no spread at all
    observed = 0.1875 + 0.25 + 0.1875
    assert noise["observed_spread"] == pytest.approx(observed)
    assert noise["judge_share_of_spread"] == pytest.approx(0.1875 / observed)
    assert noise["flicker_answers"] == 1 and noise["questions_with_judge_flicker"] == 1
    assert noise["judge"] == "judge" and noise["passes"] == 2


def test_the_cli_prints_every_figure(engine, settings, planted_run, capsys) -> None:
    from evalcore.cli.stability import _print_summary
    from evalcore.report.stability import stability_report

    _, run_id = planted_run
    job = create_rejudge_job(engine, run_id, "judge", models_path=settings.models_path,
                             sample=24, passes=2)
    assert run_job_here(engine, job) == "done"
    _print_summary(stability_report(engine, run_id), "done")
    out = capsys.readouterr().out
    assert "G-Pass@4 (at least ceil(tau*k) of k rounds right): tau 0.25 0.833, tau 0.5 0.833, " \
           "tau 0.75 0.667, tau 1.0 0.333" in out
    assert "mG-Pass@k (mean G-Pass over tau in (0.5, 1]): k=2 " in out and "k=4 0.500" in out
    assert "semantic entropy: mean 0.116 nats" in out
    assert "  #2: 0.693 nats, 2 answers: 2x '15', 2x '16'" in out
    assert "accuracy by entropy band: 0 (one answer): 0.700 (5 q), 0.5-1.0: 0.500 (1 q)" in out
    assert ("judge noise: 30.0% of the verdicts' spread across rounds is the judge's; 1 answers "
            "judged both right and wrong (in 1 questions), re-judged by judge x2") in out


def test_stability_command_writes_the_new_names_and_groups_by_meaning_on_request(
        engine, settings, tmp_path, capsys):
    import json

    from evalcore.cli import main

    lines = ["question,answer"] + [f'"{q}",{a}' for q, a in QUESTIONS]
    (tmp_path / "apples.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    from evalcore.dataset import import_dataset

    import_dataset(engine, tmp_path / "apples.csv", name="apples",
                   mapping={"question": "question", "reference": "answer", "task_type": "math",
                            "language": "en"})
    with FaultServer(FaultConfig(responder=Planted())) as server:
        add_model(settings, server, concurrency=2)
        out = tmp_path / "s.json"
        assert main(["stability", "--dataset", "apples", "--model", "fake", "--rounds", "4",
                     "--schedule", "sequential", "--group-by-meaning", "--json", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert "then e5 cosine >= 0.9)" in report["summary"]["answer_grouping"]
    assert report["stability_results"]["2"]["answer_groups"] == [
        {"answer": "15", "label": "15", "count": 2, "correct": 2, "wrong": 0, "example": "The answer is 15."},
        {"answer": "16", "label": "16", "count": 2, "correct": 0, "wrong": 2, "example": "The answer is 16."}]
    # rules verdicts (no judge to flip): q0, q1, q3 4/4 -> 1; q4 3/4 -> 1/2; q2, q5 -> 0
    assert report["summary"]["mg_pass_at_k"]["4"] == pytest.approx((1 + 1 + 1 + 0.5) / 6)
    assert "semantic entropy: mean 0.116 nats" in capsys.readouterr().out
