"""Where the offline language data lives, and how libraries are told about it.

`make run` / `make test` (scripts/setup_data.py) put English WordNet (for NLTK) and the
Chinese word vectors (for `synonyms`) under `<project>/.evalcore-data`, or under
`$EVALCORE_DATA` when set. The machine has no internet beyond package registries, so the
libraries must never try to download: `ensure_language_env()` points them at these files
before they are imported, and users never have to export anything.
"""
from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
NLTK_ENV = "NLTK_DATA"
SYNONYMS_ENV = "SYNONYMS_WORD2VEC_BIN_MODEL_ZH_CN"


def data_dir(env: MutableMapping[str, str] | None = None) -> Path:
    """Root of the offline data: `$EVALCORE_DATA`, else `<project>/.evalcore-data`."""
    env = os.environ if env is None else env
    value = env.get("EVALCORE_DATA")
    return Path(value).expanduser().resolve() if value else PROJECT_ROOT / ".evalcore-data"


def nltk_data_dir(env: MutableMapping[str, str] | None = None) -> Path:
    """The NLTK_DATA folder; WordNet is at `corpora/wordnet/` inside it."""
    return data_dir(env) / "nltk_data"


def synonyms_vector_path(env: MutableMapping[str, str] | None = None) -> Path:
    """The word2vec binary (synonyms 3.8.0's MIT-licensed `words.vector`)."""
    return data_dir(env) / "synonyms" / "words.vector"


def ensure_language_env(env: MutableMapping[str, str] | None = None) -> None:
    """Set NLTK_DATA and the synonyms model path unless the user already chose them.

    Call before importing `synonyms` (it reads the variable at import time); NLTK reads
    NLTK_DATA when `nltk.data` is first imported; if that already happened, the folder is
    added to `nltk.data.path` as well.
    """
    real_env = env is None
    env = os.environ if env is None else env
    env.setdefault(NLTK_ENV, str(nltk_data_dir(env)))
    env.setdefault(SYNONYMS_ENV, str(synonyms_vector_path(env)))
    nltk_data = sys.modules.get("nltk.data")
    if real_env and nltk_data is not None:
        for folder in reversed(env[NLTK_ENV].split(os.pathsep)):
            if folder and folder not in nltk_data.path:
                nltk_data.path.insert(0, folder)
