"""G-Pass@k, answer groups, semantic entropy and judge flicker, checked against scipy and
hand computations."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import hypergeom

from evalcore.metrics.consistency import answer_key
from evalcore.metrics.repeats import (
    TAUS,
    accuracy_by_entropy,
    entropy_band,
    g_pass_at_k,
    group_answers,
    groups_entropy,
    groups_line,
    judge_noise,
    k_values,
    merge_groups,
    mg_pass_at_k,
    question_flicker,
    run_g_pass,
    semantic_entropy,
    threshold,
)
from evalcore.metrics.stability import MetricInputError, pass_at_k, pass_hat_k, stability_summary


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 10, 16, 33])
def test_g_pass_equals_scipy_hypergeometric_tail(n: int) -> None:
    for c in range(n + 1):
        for k in range(1, n + 1):
            for tau in TAUS + (0.1, 0.3, 0.6, 0.9):
                m = math.ceil(round(tau * k, 9))
                want = float(hypergeom.sf(m - 1, n, c, k))
                assert g_pass_at_k(n, c, k, tau) == pytest.approx(want, abs=1e-12), (n, c, k, tau)


@pytest.mark.parametrize("n", [1, 2, 5, 10, 20])
def test_g_pass_limits_are_pass_at_k_and_pass_hat_k(n: int) -> None:
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert g_pass_at_k(n, c, k, 1e-9) == pytest.approx(pass_at_k(n, c, k), abs=1e-15)
            assert g_pass_at_k(n, c, k, 1.0) == pytest.approx(pass_hat_k(n, c, k), abs=1e-15)


def test_threshold_reads_tau_as_a_decimal() -> None:
    assert threshold(0.1, 10) == 1  # binary 0.1 * 10 is a hair above 1
    assert threshold(0.75, 4) == 3 and threshold(0.25, 3) == 1 and threshold(1.0, 7) == 7


def test_mg_pass_by_hand() -> None:
    # n=4, c=2, k=2: ceil(2/2)+1 = 2 -> only tau=1: C(2,2)/C(4,2) = 1/6; mG = 2/2 * 1/6
    assert mg_pass_at_k(4, 2, 2) == pytest.approx(1 / 6)
    # n=4, c=3, k=4: i = 3, 4: G(>=3) = 1, G(>=4) = 0 -> 2/4 * 1 = 0.5
    assert mg_pass_at_k(4, 3, 4) == pytest.approx(0.5)
    # equals the integral form on a fine grid of tau in (0.5, 1]
    n, c, k = 10, 7, 6
    grid = [0.5 + (i + 0.5) / 6000 for i in range(3000)]
    integral = 2 * sum(g_pass_at_k(n, c, k, t) for t in grid) / 6000
    assert mg_pass_at_k(n, c, k) == pytest.approx(integral, abs=1e-3)
    with pytest.raises(MetricInputError):
        mg_pass_at_k(4, 2, 1)


def test_k_values() -> None:
    assert k_values(1) == [1]
    assert k_values(5) == [1, 2, 4, 5]
    assert k_values(8) == [1, 2, 4, 8]
    assert k_values(100) == [1, 2, 4, 8, 16, 32, 64, 100]


def test_run_g_pass_matches_pass_k_of_the_stability_summary() -> None:
    verdicts = {0: [1, 1, 0, 1], 1: [0, 0, 0, 0], 2: [1, None, 1, 0], 3: [1, 1, 1, 1]}
    summary = stability_summary(verdicts, 4)
    pairs = [(q.trials, q.correct_count) for q in summary.questions]
    g, mg = run_g_pass(pairs, [1, 2, 3, 4])
    for k in ("1", "2", "3"):
        assert g[k]["1.0"] == pytest.approx(summary.pass_hat_k[k])
    assert g["4"]["1.0"] == pytest.approx(summary.pass_hat_k["4"])  # only 3 questions
    # by hand: k=2, tau=0.5 (>= 1 right) = pass@2 averaged
    assert g["2"]["0.5"] == pytest.approx(summary.pass_at_k["2"])
    assert mg["2"] == pytest.approx((1 / 2 + 0 + 1 / 3 + 1) / 4)  # pass^2 per question
    assert "1" not in mg


def test_groups_count_verdicts_and_order() -> None:
    replies = ["It is 42.", "42", "41", "The answer: 42", None, "no idea", "41"]
    extracted = ["42", "42", "41", "42", None, None, "41"]
    verdicts = [True, True, False, False, None, False, False]
    groups = group_answers(replies, verdicts, extracted)
    assert [(g.answer, g.count, g.correct, g.wrong) for g in groups] == [
        ("42", 3, 2, 1), ("41", 2, 0, 2), (None, 1, 0, 1)]
    assert groups[0].example == "It is 42."
    js = [g.to_json_dict() for g in groups]
    assert groups_line(js) == "2 answers: 3x '42', 2x '41', 1x no answer"
    assert groups_entropy(groups) == pytest.approx(-(0.6 * math.log(0.6) + 0.4 * math.log(0.4)))


def test_open_answers_group_by_normalised_text() -> None:
    groups = group_answers(["Paris.", "paris", " PARIS ", "Lyon"], [1, 1, 1, 0])
    assert [(g.answer, g.count) for g in groups] == [("paris", 3), ("lyon", 1)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(max_size=12)), min_size=1, max_size=30),
       st.data())
def test_groups_of_hostile_replies_add_up(replies, data) -> None:
    verdicts = data.draw(st.lists(st.one_of(st.none(), st.booleans()),
                                  min_size=len(replies), max_size=len(replies)))
    groups = group_answers(replies, verdicts)
    assert sum(g.count for g in groups) == sum(r is not None for r in replies)
    assert [g.count for g in groups] == sorted((g.count for g in groups), reverse=True)
    h = groups_entropy(groups)
    named = [g for g in groups if g.answer is not None]
    for g in named:  # shown as one of its own replies as given, which groups to its key
        assert g.label in {r.strip() for r in replies if r is not None}
        assert answer_key(g.label) == g.answer and sum(g.forms.values()) == g.count
    if named:
        assert 0.0 <= h <= math.log(len(named)) + 1e-12
    else:
        assert h is None


def test_semantic_entropy_by_hand() -> None:
    assert semantic_entropy([10]) == 0.0
    assert semantic_entropy([5, 5]) == pytest.approx(math.log(2))
    assert semantic_entropy([]) is None
    assert entropy_band(0.0) == "0 (one answer)" and entropy_band(0.69) == "0.5-1.0"
    table = accuracy_by_entropy([(0.0, 1.0), (0.0, 0.5), (0.69, 0.2), (1.5, 0.0)])
    assert [(r["band"], r["questions"], r["accuracy"]) for r in table] == [
        ("0 (one answer)", 2, 0.75), ("0-0.5", 0, None), ("0.5-1.0", 1, 0.2), (">1.0", 1, 0.0)]


def test_flicker_of_the_same_answer_is_the_judges() -> None:
    # the model says the same thing every round; the judge says right, wrong, right, wrong
    f = question_flicker(["42"] * 4, [True, False, True, False], {0: [True, True]})
    assert f.observed == pytest.approx(0.25)
    assert f.model == 0.0 and f.judge_share == 1.0
    assert f.flicker_answers == [{"answer": "42", "label": "42", "rounds": [1, 2, 3, 4], "right": 4, "wrong": 2}]


def test_flicker_between_different_answers_is_the_models() -> None:
    f = question_flicker(["42", "41", "42", "41"], [True, False, True, False],
                         {0: [True, True], 1: [False, False]})
    assert f.observed == pytest.approx(0.25) and f.model == pytest.approx(0.25)
    assert f.judge_share == 0.0 and f.flicker_answers == []


def test_flicker_mixed_and_run_level_noise() -> None:
    # "41" is judged right once by the run, wrong by both re-judgements: majority wrong
    mixed = question_flicker(["42", "41", "42", "41"], [True, True, True, False],
                             {1: [False, False]})
    assert mixed.observed == pytest.approx(0.75 * 0.25)
    assert mixed.model == pytest.approx(0.25)  # the judge hid some of the model's spread
    assert mixed.judge_share == 0.0
    steady = question_flicker(["7"] * 2, [True, True], {})
    judge = question_flicker(["42"] * 4, [True, False, True, False], {})
    noise = judge_noise([mixed, steady, judge])
    assert noise["observed_spread"] == pytest.approx(0.1875 + 0.25)
    assert noise["judge_share_of_spread"] == pytest.approx((0.4375 - 0.25) / 0.4375)
    assert noise["flicker_answers"] == 2 and noise["questions_with_judge_flicker"] == 2


def test_questions_frame_ranks_by_semantic_entropy() -> None:
    from evalcore.report.frames import questions_frame

    def res(h, line):
        return {"correct_count": 1, "answered": 2, "success_rate": 0.5, "ci_low": 0.1,
                "ci_high": 0.9, "class": "unstable", "semantic_entropy": h, "answers_line": line}

    report = {"repetition_count": 2, "stability_results": {
        "0": res(0.0, "1 answer: 2x '4'"), "1": res(0.69, "2 answers: 1x '4', 1x '5'"),
        "2": res(None, "no answer")}}
    frame = questions_frame(report, sort_by="semantic_entropy")
    assert list(frame["item"]) == [1, 0, 2]
    assert frame["answers"].iloc[0] == "2 answers: 1x '4', 1x '5'"


def test_merge_by_meaning_joins_close_answers_biggest_first() -> None:
    from evalcore.metrics.repeats import AnswerGroup, merge_by_meaning

    groups = [AnswerGroup("paris", 3, 3, 0, "Paris.", 0), AnswerGroup("lyon", 1, 0, 1, "Lyon", 1),
              AnswerGroup("it is paris", 2, 1, 1, "It is Paris", 2),
              AnswerGroup(None, 1, 0, 1, "", 3)]
    vectors = {"paris": [1.0, 0.0], "it is paris": [0.99, 0.1], "lyon": [0.6, 0.8]}
    merged = merge_by_meaning(groups, vectors, threshold=0.945)
    assert [(g.answer, g.count, g.correct, g.wrong) for g in merged] == [
        ("paris", 5, 4, 1), ("lyon", 1, 0, 1), (None, 1, 0, 1)]
    assert groups[0].count == 3  # the input is not changed
    assert [g.count for g in merge_by_meaning(groups, vectors, threshold=0.5)] == [6, 1]


def test_meaning_threshold_is_the_best_on_the_labelled_pairs() -> None:
    """Recomputes the calibration the threshold's docstring states (e5 on 40 pairs)."""
    import json
    from pathlib import Path

    import numpy as np

    from evalcore.metrics.repeats import MEANING_THRESHOLD
    from evalcore.scorers.text import embedding_cosine_batch

    data = json.loads((Path(__file__).with_name("meaning_pairs.json")).read_text("utf-8"))
    same = np.array(embedding_cosine_batch(*zip(*data["same"])))
    diff = np.array(embedding_cosine_batch(*zip(*data["different"])))

    def right(t: float) -> int:
        return int((same >= t).sum() + (diff < t).sum())

    grid = [round(0.8 + 0.005 * i, 3) for i in range(39)]
    assert right(MEANING_THRESHOLD) == 34 == max(right(t) for t in grid)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 40).flatmap(lambda n: st.tuples(
    st.just(n), st.integers(0, n), st.integers(1, n))))
