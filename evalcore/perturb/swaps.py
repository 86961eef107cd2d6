"""The word attack over one item: its question and, for choice items, its options.

A choice item is the question plus its options, and the method's own attacked files swap
words in both. Each text is segmented and protected on its own (tokens.py); then:

- **Every occurrence the same way, or none.** A word is replaced everywhere it occurs in
  the item (question and options) with one replacement, or nowhere: a candidate must be
  right at every occurrence, no occurrence may be protected, and a Chinese word that also
  occurs inside a longer token (衬衫 in 男式衬衫 cut as one) is left alone. A candidate
  already in the item is refused (乘客 -> 旅客 where 旅客 is another word of the problem).
- **Options only with reviewed swaps** (`Text.strict`): the paraphrase table and the
  listed phrases, which the audits read; dictionary synonyms (WordNet, Cilin) only reach
  the question (on options, where a short phrase gives no context, WordNet kept 29 of 34
  judged swaps in three blind samples: bench/word_sources.py).
- **Sense in context** (sense.py): English selection rules, Chinese words cut across
  jieba tokens, Chinese verbs used as nouns.
- Option labels and the answer key are not text here: options are attacked as their own
  texts, in place, so their order and the reference index never change.

The method's count rule is applied to the item's words (question + options), as in its
files, where the options are glued into `attacked_question`.
"""
from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from evalcore.perturb import fluency, sense, sense_context
from evalcore.perturb.char import edit_count
from evalcore.perturb.contexts import context_allows
from evalcore.perturb.lexicon import load_lexicon
from evalcore.perturb.phrases import phrase_sites
from evalcore.perturb.tokens import Language, Token, count_words
from evalcore.perturb.word import (
    TOP_CANDIDATES,
    _zh_context_allows,
    en_word_candidates,
    zh_word_candidates,
)

QUESTION = "question"


@dataclass
class Text:
    """One text of an item: its tokens, where it is, and whether it is the right option."""

    tokens: list[Token]
    where: str = QUESTION
    """"question" or "option N" (N = the option's 0-based index in the item's choices)."""
    strict: bool = False
    """Only reviewed swaps (table, phrases): every option."""


def option_where(index: int) -> str:
    return f"option {index}"


def _key(text: str, language: Language) -> str:
    return text if language == "zh" else text.lower().replace("’", "'")


def _word_candidates(tokens: Sequence[Token], i: int, language: Language, strict: bool,
                     min_similarity: float) -> tuple[str | None, list[tuple[str, Any]]]:
    """(part of speech, [(candidate, why)]) for token `i` after every context check."""
    tok = tokens[i]
    if language == "zh":
        if not _zh_context_allows(tokens, i) or sense.zh_inside_longer_word(tokens, i):
            return None, []
        found = list(zh_word_candidates(tok, min_similarity))
        table = load_lexicon().zh_paraphrases
        reviewed = bool(table.get(f"{tok.text}/{tok.flag}") or table.get(tok.text))
        if strict and not reviewed:
            return tok.flag, []
        if found and sense.zh_used_as_noun(tokens, i):
            found = [c for c in found if sense.zh_can_be_noun(c[0])]
        return tok.flag, found
    pos, cands = en_word_candidates(tokens, i)
    found = [c for c in cands if not strict or c[1] == "table"]
    if found and pos:
        import lemminflect

        lemma = (lemminflect.getAllLemmas(tok.text.lower()).get(pos) or (tok.text,))[0]
        if not sense.en_selection_ok(tokens, i, i + 1, f"{lemma}/{pos}"):
            return pos, []
    return pos, found


def _phrase_ok(tokens: Sequence[Token], site: Any) -> bool:
    key = "".join(t.text for t in tokens[site.start:site.end])
    return sense.en_selection_ok(tokens, site.start, site.end, key.replace("’", "'"))


