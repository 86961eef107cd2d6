"""Safeguards: numbers, options, entities, reference words, similarity, unchanged."""
from __future__ import annotations

import pytest

from evalcore.dataset.records import Question
from evalcore.perturb import DEFAULT_SIMILARITY_THRESHOLD, FLAGS, check_attack, numbers


def q(text: str, **kw) -> Question:
    return Question(idx=0, question=text, **kw)


def flags(question: Question, attacked: str) -> list[str]:
    return check_attack(question, attacked, embed=False)[1]


def test_flag_names_are_stable():
    assert FLAGS == ("number_changed", "option_dropped", "option_label_changed",
                     "entity_changed", "reference_changed", "low_similarity", "unchanged",
                     "translation_failed", "length_ratio", "repeated_ngrams",
                     "punctuation_run", "cut_off", "pivot_language_left")


@pytest.mark.parametrize("a, b, same", [
    ("张明有120元钱，买书用去80%", "张明有120元钱，买书花去80%", True),
    ("有120元钱", "有12元钱", False),
    ("间隔是20米", "间隔是20,米", True),         # noise beside the number keeps the value
    ("间隔是20米", "间隔是2 0米", False),        # a split number is a change
    ("3个同学跳绳", "三个同学跳绳", True),        # same value, other script
    ("每两棵柳树", "每三棵柳树", False),
    ("(5/8)的数", "(5/8)的数", True),
    ("用去(1/4)", "用去(1/5)", False),
    ("He was 5.", "He was five.", True),
    ("I have three dogs", "I have two dogs", False),
    ("答案是20.0", "答案是20", True),
])
def test_numbers_compare_by_value(a, b, same):
    assert (numbers(a) == numbers(b)) is same


def test_a_changed_number_is_flagged():
    question = q("修一段长324米的路，前8小时共修了240米", task_type="math", reference="4")
    assert "number_changed" in flags(question, "修一段长342米的路，前8小时共修了240米")
    assert flags(question, "修一段长324米的路嗯，前8小时共修了240米") == []


def test_unchanged_is_flagged_with_similarity_one():
    question = q("I feel sickly. I think")
    sim, found = check_attack(question, "I feel sickly. I think")
    assert found == ["unchanged"] and sim == 1.0


def test_glued_options_dropped_or_relabelled():
    text = "I feel sickly. I think choice0:I will fly.choice1:I will stay home."
    question = q(text, choices=["I will fly.", "I will stay home."], task_type="choice",
                 reference="1")
    assert "option_dropped" in flags(question, text.replace("choice1:I will stay home.", ""))
    assert "option_label_changed" in flags(question, text.replace("choice1:", "choice2:"))
    assert "option_dropped" in flags(question, text.replace("stay home", "remain home"))
    assert flags(question, text.replace("I think", "I believe")) == []


def test_entities_and_reference_words():
    question = q("Carl has two dogs named Sundance and Midnight.",
                 choices=["Carl walks them.", "The dogs bark at Midnight."],
                 task_type="choice", reference="1")
    assert flags(question, "Carl has two dogs named Sundance and ? Midnight.") == []
    assert "entity_changed" in flags(question, "Carl has two dogs named Sunny and Midnight.")
    assert "reference_changed" in flags(question, "Carl has two hounds named Sundance and Midnight.")
    zh = q("小强跳了240下，小明跳的是小强的(5/8)", task_type="math", reference="150")
    assert "entity_changed" in flags(zh, "小刚跳了240下，小明跳的是小刚的(5/8)")


def test_low_similarity_is_flagged():
    question = q("一个工厂要生产3000个零件，前6天生产了750个，剩下的要在15天内完成，平均每天生产多少个？")
    unrelated = "I went to the beach with my friends and we swam all day in the sea 3000 750 6 15."
    sim, found = check_attack(question, unrelated)
    assert sim is not None and sim < DEFAULT_SIMILARITY_THRESHOLD
    assert "low_similarity" in found
    sim, found = check_attack(question, question.question.replace("完成", "完结"))
    assert sim > DEFAULT_SIMILARITY_THRESHOLD and found == []
    # the threshold is a parameter
    assert "low_similarity" in check_attack(question, question.question.replace("完成", "完结"),
                                            threshold=0.9999)[1]
