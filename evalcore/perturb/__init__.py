"""Perturb: attack questions (character noise and typos, synonyms, back-translation) and
check that an attacked question keeps its numbers, options, entities and answer words.

Rooms: `tokens.py` (segmentation, protected tokens), `lexicon.py` + `data/lexicon.toml`
(word lists), `char.py`, `word.py`, `sentence.py` (translators), `guard.py` (flags,
similarity), `attack.py` (one entry point per batch or item). Importing this package is
light: jieba, the word vectors, NLTK and the e5 model load on first use.
"""
from evalcore.perturb.attack import (
    COMMON_PARAMS,
    LEVELS,
    PARAMS,
    AttackResult,
    Level,
    attack_question,
    attack_questions,
    resolve_params,
)
from evalcore.perturb.char import CHAR_OPS, edit_count
from evalcore.perturb.guard import (
    DEFAULT_SIMILARITY_THRESHOLD,
    FLAGS,
    check_attack,
    numbers,
)
from evalcore.perturb.sentence import (
    GoogleTranslator,
    LLMTranslator,
    TranslationError,
    Translator,
    back_translate,
    make_translator,
)
from evalcore.perturb.word import load_zh_synonyms

__all__ = [
    "CHAR_OPS",
    "COMMON_PARAMS",
    "DEFAULT_SIMILARITY_THRESHOLD",
    "FLAGS",
    "LEVELS",
    "PARAMS",
    "AttackResult",
    "GoogleTranslator",
    "LLMTranslator",
    "Level",
    "TranslationError",
    "Translator",
    "attack_question",
    "attack_questions",
    "back_translate",
    "check_attack",
    "edit_count",
    "load_zh_synonyms",
    "make_translator",
    "numbers",
    "resolve_params",
]
