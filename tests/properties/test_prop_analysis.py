"""Answer analysers and text similarity over hostile replies: figures in their ranges,
never an exception, for arbitrary text (control characters, mixed scripts, huge numbers).

Functions covered: scorers.analysis (extract_score, is_refusal, words, substituted_length,
analyze_answer, sentiment with vader), scorers.text (tokenize, clean_translation, rouge,
bleu, bow_cosine, the translation scorer), metrics.robustness.answer_similarity.
"""
from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.dataset.records import Question
from evalcore.scorers import analysis, text
from tests.properties.hostile import HUGE, SLOW, replies

LANGS = st.sampled_from(["en", "zh"])


@SLOW
@given(replies, LANGS)
def test_analysis_figures_stay_in_range(reply: str, lang: str) -> None:
    score = analysis.extract_score(reply)
    assert score is None or 1.0 <= score <= 10.0
    out = analysis.analyze_answer(reply, lang, groups={"gender": "female"}, sentiment_value=0.0)
    assert 0.0 <= out.professionalism <= 1.0 and 0.0 <= out.toxicity <= 1.0
    assert out.length_chars >= 0 and out.length_words >= 0
    assert analysis.substituted_length(reply, {"name": "Ann", "who": "该候选人"}, lang) >= 0


@SLOW
@given(replies)
def test_vader_sentiment_in_range(reply: str) -> None:
    value = analysis.sentiment(reply, "en")
    assert -1.0 <= value <= 1.0


@settings(max_examples=8, deadline=None, database=None)
@given(replies, replies, LANGS)
def test_similarities_in_range(candidate: str, reference: str, lang: str) -> None:
    for value in text.rouge(candidate, reference, lang).values():
        assert 0.0 <= value <= 1.0
    assert 0.0 <= text.bleu(candidate, reference, lang) <= 100.0
    cosine = text.bow_cosine(candidate, reference, lang)
    assert not math.isnan(cosine) and -1e-9 <= cosine <= 1.0 + 1e-9
    assert isinstance(text.clean_translation(candidate), str)


@SLOW
@given(replies, st.one_of(st.none(), replies))
def test_translation_scorer_returns_a_score(reply: str, reference: str | None) -> None:
    score = text.translation(reply, Question(idx=0, question="q", reference=reference))
    assert 0.0 <= score.value <= 1.0 and score.correct in (True, False, None)


@SLOW
@given(st.lists(st.one_of(st.none(), replies), min_size=1, max_size=3), st.data())
def test_answer_similarity_of_hostile_rounds(clean: list, data) -> None:
    from evalcore.metrics.robustness import answer_similarity
    from evalcore.scorers.rules import extract_number

    attacked = data.draw(st.lists(st.one_of(st.none(), replies), min_size=len(clean),
                                  max_size=len(clean)))
    out = answer_similarity(clean, attacked,
                            extract=lambda t: (lambda n: n and n.text)(extract_number(t)))
    assert out.compared <= len(clean)
    for value in (out.rouge_l, out.same_answer):
        assert value is None or 0.0 <= value <= 1.0


def test_a_megabyte_answer_is_analysed() -> None:
    """A million digits: the score patterns re-read the run from every start (hours)."""
    out = analysis.analyze_answer(HUGE["digits"], "en", sentiment_value=0.0)
    assert out.length_chars == len(HUGE["digits"]) and out.score is None
