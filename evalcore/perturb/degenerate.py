"""Degenerate translations: clean a model's reply, then flag what e5 similarity misses.

Why: a back-translation by a small model can come back as the question cut off and padded
with 90 "；", as the whole text three times, or with English left in a Chinese question.
e5 averages over tokens, so such text still scores ~0.97 against the original. The
cleaner removes what is safe to remove (meta labels, notes, wrapping quotes, a text
repeated whole); each check below then names what is still wrong, with a reason a
reviewer can read (`reasons`). Every function takes any text and never raises.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from typing import Final

FLAG_LENGTH: Final = "length_ratio"
FLAG_REPEATED: Final = "repeated_ngrams"
FLAG_PUNCT_RUN: Final = "punctuation_run"
FLAG_CUT_OFF: Final = "cut_off"
FLAG_PIVOT_LEFT: Final = "pivot_language_left"
FLAGS: Final = (FLAG_LENGTH, FLAG_REPEATED, FLAG_PUNCT_RUN, FLAG_CUT_OFF, FLAG_PIVOT_LEFT)
"""Degenerate-output flags, raised beside guard's own."""

LENGTH_BAND: Final = (0.6, 1.6)
"""Allowed length of the attacked text over the original's (characters, whitespace left
out). Calibrated on the method's own back-translations (trusted-evaluation/attacked/
*_undersentenceattack.csv, 120 rows, `bench/sentence_guard_bench.py --files`): ordinary
rewordings span 0.65-1.41; outside the band were only truncations (0.04, 0.33, 0.52) and
text the translator made up (2.77)."""
LENGTH_MIN_CHANGE: Final = 10
"""Characters the length must change by too: "The sky is" -> "The color of sky is" is
ratio 1.9 but fine; short texts need an absolute change before the ratio means anything."""
REPEAT_MIN: Final = 3
"""Times an n-gram must occur (and more often than in the original) to count as looping."""
REPEAT_LOOP_GRAMS: Final = 6
"""Distinct n-grams that must loop (a stretch of n+5 words or characters said REPEAT_MIN
times), or half as many said once more: a phrase said three times is fair rewording
("X 人正确回答了第一个问题" x3, 4 grams, in the method's own Math23K file); a loop
repeats a long stretch, or a short one over and over."""
PUNCT_RUN_MIN: Final = 4
"""Punctuation marks in a row (spaces between ignored) that count as a run; char attacks
insert one mark at a time, so two or three in a row happen in ordinary attacked text."""

_LABEL = (r"(?:here\s+is|here's|below\s+is|this\s+is)?\s*(?:the|my|a|an)?\s*"
          r"(?:(?:english|chinese|japanese|french|german|spanish|korean|russian)\s+)?"
          r"(?:translation|translated\s+text|translated\s+version|back[- ]translation)"
          r"(?:\s+(?:of|in|into|to)\s+[^:：\n]{0,60})?"
          r"|(?:in\s+)?(?:english|chinese|japanese|french|german|spanish|korean|russian)"
          r"|(?:中文|英文|汉语|英语)?(?:翻译|译文)(?:如下|结果)?|以下是(?:[^：:\n]{0,20})?翻译")
_LEAD_IN = re.compile(rf"^\s*(?:sure[!,.]?\s*|certainly[!,.]?\s*|好的[，,！!。]?\s*)?"
                      rf"(?:{_LABEL})\s*[:：]\s*", re.IGNORECASE)
_NOTE = re.compile(r"^\s*[(（\[]?\s*(?:notes?|pronounced\s+as|pronunciation|pinyin|romanization"
                   r"|explanation|literal(?:ly)?|original|source|translation\s+notes?"
                   r"|注意?|备注|说明|拼音|解释|原文)\s*[:：)）\]]", re.IGNORECASE)
_HEADING = re.compile(r"^\s*[^\s:：。.?？!！]{1,12}\s*[:：]\s*$")
"""A short label ending in a colon, alone on its line."""
_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|$)", re.DOTALL)
_QUOTES = {'"': '"', "'": "'", "“": "”", "‘": "’", "「": "」", "『": "』", "《": "》"}
_TERMINAL = set("。．｡？！?!.…")
_CLOSERS = "\"”’'）)」』》]】 \t\n"
"""Closing quotes and brackets: looked through when finding the mark a sentence ends on."""
_DANGLING = set("，,、：:;；（(“‘「『《[【-—")
CUT_SHORTER: Final = 0.9
"""A text without the original's end mark counts as cut when at most this long (ratio)."""
_ASKS = re.compile(r"多少|几|什么|哪|谁|吗|呢|求|=|？|\?|\b(?:what|who|whom|whose|which|why|"
                   r"where|when|how)\b", re.IGNORECASE)
"""What a question's last clause asks with: losing it means the question was cut."""
_CLAUSE = re.compile(r"[，,。．｡；;！!？?]")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_UNITS = {"km", "cm", "mm", "kg", "mg", "ml", "dm", "ha", "kw", "kwh", "am", "pm", "ok",
          "a", "b", "c", "d"}
