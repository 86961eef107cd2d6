"""Helpers for the perturbation tests: offline language data or a skip (a failure in CI)."""
from __future__ import annotations

import pytest

from evalcore import resources
from tests.conftest import require


@pytest.fixture(scope="session")
def wordnet_ready() -> None:
    """WordNet (for English synonyms) is in .evalcore-data."""
    path = resources.nltk_data_dir() / "corpora" / "wordnet" / "data.noun"
    require(path.is_file(), f"{path} missing: run `python scripts/setup_data.py`")


@pytest.fixture(scope="session")
def zh_synonyms_ready() -> None:
    """The Chinese word vectors and Cilin groups are loaded (once, ~6-10 s)."""
    path = resources.synonyms_vector_path()
    require(path.is_file(), f"{path} missing: run `python scripts/setup_data.py`")
    from evalcore.perturb.word import load_zh_synonyms

    load_zh_synonyms()
