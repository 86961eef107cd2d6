"""Where a swap holds: context lists per pair, the register pairs, and the verdicts that
grow them (data/contexts.toml).

A pair can be right out of context and wrong in it: "student" -> "pupil" beside "the
professor", "doctors" -> "physicians" of a horse, "changed the channel" -> "altered". A pair
listed here carries cue words, matched on lemmas anywhere in the item (question and
options):

- `holds`: the swap is made only when one of these is in the item (empty: no condition);
- `fails`: the swap is never made when one of these is in the item;
- `sources`: cue -> who said so (an audit, a review queue), kept with the data.

`register.pairs` move formality (want -> desire, car -> automobile): refused while the
attack keeps the register (its default). Pairs are keyed by lemmas, "student/pupil", so
every inflection and every candidate source (table, WordNet, phrases) is covered.

`record_verdicts` writes reviewers' verdicts into the lists; the file is data, read once
per process (reload with `load_contexts.cache_clear()`).
"""
from __future__ import annotations

import functools
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CONTEXTS_PATH = Path(__file__).with_name("data") / "contexts.toml"
_HEADER = ("# Where a swap holds (evalcore/perturb/contexts.py): cue words per pair, matched on\n"
           "# lemmas in the whole item. Written by contexts.record_verdicts; edit by hand too.\n\n")


@dataclass(frozen=True)
class Verdict:
    """A reviewer's judgement of one swap in one item, reduced to the cue that decided it."""

    word: str
    """The original word or phrase ("students", "lives in")."""
    swap: str
    """Its replacement ("pupils")."""
    cue: str
    """The context word that makes the swap right or wrong ("professor")."""
    kept: bool
    """True: the swap holds beside the cue; False: it fails there."""
    source: str
    """Where the verdict comes from ("review queue, run 12", "blind audit CODAH 1200-1900")."""


def lemma_key(text: str) -> str:
    """Lower-case lemmas of each word: "Students" -> "student", "lives in" -> "live in"."""
    import lemminflect

    out = []
    for word in text.lower().replace("’", "'").split():
        lemmas = lemminflect.getAllLemmas(word)  # a verb first: "lives in" is "live in"
        out.append((lemmas.get("VERB") or next(iter(lemmas.values())))[0] if lemmas else word)
    return " ".join(out)


def pair_key(word: str, swap: str) -> str:
    return f"{lemma_key(word)}/{lemma_key(swap)}"


@functools.lru_cache(maxsize=1)
def load_contexts(path: Path = CONTEXTS_PATH) -> dict[str, Any]:
    """The file's tables: {"pairs": {key: {holds, fails, sources}}, "register": {pairs}}."""
    data = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    data.setdefault("pairs", {})
    data.setdefault("register", {}).setdefault("pairs", [])
    return data


@functools.lru_cache(maxsize=1)
def _register_pairs() -> frozenset[str]:
    return frozenset(f"{a}/{b}" for a, b in load_contexts()["register"]["pairs"]) | frozenset(
        f"{b}/{a}" for a, b in load_contexts()["register"]["pairs"])


@functools.lru_cache(maxsize=20_000)
def _item_lemmas(whole: str) -> frozenset[str]:
    import re

    return frozenset(lemma_key(w) for w in re.findall(r"[A-Za-z']+", whole))


def context_allows(word: str, swap: str, whole: str, keep_register: bool = True) -> bool:
    """Whether swapping `word` for `swap` holds in the item whose text is `whole`."""
    key = pair_key(word, swap)
    if keep_register and key in _register_pairs():
        return False
    entry = load_contexts()["pairs"].get(key)
    if not entry:
        return True
    present = _item_lemmas(whole)
    if any(lemma_key(c) in present for c in entry.get("fails", ())):
        return False
    holds = entry.get("holds", ())
    return not holds or any(lemma_key(c) in present for c in holds)


def record_verdicts(verdicts: Iterable[Verdict], path: Path = CONTEXTS_PATH) -> int:
    """Write verdicts into the pairs' context lists (a cue moves to `holds` or `fails` by
    its latest verdict, its source recorded); returns how many cues changed."""
    import tomli_w

    data = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    pairs = data.setdefault("pairs", {})
    changed = 0
    for verdict in verdicts:
        entry = pairs.setdefault(pair_key(verdict.word, verdict.swap), {})
        cue = lemma_key(verdict.cue)
        into, out_of = ("holds", "fails") if verdict.kept else ("fails", "holds")
        entry[out_of] = [c for c in entry.get(out_of, []) if c != cue]
        if cue not in entry.setdefault(into, []):
            entry[into].append(cue)
            changed += 1
        entry.setdefault("sources", {})[cue] = verdict.source
    path.write_text(_HEADER + tomli_w.dumps(data), encoding="utf-8")
    if path == CONTEXTS_PATH:
        load_contexts.cache_clear()
        _register_pairs.cache_clear()
    return changed
