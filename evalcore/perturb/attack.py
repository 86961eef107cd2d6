"""Attack one question or many: pick the level, seed it, apply it, check it.

The char and sentence levels attack `question.question` only. The word level attacks a
choice item's options too (task types in `OPTION_TASKS`, options not glued into the
question): `swaps.attack_texts` swaps every occurrence of a word in the question and the
options the same way, every option only with reviewed swaps, and the options keep
their order, so labels and the answer key never change. Each item's
random generator is seeded from (seed, idx, level), so an item's result does not depend on
the other items, their order or the batch size. Every result goes through
`guard.check_attack`: numbers, options, entities, reference words and similarity.

Params per level (unknown keys are errors):

- char: `ops` (list of "insert", "swap", "drop", "keyboard"; default ["insert"]),
  `insertions` (edits per question; None = the method's rule: 2 under 15 words, else one
  per 10 words).
- word: `replacements` (None = the same rule), `min_similarity` (least word-vector cosine of
  a Chinese synonym, default 0.55), `fluency` (score every English swap in its sentence
  with the embedded model and drop those that read badly, default True), `keep_register`
  (refuse swaps that move formality, want -> desire, default True), `swap_judge` (a
  model of the models file that judges every swap in its text, English and Chinese, in
  place of the embedded check: swap_judge.py; default None).
- sentence: `pivot` (language code; default "en" for Chinese questions, "zh" for English).
- all: `threshold` (least e5 similarity, default guard.DEFAULT_SIMILARITY_THRESHOLD),
  `similarity` (False skips the e5 score, e.g. for speed runs; default True).
"""
from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any, Literal

import msgspec

from evalcore.config import load_settings
from evalcore.dataset.records import Question
from evalcore.errors import EvalcoreError
from evalcore.perturb.char import char_attack
from evalcore.perturb.guard import (
    DEFAULT_SIMILARITY_THRESHOLD,
    FLAG_ENTITY,
    FLAG_LOW_SIMILARITY,
    FLAG_NUMBER,
    FLAG_TRANSLATION,
    FLAG_UNCHANGED,
    check_attack,
    numbers,
    reference_words,
)
from evalcore.perturb.params import check_param_values
from evalcore.perturb.sentence import DEFAULT_PIVOT, TranslationError, Translator, back_translate
from evalcore.perturb.swap_judge import SwapJudge, judge_label, make_swap_judge
from evalcore.perturb.swaps import Style, Text, attack_texts, option_where
from evalcore.perturb.tokens import Language, entities, option_spans, segment
from evalcore.providers.client import run_closing_clients
from evalcore.scorers.text import detect_language, embedding_cosine_batch, remember_embeddings

Level = Literal["char", "word", "sentence"]
LEVELS: tuple[str, ...] = ("char", "word", "sentence")
PARAMS: dict[str, dict[str, Any]] = {
    "char": {"ops": ["insert"], "insertions": None},
    "word": {"replacements": None, "min_similarity": 0.55, "fluency": True,
             "keep_register": True, "swap_judge": None},
    "sentence": {"pivot": None},
}
"""Default params per level (see the module docstring)."""
COMMON_PARAMS: dict[str, Any] = {"threshold": DEFAULT_SIMILARITY_THRESHOLD, "similarity": True}
OPTION_TASKS: tuple[str, ...] = ("choice", "multi_tf")
"""Task types whose options the word attack reaches (bias_choice items keep theirs: their
options are the groups the bias score counts)."""
_CHUNK = 50
"""Questions attacked per worker-thread hop (progress is reported between hops)."""