"""Latin tokens a Chinese text may use on its own (units, option letters)."""


def _is_punct(ch: str) -> bool:
    return unicodedata.category(ch)[0] == "P" or ch in "~～=_*#|"


def _compact(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _collapse_repeats(text: str) -> str:
    """The text once if it is a unit repeated whole (the last copy may be cut short)."""
    compact = _compact(text)
    n = len(compact)
    if n < 8:
        return text
    fail = [0] * n  # KMP prefix function: the smallest period is n - fail[-1]
    k = 0
    for i in range(1, n):
        while k and compact[i] != compact[k]:
            k = fail[k - 1]
        if compact[i] == compact[k]:
            k += 1
        fail[i] = k
    period = n - fail[-1]
    if period * 2 > n or period < 4 or all(_is_punct(c) for c in compact[:period]):
        return text
    seen = 0
    for end, ch in enumerate(text):  # map the unit back onto the text with its spaces
        if not ch.isspace():
            seen += 1
            if seen == period:
                return text[:end + 1].strip()
    return text


def _strip_quotes(text: str) -> str:
    text = text.strip()
    while len(text) >= 2 and _QUOTES.get(text[0]) == text[-1] \
            and text[0] not in text[1:-1] and text[-1] not in text[1:-1]:
        text = text[1:-1].strip()
    return text


def clean_translation(text: str) -> str:
    """The translation alone: the fenced block or the first real paragraph, with lead-in
    labels ("Translation:", "翻译："), notes ("Pronounced as:", "注："), wrapping quotes and
    whole-text repeats removed. "" when nothing is left (the caller treats it as failed)."""
    if not isinstance(text, str):
        return ""
    text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    fenced = _FENCE.search(text)
    if fenced and fenced.group(1).strip():
        text = fenced.group(1).strip()
    kept: list[str] = []
    for line in text.split("\n"):
        if _NOTE.match(line):
            if kept:
                break  # notes after the text: the text is done
            continue
        stripped = _LEAD_IN.sub("", line, count=1)
        if not kept and _HEADING.match(stripped):
            continue  # "求解：", "Answer:" alone on a line before the text
        if not stripped.strip():
            if kept and line.strip() == "" and "".join(kept).strip():
                break  # blank line after the text: the first paragraph is the text
            if line.strip():  # a lead-in alone on its line ("Here is the translation:")
                kept = []
            continue
        if stripped != line and kept:
            kept = []  # "Translation: ..." after an echo of the source: keep the block
        kept.append(stripped.strip())
    joined = ("\n" if _CJK.search("".join(kept)) is None else "").join(kept)
    out = _strip_quotes(_collapse_repeats(_strip_quotes(joined)))
    return out.strip()


def _tail(text: str) -> str:
    """The text up to the first mark of a trailing punctuation run (PUNCT_RUN_MIN+ marks;
    "(1/4)=．" is an ending, not a run)."""
    stripped = text.rstrip()
    i = len(stripped)
    while i > 0 and (_is_punct(stripped[i - 1]) or stripped[i - 1].isspace()):
        i -= 1
    marks = sum(1 for c in stripped[i:] if not c.isspace())
    return stripped[:i + 1] if marks >= PUNCT_RUN_MIN else stripped  # may end it


def length_ratio(original: str, attacked: str) -> str | None:
    """Reason when the attacked text is much shorter or longer than the original."""
    a, b = len(_compact(original)), len(_compact(attacked))
    if a == 0 or abs(b - a) < LENGTH_MIN_CHANGE:
        return None
    ratio = b / a
    low, high = LENGTH_BAND
    if low <= ratio <= high:
        return None
    return (f"length {ratio:.2f}x the original ({b} vs {a} characters; allowed "
            f"{low:g}-{high:g}x)")


def _grams(text: str) -> list[str]:
    """Word 3-grams of Latin text, character 4-grams of CJK text, punctuation left out."""
    if _CJK.search(text):
        chars = [c for c in text if not (c.isspace() or _is_punct(c))]
        return ["".join(chars[i:i + 4]) for i in range(len(chars) - 3)]
    words = re.findall(r"\w+", text.lower())
    return [" ".join(words[i:i + 3]) for i in range(len(words) - 2)]


def _stutter(text: str) -> tuple[str, int] | None:
    """The longest run of one word (one Chinese character) said REPEAT_MIN+1 times in a
    row, digits aside ("10000" is a number)."""
    units = _CJK.findall(text) if _CJK.search(text) else re.findall(r"[^\W\d]+", text.lower())
    best: tuple[str, int] | None = None
    run = 0
    for i, unit in enumerate(units):
        run = run + 1 if i and units[i - 1] == unit else 1
        if run > REPEAT_MIN and (best is None or run > best[1]):
            best = (unit, run)
    return best


def repeated_ngrams(original: str, attacked: str) -> str | None:
    """Reason when a stretch loops: REPEAT_LOOP_GRAMS distinct n-grams each occur
    REPEAT_MIN+ times (or half as many REPEAT_MIN+1 times), more often than in the original."""
    stutter = _stutter(attacked)
    if stutter and stutter[1] > (_stutter(original) or ("", 0))[1]:
        return f"\"{stutter[0]}\" {stutter[1]} times in a row"
    counts = Counter(_grams(attacked))
    if not counts:
        return None
    before = Counter(_grams(original))
    loops = [(g, n) for g, n in counts.items() if n >= REPEAT_MIN and n > before[g]]
    heavy = [g for g, n in loops if n > REPEAT_MIN]
    if len(loops) < REPEAT_LOOP_GRAMS and len(heavy) < REPEAT_LOOP_GRAMS // 2:
        return None
    gram, n = max(loops, key=lambda pair: pair[1])
    return (f"{len(loops)} phrases repeat {REPEAT_MIN}+ times, e.g. \"{gram}\" {n} times "
            f"(original: {before[gram]})")


def punctuation_run(original: str, attacked: str) -> str | None:
    """Reason when the attacked text has a run of punctuation marks the original lacks."""
    def longest(text: str) -> str:
        best, run = "", ""
        for ch in text:
            if _is_punct(ch):
                run += ch
            elif not ch.isspace():
                run = ""
            best = run if len(run) > len(best) else best
        return best

    run = longest(attacked)
    if len(run) < PUNCT_RUN_MIN or len(run) <= len(longest(original)):
        return None
    shown = run if len(run) <= 8 else f"{run[:4]}…"
    return f"{len(run)} punctuation marks in a row (\"{shown}\")"


def cut_off(original: str, attacked: str) -> str | None:
    """Reason when the attacked text stops mid-sentence: it ends on a comma-like mark (a
    punctuation run after its words looked through), or it lacks the end mark the original
    has and is also shorter or no longer asks in its last clause. A dropped final "．" on
    its own is fair ("积=．" -> "积=", three rows of the method's own Math23K file)."""
    body = _tail(attacked)
    if not body.strip():
        return None
    last = body.rstrip()[-1]
    before = original.rstrip()[-1:] or " "
    if last in _DANGLING and before not in _DANGLING:
        return f"ends on \"{last}\" mid-sentence: {body.rstrip()[-20:]!r}"
    end, was = body.rstrip(_CLOSERS)[-1:], original.rstrip(_CLOSERS)[-1:]
    if was not in _TERMINAL or end in _TERMINAL:
        return None
    shorter = len(_compact(body)) <= CUT_SHORTER * len(_compact(original))
    lost_ask = bool(_ASKS.search(_last_clause(original))) \
        and not _ASKS.search(_last_clause(body))
    if shorter or lost_ask:
        why = "its question is gone" if lost_ask else "it is shorter"
        return (f"stops without an end mark like the original's \"{was}\" and {why}: "
                f"...{body.rstrip()[-20:]!r}")
    return None


def _last_clause(text: str) -> str:
    parts = _CLAUSE.split(text.rstrip(_CLOSERS).rstrip("。．｡？！?!.…" + _CLOSERS))
    return parts[-1] if parts else ""


def pivot_left(original: str, attacked: str) -> str | None:
    """Reason when the other script is left in: Latin words new in a Chinese question (zh
    via en), or Chinese characters new in an English one (en via zh)."""
    if _CJK.search(original):
        words = {w.lower() for w in _LATIN_WORD.findall(original)}
        new = [w for w in _LATIN_WORD.findall(attacked)
               if w.lower() not in words and w.lower() not in _UNITS]
        if len(new) >= 2 or (new and len(new[0]) >= 4):
            shown = " ".join(new[:6]) + (" …" if len(new) > 6 else "")
            return f"{len(new)} English word(s) left in the Chinese text: {shown}"
        return None
    if not _LATIN_WORD.search(original):
        return None
    added = [c for c in _CJK.findall(attacked) if c not in original]
    if not added:
        return None
    return f"{len(added)} Chinese character(s) left in the English text: {''.join(added[:12])}"


CHECKS: Final[dict[str, Callable[[str, str], str | None]]] = {
    FLAG_LENGTH: length_ratio, FLAG_REPEATED: repeated_ngrams, FLAG_PUNCT_RUN: punctuation_run,
    FLAG_CUT_OFF: cut_off, FLAG_PIVOT_LEFT: pivot_left}


def reasons(original: str, attacked: str) -> dict[str, str]:
    """flag -> why, for every degenerate check that fires; unchanged text fires none."""
    if not isinstance(original, str) or not isinstance(attacked, str) \
            or attacked.strip() == original.strip():
        return {}
    found = {}
    for flag, check in CHECKS.items():
        why = check(original, attacked)
        if why:
            found[flag] = why
    return found


def flag_reasons(flags: list[str] | None, original: str, attacked: str) -> dict[str, str]:
    """Why each stored degenerate flag was raised, recomputed from the texts (items keep
    flag names only); for the review card and `attacks show`."""
    stored = set(flags or [])
    return {f: why for f, why in reasons(original, attacked).items() if f in stored}
