"""Numeric (math) scorer on realistic replies: verbose, self-correcting, zh/en, full-width."""
from __future__ import annotations

import csv
import math

import pytest

from evalcore.dataset.records import Question
from evalcore.scorers.rules import (
    extract_number,
    is_invalid,
    make_numeric_scorer,
    numeric,
    parse_reference_number,
)

TREES = "在一正方形花池的4周栽了44棵柳树，每两棵柳树之间的间隔是20米，这个正方形的周长=多少米？"


def q(reference: str) -> Question:
    return Question(idx=0, question=TREES, reference=reference, task_type="math", language="zh")


@pytest.mark.parametrize("reply, reference, expected", [
    # self-correction: the last "answer is" wins over the earlier "= 880"
    ("The store had 44 trees and 20 m spacing, so the perimeter is 44*20 = 880 metres... "
     "wait, the answer is 800.", "800.0", True),
    # restates the question's numbers (4, 44, 20), concludes without a marker
    ("在一正方形花池的4周栽了44棵柳树，每两棵柳树之间的间隔是20米，每边有44÷4+1=12棵，"
     "所以周长是800米。", "800.0", True),
    ("答案是：800米", "800.0", True),
    ("答案是：８００米。验证：４０×２０＝８００", "800.0", True),        # full-width digits
    ("所以周长是(12-1)×20×4=880米", "800.0", False),                   # wrong, not invalid
    ("**Answer:** 14.4 yuan", "14.4", True),
    ("Step 1: 120 * 80% = 96. Step 2: 96 * 15% = **14.4**. Check: 14.4 / 96 = 0.15", "14.4",
     True),                                                              # bold beats the check
    ("The factory must make 3,000 - 750 = 2,250 parts in 15 days, so 150 per day.", "150.0",
     True),
    ("x = 9*0.8/(1+20%) = 6", "6.0", True),
    ("剩下的路要4小时修完。", "4.0", True),
    ("The temperature dropped to -5 degrees.", "-5", True),
    ("答：面积增加了 4分之3 平方厘米", "0.75", True),                  # Chinese fraction
    ("The answer is 3/4.", "0.75", True),
    ("It takes 2 1/2 hours.", "2.5", True),                             # mixed number
    ("答案为2又1/2小时", "2.5", True),
    ("买文具用去的钱占80%", "0.8", True),                               # % read as 0.8 ...
    ("The share is 80%.", "80", True),                                  # ... or as 80
    ("The share is 80.", "0.8", False),                                 # a bare 80 is not 0.8
    ("The answer is 4.375", "4.375", True),
    ("The answer is 4.38", "4.375", False),                             # beyond 1e-4 relative
    ("总产量是3万吨", "30000", True),
    ("I think it is 799.9", "800.0", False),                           # 1.25e-4 off
    ("I think it is 799.99", "800.0", True),                           # 1.25e-5: within
    ("最终答案：$\\boxed{150}$，因为 2250÷15=150，共用时15天", "150.0", True),
])
def test_numeric_replies(reply: str, reference: str, expected: bool) -> None:
    score = numeric(reply, q(reference))
    assert score.correct is expected, score.reason
    assert score.value == (1.0 if expected else 0.0)
    assert not is_invalid(score)


@pytest.mark.parametrize("reply", ["I don't know.", "这道题无法计算。", ""])
def test_no_number_is_invalid(reply: str) -> None:
    score = numeric(reply, q("800.0"))
    assert score.correct is False and is_invalid(score)
    assert score.reason.startswith("invalid")


@pytest.mark.parametrize("reference", [None, "", "eight hundred"])
def test_unreadable_reference_is_unjudged(reference) -> None:
    score = numeric("800", q(reference) if reference is not None else
                    Question(idx=0, question="x", task_type="math"))
    assert score.correct is None


def test_extracted_text_and_reason_name_the_number() -> None:
    score = numeric("所以周长是(12-1)×20×4=880米", q("800"))
    assert score.extracted == "880"
    assert "880" in score.reason and "800" in score.reason


def test_tolerance_is_configurable() -> None:
    loose = make_numeric_scorer(rel_tol=1e-2)
    assert loose("The answer is 4.38", q("4.375")).correct is True
    assert numeric("The answer is 4.38", q("4.375")).correct is False
    strict_zero = make_numeric_scorer(abs_tol=0.0)
    assert strict_zero("0.0000001", q("0")).correct is False
    assert numeric("0.0000001", q("0")).correct is True


def test_minus_between_numbers_is_subtraction() -> None:
    assert extract_number("44 - 4 = 40").values == (40.0,)
    assert extract_number("44-4").values == (4.0,)


def test_thousands_separator_vs_chinese_comma() -> None:
    assert extract_number("共1,200个").values == (1200.0,)
    # "44，20" is two numbers (full-width comma), the last one is the answer
    assert extract_number("分别是44，20").values == (20.0,)


def test_math23k_references_all_parse(shared_datasets) -> None:
    path = shared_datasets / "trusted-evaluation" / "Math23Ktest.csv"
    with path.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows
    for row in rows:
        ref = parse_reference_number(row["answer"])
        assert ref is not None and math.isclose(ref, float(row["answer"])), row
        # a typical verbose zh reply that restates the question, then concludes
        reply = f"{row['question']}解：{row['equation']}，答案是{row['answer']}。"
        assert numeric(reply, q(row["answer"])).correct is True, (reply, row["answer"])