class AttackResult(msgspec.Struct, frozen=True, kw_only=True):
    """One attacked question, with what changed and what a reviewer must look at. Made
    only by this module (`_result`), from checked parts: the plain constructor."""

    attacked: str
    """The attacked question text (the original when the attack failed)."""
    attack_num: int
    """Edits made: noise insertions and typos, replaced words, or 1 for a back-translation."""
    pairs: list[tuple[str, str]] = msgspec.field(default_factory=list)
    """(original word, replacement) for word attacks."""
    where: list[str] = msgspec.field(default_factory=list)
    """Per pair, where it was made: "question", "option N" (0-based index in the item's
    choices) or several of them, ", "-joined (word level; empty for the other levels)."""
    choices: list[str] = msgspec.field(default_factory=list)
    """The attacked options, in the item's order (empty when the options were not
    attacked: other levels, non-choice items, options glued into the question)."""
    similarity: float | None = None
    """e5 cosine of original and attacked question (None when not computed)."""
    flags: list[str] = msgspec.field(default_factory=list)
    """guard.FLAGS raised; a flagged item needs review before use."""
    level: str
    details: dict[str, Any] = msgspec.field(default_factory=dict)
    """Language, seed, params and the edits, per level."""


def resolve_params(level: str, params: dict[str, Any] | None) -> dict[str, Any]:
    """Defaults merged with `params`; unknown levels, keys or values raise naming the known
    ones (`params.check_param_values`)."""
    if level not in PARAMS:
        raise EvalcoreError(f"unknown attack level {level!r}; choose from {', '.join(LEVELS)}")
    merged = {**COMMON_PARAMS, **PARAMS[level]}
    unknown = set(params or {}) - set(merged)
    if unknown:
        raise EvalcoreError(f"unknown {level} attack param(s) {', '.join(sorted(unknown))}; "
                            f"known: {', '.join(sorted(merged))}")
    check_param_values(level, dict(params or {}))
    return {**merged, **(params or {})}


def item_rng(seed: int, question: Question, level: str) -> random.Random:
    """The item's own generator: same (seed, idx, level), same attack."""
    return random.Random(f"{seed}:{question.idx}:{level}")


def question_language(question: Question) -> Language:
    """The one language rule (`dataset.language`) on the text; a wordless question ("3+5=?")
    keeps the language its file gave it at import."""
    return detect_language(question.question, default=question.language)


_Raw = tuple[str, int, list[tuple[str, str]], dict[str, Any]]


def right_options(question: Question) -> set[int]:
    """Indices of the options the reference marks right (one index, or a 0/1 list)."""
    import json

    ref = (question.reference or "").strip()
    if ref.isdigit():
        return {int(ref)}
    try:
        flags = json.loads(ref)
    except ValueError:
        return set()
    return {i for i, f in enumerate(flags) if str(f) == "1"} if isinstance(flags, list) else set()


def attacks_options(question: Question) -> bool:
    """Whether the word attack reaches this item's options."""
    return (question.task_type in OPTION_TASKS and bool(question.choices)
            and option_spans(question.question)[1] is None)


def _local_attack(question: Question, level: str, seed: int, params: dict[str, Any],
                  judge: SwapJudge | None = None) -> _Raw:
    """Char or word attack without the similarity score; a word attack of a choice item
    puts the attacked options in details["choices"] and each pair's place in
    details["where"]. `judge` (word level) judges each swap in its text."""
    language = question_language(question)
    tokens = segment(question.question, language, reference_words(question, language))
    rng = item_rng(seed, question, level)
    if level == "char":
        text, n, details = char_attack(tokens, language, rng, ops=params["ops"],
                                       edits=params["insertions"])
        return text, n, [], details

    texts = [Text(tokens)]
    if attacks_options(question):
        # Every option only with reviewed swaps: WordNet candidates kept 29 of 34 judged
        # distractor swaps (85%) in the three blind samples, 14 of 14 in questions
        # (bench/word_sources.py, docs/attacks.md "Precision by candidate source").
        texts += [Text(segment(c, language), option_where(i), strict=True)
                  for i, c in enumerate(question.choices)]
    out, pairs, details = attack_texts(texts, language, rng,
                                       replacements=params["replacements"],
                                       min_similarity=params["min_similarity"],
                                       style=Style(fluency=bool(params["fluency"]),
                                                   keep_register=bool(params["keep_register"]),
                                                   judge=judge))
    details["where"] = [where for _, _, where in pairs]
    details["judge"] = judge_label(params)
    if len(texts) > 1:
        details["choices"] = out[1:]
    return out[0], details["placed"], [(old, new) for old, new, _ in pairs], details