def test_g_pass_falls_with_tau_between_pass_hat_k_and_pass_at_k(nck) -> None:
    n, c, k = nck
    values = [g_pass_at_k(n, c, k, t) for t in (1e-9,) + TAUS]
    assert all(a >= b - 1e-12 for a, b in zip(values, values[1:]))
    assert pass_hat_k(n, c, k) - 1e-12 <= values[-1] and values[0] <= pass_at_k(n, c, k) + 1e-12
    if k >= 2:  # floor(k/2) terms: a perfect question scores 2 floor(k/2) / k (OpenCompass)
        top = 2 * (k // 2) / k
        assert pass_hat_k(n, c, k) * top - 1e-12 <= mg_pass_at_k(n, c, k) <= top + 1e-12
        assert mg_pass_at_k(n, n, k) == pytest.approx(top)
    assert g_pass_at_k(n, c, k, 0.0) == pytest.approx(pass_at_k(n, c, k))  # at least one


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), st.text(max_size=8)),
                          st.one_of(st.none(), st.booleans())), min_size=1, max_size=20),
       st.dictionaries(st.integers(0, 19), st.lists(st.one_of(st.none(), st.booleans()),
                                                      max_size=4), max_size=5))
def test_flicker_of_hostile_rounds_stays_in_range(rounds, rejudged) -> None:
    replies, verdicts = [r for r, _ in rounds], [v for _, v in rounds]
    f = question_flicker(replies, verdicts, rejudged)
    assert 0.0 <= f.observed <= 0.25 + 1e-12 and 0.0 <= f.model <= 0.25 + 1e-12
    assert f.judge_share is None or 0.0 <= f.judge_share <= 1.0
    noise = judge_noise([f])
    assert noise["judge_share_of_spread"] is None or 0 <= noise["judge_share_of_spread"] <= 1


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.sampled_from(["math", "choice", "sentiment", "multi_tf"]))
def test_extracting_any_reply_never_raises(reply, task_type) -> None:
    from evalcore.dataset.records import Question
    from evalcore.report.repeats import extract_answer

    question = Question(idx=0, question="Pick one", reference="[1, 0]" if task_type ==
                        "multi_tf" else "1", choices=["x", "y", "z"], task_type=task_type)
    found = extract_answer(reply, question)
    assert found is None or isinstance(found, str)


