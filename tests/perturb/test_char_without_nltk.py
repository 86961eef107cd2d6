"""A character-level attack reads WordNet's lemma names without importing nltk
(`perturb.wn_names`): the same attacked items as before, the same names as nltk's, and
no nltk/scipy/sklearn in the process (they cost ~3 s of CPU per generating process)."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from evalcore.perturb.wn_names import _tables, lemma_names
from tests.conftest import REPO_ROOT, SHARED_DATASETS, require

DATA = SHARED_DATASETS / "trusted-evaluation"
ROWS = 40
OPS = {"insert": ["insert"], "typos": ["insert", "swap", "drop", "keyboard"]}
PINNED = {
    "codah/insert": "320206c84bee161947c0994e7509278b13f574b004739911b230772d7fe9fca0",
    "codah/typos": "3918bb2e5353876ee94845f34e2a0256f467db76836cd46691f313ae84f98809",
    "math23k/insert": "120d687b6ef9c5f9270547c7fb813baab897bc95acbfdd868d332d58a207585e",
    "math23k/typos": "2c043afb693193a1624af7edbdb448ffada508087e76af8dace7e5efc860981f",
}
"""sha256 of the attacked items (question, choices) of the first 40 rows, seed 3, char
level, made with nltk's WordNet before `wn_names` existed. Noise ignores names; typos skip
them, so a capitalised sentence start read as a name or not changes the "typos" items."""


def _head_csv(src: Path, dst: Path, rows: int) -> Path:
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    dst.write_text("".join(lines[:rows + 1]), encoding="utf-8")
    return dst


def test_char_attack_items_are_unchanged(engine, tmp_path, wordnet_ready):
    from evalcore.dataset import import_dataset, load_items
    from evalcore.perturb.generate import make_attack_set

    require(DATA.is_dir(), f"{DATA} missing")
    got = {}
    for name, file in (("codah", "CODAHtest.csv"), ("math23k", "Math23Ktest.csv")):
        path = _head_csv(DATA / file, tmp_path / file, ROWS)
        import_dataset(engine, str(path), name=name)
        for label, ops in OPS.items():
            made = make_attack_set(engine, dataset=name, level="char", seed=3,
                                   name=f"{name}-{label}",
                                   params={"similarity": False, "ops": ops})
            items = [[i.question, i.choices] for i in load_items(engine, made.dataset_id)]
            assert len(items) == ROWS
            dump = json.dumps(items, ensure_ascii=False).encode()
            got[f"{name}/{label}"] = hashlib.sha256(dump).hexdigest()
    assert got == PINNED


def test_lemma_names_are_nltks(wordnet_ready):
    """Every 50th WordNet lemma and exception form, inflected the ways morphy undoes,
    plus capitalised names and words WordNet lacks: the names nltk's synsets list."""
    from evalcore.perturb.lexicon import wordnet

    _, index, exceptions = _tables()
    words = sorted({w for table in (*index.values(), *exceptions.values()) for w in table})
    sample = set(words[::50]) | {"fox", "foxes", "paris", "atlantic", "the", "i", "bill",
                                 "sugar", "will", "children", "geese", "running", "xyzzy"}
    sample |= {w + end for w in words[::500] for end in ("s", "es", "ed", "ing", "er", "est")}
    wn = wordnet()
    for word in sorted(sample):
        assert lemma_names(word) == [l.name() for s in wn.synsets(word) for l in s.lemmas()], word


def test_a_char_attack_imports_no_nltk(tmp_path, wordnet_ready):
    """A fresh process segmenting and attacking English (capitalised sentence starts
    included) never imports nltk, and so neither scipy nor sklearn."""
    code = (
        "import sys\n"
        "from evalcore.dataset.records import Question\n"
        "from evalcore.perturb import attack_question\n"
        "r = attack_question(Question(idx=0, question='Foxes should not eat Sugar. Paris is"
        " big. Children play.'), 'char', seed=3, params={'similarity': False})\n"
        "assert r.attacked, r\n"
        "print([m for m in ('nltk', 'scipy', 'sklearn') if m in sys.modules])\n")
    env = {**os.environ, "EVALCORE_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env,
                         check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
