"""The offline language data that `make run`/`make test` prepare (scripts/setup_data.py).

evalcore must find WordNet and the Chinese vectors without the user exporting anything,
and the libraries must load them with no network: checked in a child process because
both libraries read their environment variables at import time.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore import resources
from tests.conftest import REPO_ROOT, require


def test_defaults_point_into_the_project() -> None:
    env: dict[str, str] = {}
    resources.ensure_language_env(env)
    root = REPO_ROOT / ".evalcore-data"
    assert env[resources.NLTK_ENV] == str(root / "nltk_data")
    assert env[resources.SYNONYMS_ENV] == str(root / "synonyms" / "words.vector")


def test_evalcore_data_moves_everything(tmp_path: Path) -> None:
    env = {"EVALCORE_DATA": str(tmp_path)}
    assert resources.nltk_data_dir(env) == tmp_path / "nltk_data"
    assert resources.synonyms_vector_path(env) == tmp_path / "synonyms" / "words.vector"


def test_user_choice_wins() -> None:
    env = {resources.NLTK_ENV: "/elsewhere/nltk", resources.SYNONYMS_ENV: "/elsewhere/v.bin"}
    resources.ensure_language_env(env)
    assert env == {resources.NLTK_ENV: "/elsewhere/nltk",
                   resources.SYNONYMS_ENV: "/elsewhere/v.bin"}


def _run_with_clean_env(code: str) -> str:
    env = {k: v for k, v in os.environ.items()
           if k not in {resources.NLTK_ENV, resources.SYNONYMS_ENV, "EVALCORE_DATA"}}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_wordnet_loads_offline_through_evalcore() -> None:
    wordnet = resources.nltk_data_dir() / "corpora" / "wordnet"
    require((wordnet / "data.noun").is_file(), f"{wordnet} missing: run `make test`")
    lexnames = (wordnet / "lexnames").read_text().splitlines()
    assert len(lexnames) == 45
    assert lexnames[0] == "00\tadj.all\t3" and lexnames[44] == "44\tadj.ppl\t3"
    out = _run_with_clean_env(
        "from evalcore.resources import ensure_language_env; ensure_language_env()\n"
        "from nltk.corpus import wordnet as wn\n"
        "dog = wn.synsets('dog')[0]\n"
        "print(dog.name(), dog.lexname(), wn.lemma_from_key('dog%1:05:00::').name())\n")
    assert out.split() == ["dog.n.01", "noun.animal", "dog"]


@pytest.mark.integration
def test_chinese_vectors_load_offline_through_evalcore() -> None:
    vectors = resources.synonyms_vector_path()
    require(vectors.is_file(), f"{vectors} missing: run `make test`")
    out = _run_with_clean_env(
        "from evalcore.resources import ensure_language_env; ensure_language_env()\n"
        "import synonyms\n"
        "words, scores = synonyms.nearby('快乐')\n"
        "print('RESULT', ' '.join(words[:10]))\n")
    words = out.split("RESULT", 1)[1].split()
    assert words[0] == "快乐"
    assert {"幸福", "开心", "愉快"} & set(words[1:])
