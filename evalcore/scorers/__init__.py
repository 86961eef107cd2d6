"""Scorers: turn (reply, question) into a `Score`.

Rules scorers read the final answer out of free text (numbers, options, labels, 0/1 lists);
text scorers measure similarity (ROUGE, BLEU, cosine); the judge asks another model.
`score_answer` picks the scorer by task type.
"""
from evalcore.scorers.base import Score, Scorer
from evalcore.scorers.registry import (
    DEFAULT_SCORER,
    SCORERS,
    get_scorer,
    rules_scorer,
    score_answer,
    scorer_names,
)
from evalcore.scorers.rules import extract_number, is_invalid, make_numeric_scorer, numeric
from evalcore.scorers.rules_choice import bias_choice, choice, extract_choice
from evalcore.scorers.rules_labels import (
    exact_match,
    extract_bits,
    extract_sentiment,
    multi_tf,
    prf,
    sentiment,
)
from evalcore.scorers.text import (
    TextSimilarity,
    bleu,
    bow_cosine,
    corpus_bleu,
    embedding_cosine,
    embedding_cosine_batch,
    make_translation_scorer,
    rouge,
    rouge_batch,
    similarity,
    similarity_batch,
    translation,
)

__all__ = [
    "DEFAULT_SCORER", "SCORERS", "Score", "Scorer", "TextSimilarity", "bias_choice", "bleu",
    "bow_cosine", "choice", "corpus_bleu", "embedding_cosine", "embedding_cosine_batch",
    "exact_match", "extract_bits", "extract_choice", "extract_number", "extract_sentiment",
    "get_scorer", "is_invalid", "make_numeric_scorer", "make_translation_scorer", "multi_tf",
    "numeric", "prf", "rouge", "rouge_batch", "rules_scorer", "score_answer", "scorer_names",
    "sentiment", "similarity", "similarity_batch", "translation",
]
