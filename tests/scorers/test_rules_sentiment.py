"""Sentiment scorer: the method's keyword rule, both or neither label = invalid."""
from __future__ import annotations

import csv

import pytest

from evalcore.dataset.records import Question
from evalcore.scorers.rules import is_invalid
from evalcore.scorers.rules_labels import extract_sentiment, sentiment


def review(reference: str, text: str = "good product easy handling") -> Question:
    return Question(idx=0, question=text, reference=reference, task_type="sentiment")


@pytest.mark.parametrize("reply, label", [
    ("Positive", "positive"),
    ("The sentiment of this review is positive.", "positive"),
    ("NEGATIVE.", "negative"),
    ("This review is negative because the product doesn't work and the buyer wants a refund.",
     "negative"),
    ("该评论的情感是正面的。", "positive"),
    ("这条评论表达了消极的情绪。", "negative"),
    ("情感倾向：负面", "negative"),
    ("评价很积极，用户对产品满意。", "positive"),
    ("'value for money' indicates positive", "positive"),
    ("Sentiment: **negative**", "negative"),
    ("ｐｏｓｉｔｉｖｅ", "positive"),               # full-width
    ("It is not negative.", "negative"),          # keyword rule: no negation handling
])
def test_sentiment_labels(reply: str, label: str) -> None:
    assert extract_sentiment(reply)[0] == label
    assert sentiment(reply, review("positive")).correct is (label == "positive")
    assert sentiment(reply, review("negative")).correct is (label == "negative")


@pytest.mark.parametrize("reply", [
    "It is neither positive nor negative.",
    "Choose between 'positive' and 'negative': the review is mixed.",
    "既有正面也有负面的评价。",
    "The review is neutral.",
    "中性",
    "",
    "positively surprising",                      # not the keyword itself
])
def test_both_or_neither_is_invalid(reply: str) -> None:
    score = sentiment(reply, review("positive"))
    assert score.correct is False and is_invalid(score), score.reason
    assert "invalid" in score.reason


def test_reference_forms_and_unjudged() -> None:
    assert sentiment("positive", review("1")).correct is True
    assert sentiment("positive", review("Negative")).correct is False
    assert sentiment("positive", review("neutral")).correct is None


def test_flipkart_references_all_readable(shared_datasets) -> None:
    path = shared_datasets / "trusted-evaluation" / "Flipkarttest.csv"
    with path.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows
    for row in rows:
        q = review(row["Sentiment"], row["Summary"])
        assert sentiment(f"The review is {row['Sentiment']}.", q).correct is True, row
        other = "negative" if row["Sentiment"] == "positive" else "positive"
        assert sentiment(f"The review is {other}.", q).correct is False, row