def test_groups_line_of_replies_without_an_answer():
    """Walked on CODAH with the local model: two unreadable replies read
    "0 answers: 2x no answer"."""
    assert groups_line([{"answer": None, "count": 2}]) == "no answer in 2 rounds"
    assert groups_line([{"answer": None, "count": 1}, {"answer": "B", "count": 1}]) == \
        "1 answer: 1x no answer, 1x 'B'"


def test_open_groups_are_shown_as_a_reply_as_given():
    """Walked on the local model: an open group's label was its normalised key
    ('if i don t have ...'); it is now its most frequent reply as given (ties: first
    seen), normalisation only groups, and a meaning merge keeps counting the forms."""
    replies = ["If I don't have it, ask.", "if i don't have it ask", "If I don't have it, ask.",
               "Lyon!", "LYON"]
    groups = group_answers(replies, [True, True, None, False, False])
    assert [(g.answer, g.label, g.count) for g in groups] == [
        ("if i don t have it ask", "If I don't have it, ask.", 3), ("lyon", "Lyon!", 2)]
    js = [g.to_json_dict() for g in groups]
    assert groups_line(js) == "2 answers: 3x \"If I don't have it, ask.\", 2x 'Lyon!'"
    merged = merge_groups(group_answers(["Lyon", "lyon.", "the city of Lyon",
                                         "The city of Lyon", "The city of Lyon"], [None] * 5),
                          lambda kept, g: True)
    assert [(g.answer, g.label, g.count) for g in merged] == [
        ("the city of lyon", "The city of Lyon", 5)]
    # an extracted answer keeps its first reading
    assert group_answers(["It is 42.", "42"], [True, True], ["42", "42"])[0].label == "42"
    flicker = question_flicker(["Paris.", "paris", "PARIS"], [True, False, True], {})
    assert flicker.flicker_answers[0]["label"] == "Paris."