def _quotations(texts: Sequence[Text], language: Language) -> list[Text]:
    """A question that asks for words said ("What exact words did Neil Armstrong say?")
    makes its options quotations: their words are protected like quoted words."""
    if language != "en" or not texts or not sense_context.asks_for_words(
            "".join(t.text for t in texts[0].tokens)):
        return list(texts)
    return [text if text.where == QUESTION else Text(
        [replace(t, protect="quote") if t.kind == "word" else t
         for t in text.tokens], text.where, text.strict) for text in texts]


@dataclass(frozen=True)
class Style:
    """How strict the word attack is about how a swap reads."""

    fluency: bool = True
    """Every swap scored in its sentence by the language model (fluency.py); a swap that
    reads worse than the threshold is dropped and the next candidate tried."""
    keep_register: bool = True
    """Refuse swaps that move formality (want -> desire, car -> automobile)."""
    judge: Any = None
    """A `swap_judge.SwapJudge`: a chat model judges every swap in its text, English and
    Chinese, in place of the embedded check (`fluency` is then not used)."""


def _unchecked_zh(language: Language, style: Style) -> bool:
    """Whether a Chinese word may take only reviewed swaps (the table's).

    The in-context check cannot read Chinese (the embedded model splits a character into
    byte tokens and ranks swaps barely above chance: docs/attacks.md), and a blind reader
    rejected most dictionary swaps in their sentences (同学 -> 同窗, 睡觉 -> 就寝, 进行 ->
    展开). So while the check is asked for, a Chinese swap it cannot make is not made;
    with the check off (`fluency=False`) the dictionary's synonyms come back, and with a
    swap judge, which reads Chinese and checks each of them in its sentence."""
    return language == "zh" and style.fluency and style.judge is None


def attack_texts(texts: Sequence[Text], language: Language, rng: random.Random, *,
                 replacements: int | None = None, min_similarity: float = 0.55,
                 style: Style = Style(),
                 ) -> tuple[list[str], list[tuple[str, str, str]], dict[str, Any]]:
    """(attacked texts, (old, new, where) pairs, details) for one item's texts.

    `where` lists every text the word was replaced in ("question", "option 2", or both,
    ", "-joined). `replacements=None` applies the method's rule to the words of all texts;
    fewer are made when fewer words have a safe synonym (details["wanted"]). The rule
    counts places replaced, as the method's `attack_num` does ({'am': 'embody'} is 2 when
    "am" occurs twice): details["placed"], the item's attack_num."""
    texts = _quotations(texts, language)
    n_words = sum(count_words(t.tokens, language) for t in texts)
    wanted = edit_count(n_words) if replacements is None else max(0, int(replacements))
    words: dict[str, list[tuple[int, int]]] = {}
    for ti, text in enumerate(texts):
        for i, tok in enumerate(text.tokens):
            if tok.kind == "word":
                words.setdefault(_key(tok.text, language), []).append((ti, i))
    phrases = [(ti, site) for ti, text in enumerate(texts)
               for site in phrase_sites(text.tokens, language)]
    by_phrase: dict[str, list[tuple[int, Any]]] = {}
    for ti, site in phrases:
        by_phrase.setdefault(_key(site.before, language), []).append((ti, site))
    whole = "\n".join("".join(t.text for t in text.tokens) for text in texts)
    sites: list[Any] = [(ti, i) for ti, text in enumerate(texts)
                        for i, t in enumerate(text.tokens) if t.kind == "word" and not t.protect]
    sites += phrases
    rng.shuffle(sites)
    new: list[dict[int, str]] = [{} for _ in texts]
    done: set[str] = set()
    pairs: list[tuple[str, str, str]] = []
    info: list[dict[str, Any]] = []
    placed = 0  # places replaced: the method's edits (a word in 3 options is 3)
    for ti, site in sites:
        if placed >= wanted:
            break
        if isinstance(site, int):
            key = _key(texts[ti].tokens[site].text, language)
            if key in done:
                continue
            done.add(key)
            chosen = _word_everywhere(texts, words[key], language, new, whole, rng,
                                      min_similarity, TOP_CANDIDATES, style)
            before = texts[ti].tokens[site].text
            spans = [(tj, j, j + 1) for tj, j in words[key]]
        else:
            key = "phrase:" + _key(site.before, language)
            if key in done:
                continue
            done.add(key)
            chosen = _phrase_everywhere(texts, by_phrase[key[7:]], language, new, whole, rng,
                                        style)
            before = site.before
            spans = [(tj, s.start, s.end) for tj, s in by_phrase[key[7:]]]
        if chosen is None:
            continue
        cand, detail = chosen
        for tj, start, end in spans:
            for j in range(start, end):
                new[tj][j] = ""
            new[tj][start] = _cased(cand, texts[tj].tokens[start].text, language)
        where = ", ".join(dict.fromkeys(texts[tj].where for tj, _, _ in spans))
        pairs.append((before, _cased(cand, before, language), where))
        placed += len(spans)
        info.append({"token": spans[0][1], "text": texts[ti].where, "where": where,
                     "before": before, "after": cand, "occurrences": len(spans), **detail})
    out = ["".join(new[ti].get(i, t.text) for i, t in enumerate(text.tokens))
           for ti, text in enumerate(texts)]
    return out, pairs, {"words": n_words, "wanted": wanted, "placed": placed,
                        "replacements": info}


