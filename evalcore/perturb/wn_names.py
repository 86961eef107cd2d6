"""WordNet's lemma names for a word, read straight from the WordNet files, without nltk.

Every English segmentation asks one WordNet question (`tokens._common_word`: is a
capitalised sentence start a common word?). Answering it through `nltk.corpus` imports
nltk's whole package tree (scipy, sklearn: ~1.5 s of CPU) and loads every index into
objects; a character-level attack needs nothing else from nltk. This module answers the
same question as `[l.name() for s in wn.synsets(word) for l in s.lemmas()]` with nltk
3.10's rules (morphy: exception lists, then one pass of suffix rules; parts of speech in
the order n, v, a, r; offsets in index order; lemma names without their "(a)" markers).
When the WordNet folder is not a plain directory on NLTK_DATA (a zip, a download cache),
`None` tells the caller to ask nltk.
"""
from __future__ import annotations

import functools
import os
import re
from pathlib import Path

from evalcore.resources import NLTK_ENV, ensure_language_env

_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
_RULES = {
    "n": [("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"),
          ("ches", "ch"), ("shes", "sh"), ("men", "man"), ("ies", "y")],
    "v": [("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""),
          ("ing", "e"), ("ing", "")],
    "a": [("er", ""), ("est", ""), ("er", "e"), ("est", "e")],
    "r": [],
}
"""nltk's `WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS`, in its order."""
_MARKER = re.compile(r"\([^()]*\)$")


def _folder() -> Path | None:
    """The first `corpora/wordnet` directory on NLTK_DATA (nltk searches those first);
    None when a `wordnet.zip` comes first or none is there (nltk then finds its own)."""
    ensure_language_env()
    for root in os.environ.get(NLTK_ENV, "").split(os.pathsep):
        folder = Path(root) / "corpora" / "wordnet"
        if root and (folder / "index.noun").is_file():
            return folder
        if root and folder.with_suffix(".zip").is_file():
            return None
    return None


@functools.lru_cache(maxsize=1)
def _tables() -> tuple[Path, dict[str, dict[str, str]], dict[str, dict[str, list[str]]]] | None:
    """(folder, pos -> lemma -> its raw index line, pos -> inflected -> base forms)."""
    folder = _folder()
    if folder is None:
        return None
    index: dict[str, dict[str, str]] = {}
    exceptions: dict[str, dict[str, list[str]]] = {}
    for pos, name in _FILES.items():
        lines: dict[str, str] = {}
        with open(folder / f"index.{name}", encoding="utf-8") as fp:
            for line in fp:
                if not line.startswith(" "):
                    lines[line[:line.index(" ")]] = line
        index[pos] = lines
        with open(folder / f"{name}.exc", encoding="utf-8") as fp:
            exceptions[pos] = {t[0]: t[1:] for t in map(str.split, fp) if t}
    return folder, index, exceptions


def _offsets(line: str) -> list[int]:
    """The synset offsets of one index line (lemma pos n_synsets n_ptrs ptrs... n n offsets)."""
    parts = line.split()
    n_synsets, n_pointers = int(parts[2]), int(parts[3])
    start = 4 + n_pointers + 2
    return [int(p) for p in parts[start:start + n_synsets]]


def _morphy(form: str, pos: str, index: dict[str, str], exc: dict[str, list[str]]) -> list[str]:
    forms = exc[form] if form in exc else [
        form[:-len(old)] + new for old, new in _RULES[pos] if form.endswith(old)]
    out: list[str] = []
    for f in [form, *forms]:
        if f in index and f not in out:
            out.append(f)
    return out


@functools.lru_cache(maxsize=4096)
def _lemmas_at(folder: Path, pos: str, offset: int) -> tuple[str, ...]:
    with open(folder / f"data.{_FILES[pos]}", "rb") as fp:
        fp.seek(offset)
        parts = fp.readline().decode("utf-8").split("|", 1)[0].split()
    n = int(parts[3], 16)
    return tuple(_MARKER.sub("", parts[4 + 2 * k]) for k in range(n))


def lemma_names(word: str) -> list[str] | None:
    """nltk's `[l.name() for s in wordnet.synsets(word) for l in s.lemmas()]`, or None
    when WordNet is not a plain folder here (then ask nltk)."""
    tables = _tables()
    if tables is None:
        return None
    folder, index, exceptions = tables
    low = word.lower()
    return [name for pos in _FILES
            for form in _morphy(low, pos, index[pos], exceptions[pos])
            for offset in _offsets(index[pos][form])
            for name in _lemmas_at(folder, pos, offset)]
