"""A rules-judged run on items without a reference answer is refused before it starts."""
from __future__ import annotations

import pytest

from evalcore.dataset.records import Question
from evalcore.errors import RunError
from evalcore.scorers.readiness import missing_references, require_references


def _q(idx, reference):
    return Question(idx=idx, question=f"q{idx}", reference=reference, task_type="open")


def test_refuses_rules_run_without_references_and_names_the_way_out() -> None:
    questions = [_q(0, "4"), _q(1, None), _q(2, " "), _q(3, "nan")]
    assert missing_references(questions) == [1, 2, 3]
    with pytest.raises(RunError) as err:
        require_references(questions, dataset="mapped", judge="rules", kind="stability")
    text = str(err.value)
    assert "'mapped'" in text and "3 of 4 items" in text and "judge model" in text


def test_judge_models_fairness_runs_and_complete_datasets_pass() -> None:
    bare = [_q(0, None)]
    require_references(bare, dataset="d", judge="gpt", kind="stability")
    require_references(bare, dataset="d", judge="rules", kind="fairness")
    require_references([_q(0, "1")], dataset="d", judge="rules", kind="robustness")