def _cased(cand: str, original: str, language: Language) -> str:
    """A word replacement written with the capital of the word it replaces ("Sugar" ->
    "Carbohydrate" where "sugar" -> "carbohydrate"); phrases carry their own case."""
    if language != "en" or " " in cand or not original[:1].isupper() or cand[:1].isupper():
        return cand
    return cand[:1].upper() + cand[1:]


def _present(word: str, whole: str, language: Language) -> bool:
    if language == "zh":
        return word in whole
    import re

    return re.search(rf"(?<![A-Za-z']){re.escape(word)}(?![A-Za-z'])", whole, re.IGNORECASE) is not None


def _word_everywhere(texts: Sequence[Text], places: list[tuple[int, int]], language: Language,
                     new: list[dict[int, str]], whole: str, rng: random.Random,
                     min_similarity: float, top: int, style: Style = Style(),
                     ) -> tuple[str, dict[str, Any]] | None:
    """One replacement right at every occurrence of a word, or None."""
    first = texts[places[0][0]].tokens[places[0][1]].text
    if language == "zh" and whole.count(first) != len(places):
        return None  # also inside a longer token: 衬衫 of 男式衬衫 would stay
    common: list[tuple[str, Any]] | None = None
    pos = None
    for ti, i in places:
        tok = texts[ti].tokens[i]
        if tok.protect or i in new[ti]:
            return None
        pos, found = _word_candidates(texts[ti].tokens, i, language,
                                      texts[ti].strict or _unchecked_zh(language, style),
                                      min_similarity)
        found = [(_key(c, language), why) for c, why in found]  # "Sugar" and "sugar"
        names = {c for c, _ in found}
        common = found if common is None else [c for c in common if c[0] in names]
        if not common:
            return None
    common = [c for c in common or [] if not _present(c[0], whole, language)]
    if language == "en":
        first_key = _key(first, language)
        common = [c for c in common if context_allows(first_key, c[0], whole, style.keep_register)]
    spans = [(texts[ti].tokens, i, i + 1) for ti, i in places]
    chosen = _first_fluent(common, top, rng, language, style, lambda c: [
        (tokens, start, end, _cased(c, tokens[start].text, language))
        for tokens, start, end in spans])
    if chosen is None:
        return None
    cand, why = chosen
    return cand, {"pos": pos, ("score" if language == "zh" else "sense"): why}