def _judged_attack(question: Question, level: str, seed: int, params: dict[str, Any],
                   judge: SwapJudge) -> _Raw:
    """`_local_attack` taking its turn: one item's own code at a time (the word lists and
    WordNet are not made for threads), the turn given up while its verdicts are awaited."""
    with judge.turn:
        return _local_attack(question, level, seed, params, judge)


def option_flags(question: Question, choices: list[str], similarities: list[float | None],
                 threshold: float) -> list[str]:
    """The guard on attacked options: numbers and names kept, e5 similarity of each
    changed option to its original at least `threshold` (None: not computed)."""
    language = question_language(question)
    flags: list[str] = []
    for old, new, sim in zip(question.choices, choices, similarities):
        if old == new:
            continue
        if numbers(old, language) != numbers(new, language):
            flags.append(FLAG_NUMBER)
        if set(entities(old, language)) - set(entities(new, language)):
            flags.append(FLAG_ENTITY)
        if sim is not None and sim < threshold:
            flags.append(FLAG_LOW_SIMILARITY)
    return list(dict.fromkeys(flags))


def _result(question: Question, level: str, seed: int, params: dict[str, Any], text: str,
            n: int, pairs: list[tuple[str, str]], details: dict[str, Any],
            similarity: float | None, extra_flags: tuple[str, ...] = (),
            option_similarities: list[float | None] | None = None) -> AttackResult:
    """The checked result. With attacked options, the item is unchanged only when the
    question and every option are, and `similarity` is the lowest of the question's and
    the changed options' (the guard holds each text to the same bar)."""
    sim, flags = check_attack(question, text, threshold=params["threshold"],
                              similarity=similarity, embed=params["similarity"])
    choices = list(details.get("choices") or [])
    if choices and choices != list(question.choices):
        if option_similarities is None:
            option_similarities = _option_similarities([question], [choices],
                                                       params["similarity"])[0]
        flags = [f for f in flags if f != FLAG_UNCHANGED]
        flags += [f for f in option_flags(question, choices, option_similarities,
                                          params["threshold"]) if f not in flags]
        changed = [s for s in option_similarities if s is not None]
        if sim is not None and changed:
            sim = min([sim, *changed])
    flags = list(extra_flags) + [f for f in flags if f not in extra_flags]
    meta = {"language": question_language(question), "seed": seed, "params": params, **details}
    return AttackResult(attacked=text, attack_num=n, pairs=pairs, similarity=sim, flags=flags,
                        level=level, details=meta, choices=choices,
                        where=list(details.get("where") or []))


def _option_similarities(questions: list[Question], choices: list[list[str]],
                         enabled: bool) -> list[list[float | None]]:
    """e5 cosine of each changed option to its original (None for unchanged options, or
    all when disabled), in one batch."""
    out: list[list[float | None]] = [[None] * len(c) for c in choices]
    if not enabled:
        return out
    todo = [(qi, ci) for qi, (q, cs) in enumerate(zip(questions, choices))
            for ci, c in enumerate(cs) if ci < len(q.choices) and c != q.choices[ci]]
    if not todo:
        return out

    scores = embedding_cosine_batch([choices[qi][ci] for qi, ci in todo],
                                    [questions[qi].choices[ci] for qi, ci in todo])
    for (qi, ci), score in zip(todo, scores):
        out[qi][ci] = float(score)
    return out


def attack_question(question: Question, level: Level, *, seed: int = 0,
                    params: dict[str, Any] | None = None,
                    translator: Translator | None = None) -> AttackResult:
    """Attack one question (blocking). Sentence level needs `translator` and no running
    event loop (inside one, await `attack_questions`)."""
    resolved = resolve_params(level, params)
    if level == "sentence" or resolved.get("swap_judge"):
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return run_closing_clients(attack_questions(
                [question], level, seed=seed, params=params, translator=translator))[0]
        raise EvalcoreError(f"attack_question(level='{level}') with a model was called inside "
                            "an event loop; await attack_questions([...]) there instead")
    text, n, pairs, details = _local_attack(question, level, seed, resolved)
    return _result(question, level, seed, resolved, text, n, pairs, details, None)


