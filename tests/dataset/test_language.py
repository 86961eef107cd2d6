"""One language rule everywhere: the importer, the scorers and the attacks ask the same function."""
from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.dataset import parse_dataset
from evalcore.dataset.language import detect_language, majority_language, text_language


@pytest.mark.parametrize("text, expected", [
    ("小明有5个苹果，吃了2个，还剩几个？", "zh"),
    ("Tom has 5 apples and eats 2. How many are left?", "en"),
    ("usermode-helper API 是个很简单的 API", "zh"),   # CJK characters outnumber Latin words
    ("I love 北京 very much", "en"),                    # Latin words outnumber CJK characters
    ("答案是 B", "zh"),
    ("3 + 5 = ?", None),                               # nothing to tell by
    ("", None),
])
def test_text_language(text: str, expected: str | None) -> None:
    assert text_language(text) == expected
    assert detect_language(text) == (expected or "en")
    assert detect_language(text, default="zh") == (expected or "zh")


def test_majority_language() -> None:
    assert majority_language(["你好世界", "Hello world", "再见"]) == "zh"
    assert majority_language(["你好", "Hello"]) == "zh"  # a tie goes to Chinese
    assert majority_language(["12", "3.5"], default="zh") == "zh"
    assert majority_language(["12", "Hello there"]) == "en"


def test_the_scorers_use_the_same_function() -> None:
    from evalcore.perturb import guard  # noqa: F401 - imports detect_language from scorers.text
    from evalcore.scorers import text

    assert text.detect_language is detect_language


def test_an_english_file_in_the_math23k_layout_is_english(tmp_path: Path) -> None:
    path = tmp_path / "math_en.csv"
    path.write_text("id,question,segmented_text,equation,answer\n"
                    "1,Tom has 5 apples and eats 2. How many are left?,,x=5-2,3\n"
                    "2,A pen costs 2 yuan. What do 6 pens cost?,,x=2*6,12\n"
                    "3,3 + 5 = ?,,x=3+5,8\n", encoding="utf-8")
    parsed = parse_dataset(path)
    assert (parsed.format, parsed.language) == ("math23k", "en")
    assert [q.language for q in parsed.questions] == ["en", "en", "en"]


def test_a_question_without_words_takes_the_files_language(tmp_path: Path) -> None:
    path = tmp_path / "math_zh.csv"
    path.write_text("id,question,segmented_text,equation,answer\n"
                    "1,小明有5个苹果，吃了2个，还剩几个？,,x=5-2,3\n"
                    "2,3 + 5 = ?,,x=3+5,8\n", encoding="utf-8")
    parsed = parse_dataset(path)
    assert parsed.language == "zh"
    assert [q.language for q in parsed.questions] == ["zh", "zh"]


def test_import_and_scoring_agree_on_the_shared_translation_file(shared_datasets: Path) -> None:
    """Two rows of translation2019zh hold Chinese in the 'english' column: they are Chinese
    items (prompted zh -> en), and the scorer reads their English reference as English."""
    from evalcore.scorers.text import detect_language as scoring_rule

    parsed = parse_dataset(shared_datasets / "trusted-evaluation" / "translation2019zhtest.csv")
    assert parsed.language == "en"
    for q in parsed.questions:
        assert q.language == scoring_rule(q.question)
    swapped = [q for q in parsed.questions if q.language == "zh"]
    assert len(swapped) == 2 and all(scoring_rule(q.reference) == "en" for q in swapped)