def _first_fluent(pool: Sequence[Any], top: int, rng: random.Random, language: Language,
                  style: Style, places: Any) -> Any:
    """A candidate drawn (seeded) from the best `top`; one that reads badly at any of its
    places (the swap judge, else fluency.py) is dropped and the draw repeated, the next
    best joining the pool. Without a check the draw is the plain seeded choice."""
    best, rest = list(pool[:top]), list(pool[top:])
    while best:
        pick = rng.choice(best)
        cand = pick[0] if isinstance(pick, tuple) else pick
        if style.judge is not None:
            if style.judge.keeps(language, [_judged_place(tokens, start, end, text)
                                            for tokens, start, end, text in places(cand)]):
                return pick
        elif not (style.fluency and language == "en") or all(
                _reads_well(tokens, start, end, text) for tokens, start, end, text
                in places(cand)):
            return pick
        best.remove(pick)
        if rest:
            best.append(rest.pop(0))
    return None


def _judged_place(tokens: Sequence[Token], start: int, end: int, swap: str
                  ) -> tuple[str, str, str, str]:
    """(old words, swap, text before, text after) of one place, for the swap judge."""
    before, old = "".join(t.text for t in tokens[:start]), "".join(
        t.text for t in tokens[start:end])
    after = "".join(t.text for t in tokens[end:])
    return old, swap, before + old + after, before + swap + after


def _reads_well(tokens: Sequence[Token], start: int, end: int, swap: str) -> bool:
    return fluency.reads_well("".join(t.text for t in tokens[:start]),
                      "".join(t.text for t in tokens[start:end]), swap,
                      "".join(t.text for t in tokens[end:]))


def _phrase_everywhere(texts: Sequence[Text], places: list[tuple[int, Any]],
                       language: Language, new: list[dict[int, str]], whole: str,
                       rng: random.Random, style: Style = Style(),
                       ) -> tuple[str, dict[str, Any]] | None:
    """One replacement for every occurrence of a listed phrase, or None."""
    common: list[str] | None = None
    for ti, site in places:
        if any(j in new[ti] for j in range(site.start, site.end)):
            return None
        if language == "en" and not _phrase_ok(texts[ti].tokens, site):
            return None
        options = [o.lower() for o in site.options]
        common = options if common is None else [o for o in common if o in options]
        if not common:
            return None
    ti, site = places[0]
    options = [o for o in site.options if o.lower() in (common or [])
               and not _present(o, whole, language)]  # "I am" -> "I'm" beside an "I'm"
    if language == "en":
        options = [o for o in options if context_allows(site.before.lower(), o.lower(), whole,
                                                        style.keep_register)]
    choice = _first_fluent(options, len(options), rng, language, style, lambda c: [
        (texts[tj].tokens, s.start, s.end, c) for tj, s in places])
    if choice is None:
        return None
    if len(places) > 1 and any(s.before != site.before for _, s in places):
        return None  # "Do not" and "do not": one text per key keeps the cases apart
    return choice, {"pos": "phrase", "kind": "phrase"}


def word_attack(tokens: list[Token], language: Language, rng: random.Random, *,
                replacements: int | None = None,
                min_similarity: float = 0.55, style: Style = Style(),
                ) -> tuple[str, list[tuple[str, str]], dict[str, Any]]:
    """(attacked text, replaced (old, new) pairs, details) for one segmented text.

    `replacements=None` applies the method's rule (2 below 15 words, else one per 10);
    fewer are made when fewer words have a safe synonym (details["wanted"] tells).
    The loop (sites in a seeded random order, every occurrence of a word the same way,
    context checks) is `attack_texts`, which also attacks a choice item's options. Here,
    beside the loop, not in `word` (whose candidates the loop calls): no import circle.
    """
    texts, pairs, details = attack_texts([Text(tokens)], language, rng,
                                         replacements=replacements,
                                         min_similarity=min_similarity, style=style)
    return texts[0], [(old, new) for old, new, _ in pairs], details