async def _sentence_one(question: Question, translator: Translator,
                        params: dict[str, Any]) -> tuple[str, int, dict[str, Any], tuple]:
    language = question_language(question)
    pivot = params["pivot"] or DEFAULT_PIVOT[language]
    details: dict[str, Any] = {"pivot": pivot, "translator": getattr(translator, "name", "")}
    try:
        text = await back_translate(question.question, language, pivot, translator)
    except TranslationError as exc:
        return question.question, 0, {**details, "error": str(exc)}, (FLAG_TRANSLATION,)
    except Exception as exc:  # a translator bug must not sink the batch  # noqa: BLE001
        return (question.question, 0, {**details, "error": f"{type(exc).__name__}: {exc}"},
                (FLAG_TRANSLATION,))
    return text, 1, details, ()


def _similarities(questions: list[Question], texts: list[str],
                  enabled: bool) -> list[float | None]:
    """e5 cosines in one batch; 1.0 for unchanged texts, None when disabled.

    The clean questions' vectors are kept on disk (`text.remember_embeddings`): the next
    attack of the same dataset, in any process, embeds only its attacked texts.
    """
    if not enabled:
        return [None] * len(questions)

    todo = [i for i, (q, t) in enumerate(zip(questions, texts)) if t.strip() != q.question.strip()]
    originals = [questions[i].question for i in todo]
    scores = embedding_cosine_batch([texts[i] for i in todo], originals) if todo else []
    remember_embeddings(originals)
    out: list[float | None] = [1.0] * len(questions)
    for i, score in zip(todo, scores):
        out[i] = score
    return out


async def attack_questions(questions: list[Question], level: Level, *, seed: int = 0,
                           params: dict[str, Any] | None = None,
                           translator: Translator | None = None,
                           on_progress: Callable[[int, int], None] | None = None,
                           models_path: Any = None) -> list[AttackResult]:
    """Attack many questions; results in input order.

    char/word run in worker threads in chunks (the loop stays responsive, progress is
    reported between chunks); sentence runs every translation concurrently on the running
    loop (the model client limits concurrency). A failed translation gives the original
    text flagged "translation_failed", never an exception. Similarities are computed in one
    e5 batch at the end. A word attack with a `swap_judge` attacks a chunk's items in
    several threads, their judge calls in flight together (swap_judge.py); the model is
    looked up in `models_path` (default: the settings' models file).
    """
    resolved = resolve_params(level, params)
    judge = None
    if level == "word" and resolved.get("swap_judge"):
        if models_path is None:
            models_path = load_settings().models_path
        judge = make_swap_judge(str(resolved["swap_judge"]), models_path)
    total = len(questions)
    raw: list[tuple[str, int, list[tuple[str, str]], dict[str, Any], tuple]] = []
    if level == "sentence":
        if translator is None:
            raise EvalcoreError("the sentence attack needs a translator: "
                                "make_translator('llm:MODEL' or 'google', models_path=...)")
        done = 0

        async def one(q: Question) -> tuple:
            nonlocal done
            text, n, details, flags = await _sentence_one(q, translator, resolved)
            done += 1
            if on_progress:
                on_progress(done, total)
            return text, n, [], details, flags

        raw = list(await asyncio.gather(*(one(q) for q in questions)))
    else:
        for start in range(0, total, _CHUNK):
            chunk = questions[start:start + _CHUNK]
            if judge is None:
                part = await asyncio.to_thread(
                    lambda c=chunk: [_local_attack(q, level, seed, resolved) for q in c])
            else:
                part = await asyncio.gather(*(asyncio.to_thread(
                    _judged_attack, q, level, seed, resolved, judge) for q in chunk))
            raw.extend((text, n, pairs, details, ()) for text, n, pairs, details in part)
            if on_progress:
                on_progress(len(raw), total)
    texts = [r[0] for r in raw]
    sims = await asyncio.to_thread(_similarities, questions, texts, resolved["similarity"])
    option_sims = await asyncio.to_thread(
        _option_similarities, questions, [list(r[3].get("choices") or []) for r in raw],
        resolved["similarity"])
    results = []
    for q, (text, n, pairs, details, flags), sim, osim in zip(questions, raw, sims, option_sims):
        results.append(_result(q, level, seed, resolved, text, n, pairs, details, sim, flags,
                               osim))
    return results

