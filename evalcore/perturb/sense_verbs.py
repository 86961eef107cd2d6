"""English verb rules from the third blind audit (its verdicts: docs/audits/).

Its verb failures were a verb read in the wrong form or frame, not a wrong synonym:

- **tense unknown**: "shut the door" (past) -> "close the door". A verb whose base and
  past forms are one word (shut, put, cut, hit, set, let, spread, quit) is swapped only
  where the words before settle its tense (`known_tense`), and the candidate takes that
  tense;
- **a gerund read as a noun**: "Marrying which family member" -> "Wedding which ...". An
  -ing form is not replaced by a candidate whose -ing form is a WordNet noun lemma
  (wedding, building, meeting) that the original's is not;
- **an adverb is no object**: "must eat there" -> "must consume there" (consume needs an
  object): a word that can be an adverb and starts no noun phrase ("there", "now",
  "here every day") is not the verb's object (`adverb_next`);
- **light verb + object**: "threw a birthday party" -> "tossed". A verb whose object noun
  makes a collocation with it (lexicon.toml `en.collocations`, or a WordNet lemma
  verb_noun / verb_a_noun: take_place, make_sense) keeps the verb.
"""
from __future__ import annotations

from collections.abc import Sequence

from evalcore.perturb.lexicon import load_lexicon, wordnet
from evalcore.perturb.tokens import Token

_BASE_CUES = frozenset(["to", "will", "would", "can", "could", "should", "must", "may",
                        "might", "do", "does", "did", "don't", "doesn't", "didn't", "won't",
                        "can't", "please", "let's", "shall"])
_THIRD_PERSON = frozenset(["he", "she", "it"])
_LINKS = frozenset(["and", "then", "or", "but"])
_OBJECT_START = frozenset(["a", "an", "the", "my", "your", "his", "her", "our", "their", "its",
                           "this", "that", "these", "those", "some"])


def _words(tokens: Sequence[Token], i: int, step: int, n: int) -> list[str]:
    out, j = [], i + step
    while 0 <= j < len(tokens) and len(out) < n:
        if tokens[j].kind == "word":
            out.append(tokens[j].text.lower())
        elif tokens[j].kind != "space":
            break
        j += step
    return out


def same_past(word: str) -> bool:
    """The verb form is its base and its past at once (shut, put, cut)."""
    import lemminflect

    low = word.lower()
    for lemma in lemminflect.getAllLemmas(low).get("VERB", ()):
        if low == lemma and low in (f.lower() for f in lemminflect.getInflection(lemma, "VBD")):
            return True
    return False


def _only_past(word: str) -> bool:
    import lemminflect

    lemmas = lemminflect.getAllLemmas(word).get("VERB", ())
    return bool(lemmas) and not same_past(word) and any(
        word in (f.lower() for f in lemminflect.getInflection(lemma, "VBD"))
        and word not in (f.lower() for f in lemminflect.getInflection(lemma, "VB"))
        for lemma in lemmas)


def known_tense(tokens: Sequence[Token], i: int) -> str | None:
    """"VB" (after to, a modal, do), "VBD" (after he/she/it, which would take -s in the
    present, or after and/then following a past verb: "walked in and shut") or None."""
    before = _words(tokens, i, -1, 6)
    if not before:
        return None
    if before[0] in _BASE_CUES:
        return "VB"
    if before[0] in _THIRD_PERSON:
        return "VBD"
    if before[0] in _LINKS and any(_only_past(w) for w in before[1:]):
        return "VBD"
    return None


def noun_like_gerund(original: str, candidate: str) -> bool:
    """The candidate's -ing form is a noun lemma in WordNet ("wedding") and the
    original's is not ("marrying"): a gerund swap would read as that noun."""
    if not (original.lower().endswith("ing") and candidate.lower().endswith("ing")):
        return False
    wn = wordnet()

    def noun(word: str) -> bool:
        return any(l.name().lower() == word.lower() and l.count() > 0
                   for s in wn.synsets(word, "n") for l in s.lemmas())
    return noun(candidate) and not noun(original)


def adverb_next(tokens: Sequence[Token], i: int) -> bool:
    """The word after the verb is an adverb that starts no noun phrase ("eat there every
    day", "eat now."), so the verb has no object there."""
    import lemminflect

    after = _words(tokens, i, 1, 2)
    if not after or "ADV" not in lemminflect.getAllLemmas(after[0]) or after[0] in _OBJECT_START:
        return False
    return len(after) < 2 or not {"NOUN", "ADJ"} & set(lemminflect.getAllLemmas(after[1]))


def in_collocation(tokens: Sequence[Token], i: int, lemma: str) -> bool:
    """The verb's object noun (within four words, past articles and adjectives) makes a
    collocation with it: "threw a birthday party", "made a decision", "take place"."""
    import lemminflect

    colloc = load_lexicon().en_collocations
    wn = wordnet()
    for word in _words(tokens, i, 1, 4):
        lemmas = lemminflect.getAllLemmas(word)
        for noun in lemmas.get("NOUN", ()):
            if (lemma, noun) in colloc or any(
                    wn.synsets(f"{lemma}{mid}{noun}", "v") for mid in ("_", "_a_", "_the_")):
                return True
        if word not in _OBJECT_START and not {"NOUN", "ADJ"} & set(lemmas):
            return False  # past the object ("threw a birthday party at": party is its head)
    return False
