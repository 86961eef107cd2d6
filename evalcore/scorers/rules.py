"""Rules scorers: read the final answer out of a free-text reply, compare with the reference.

Pure, fast, standard library only (the CLI and the runner import this).

Replies are messy: they restate the question and its numbers, list every option, correct
themselves ("... wait, the answer is 800"), mix Chinese and English, use full-width digits.
So every scorer first normalises with NFKC (full-width -> ASCII) and then prefers an explicit
final-answer marker ("the answer is", "答案是", "**...**") over anything else it can find.

Verdicts:

- `correct=True/False` is the 0/1 verdict; `correct=None` only when the item cannot be
  judged (no or unreadable reference).
- A reply from which no answer can be read is wrong, and its reason starts with
  `"invalid:"`; a reply that names two different answers is wrong with a reason starting
  `"ambiguous:"`. `is_invalid()` recognises both, so metrics can count them apart.
"""
from __future__ import annotations

import bisect
import itertools
import json
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, Sequence

from evalcore.dataset.records import Question
from evalcore.scorers.base import Score, Scorer
from evalcore.scorers.extract import strip_checks, strip_option_listing, strip_parentheticals

INVALID = "invalid"
AMBIGUOUS = "ambiguous"


def is_invalid(score: Score) -> bool:
    """True when no single answer could be read from the reply (invalid or ambiguous)."""
    return score.correct is False and score.reason.startswith((INVALID, AMBIGUOUS))


def unparsed_summary(reasons: Iterable[Optional[str]], what: str = "answers"
                     ) -> dict[str, Any]:
    """Count and share of replies the rules could not read, from their scores' reasons
    (one per answered round), with the warning a report shows when there are any.

    An accuracy resting on replies nobody could read measures the parser, not the model,
    so every report (stability, robustness, fairness, BBQ) says how many there were.
    """
    reasons = list(reasons)
    unread = sum(1 for r in reasons if (r or "").startswith((INVALID, AMBIGUOUS)))
    share = unread / len(reasons) if reasons else None
    warning = (f"{unread} of {len(reasons)} {what} ({share:.0%}) could not be read (no single "
               "answer found) and count as wrong; see their reasons, or use a judge model"
               if unread else None)
    return {"answers": len(reasons), "unparsed": unread, "unparsed_share": share,
            "parse_rate": None if share is None else 1.0 - share, "warning": warning}


def _wrong(kind: str, why: str, extracted: Optional[str] = None) -> Score:
    return Score(value=0.0, correct=False, reason=f"{kind}: {why}", extracted=extracted)


def _unjudged(why: str) -> Score:
    return Score(value=0.0, correct=None, reason=why)


def normalize(text: str) -> str:
    """NFKC (full-width digits, letters, colon, percent -> ASCII) without gluing numbers.

    The full-width comma becomes ", " so "44，20" stays two numbers, not 4420.
    """
    text = text.replace("\uff0c", ", ").replace("\u3001", ", ")
    text = unicodedata.normalize("NFKC", text)
    return text.replace("\u2212", "-").replace("\u00d7", "*").replace("\u00f7", "/")


_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4,
              "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}


def _cn_int(text: str) -> Optional[int]:
    """Chinese numerals 0..99 ("三", "十二", "二十一"); None if not one."""
    if not text or any(ch not in _CN_DIGITS and ch != "十" for ch in text):
        return None
    if "十" not in text:
        return _CN_DIGITS[text] if len(text) == 1 else None
    tens, _, ones = text.partition("十")
    if len(tens) > 1 or len(ones) > 1:
        return None
    return (_CN_DIGITS[tens] if tens else 1) * 10 + (_CN_DIGITS[ones] if ones else 0)


# ============================================================================ numeric (math)

_NUMBER = re.compile(
    r"(?P<sign>(?<![\w.)\]])-|负|零下)?"
    r"(?:(?P<whole>\d+)(?:\s*又\s*|\s+)(?P<mnum>\d+)\s*/\s*(?P<mden>\d+)"      # 2 1/2, 2又1/2
    r"|(?P<cden>\d+(?:\.\d+)?)\s*分之\s*(?P<cnum>\d+(?:\.\d+)?)"                  # 4分之3
    r"|(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d*\.\d+|\d+)"                        # 1,200.5 .5 800
    r"(?:(?P<exp>[eE][+-]?\d+)(?![\w])|\s*[*xX]\s*10\s*\^\s*(?P<pow>[+-]?\d+))?"     # 1e3 1.2*10^3
    r"(?:\s*/\s*(?P<den>\d+(?:\.\d+)?))?)"                                        # 3/4
    r"(?P<pct>\s*%)?(?:\s*(?P<mult>万|亿))?"
)
_STRONG_NUMERIC_MARKERS = re.compile(
    r"(?:final\s+answer|answer|result)\s*(?:is|was|would\s+be|should\s+be|will\s+be|[:=])"
    r"\s*:?"
    r"|(?:最终)?(?:正确)?(?:答案|结果|答)\s*(?:应该|应)?\s*(?:是|为|[:=])"
    r"|\\boxed\{",
    re.IGNORECASE,
)
_WEAK_NUMERIC_MARKERS = re.compile(r"所以|因此|\b(?:therefore|thus|hence|so)\b",
                                   re.IGNORECASE)
"""Conclusions: the answer is in their clause (after its '=' or its last number)."""
_BOLD = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)
_DIGIT = re.compile(r"\d")
_CLAUSE_END = re.compile(r"[。！？!?;；\n]|[.,](?=\s|$)")


@dataclass(frozen=True)
class _Number:
    text: str
    values: tuple[float, ...]
    """Readings to accept: one, or two for a percentage (80% -> 0.8 and 80)."""
    start: int


def _to_number(match: re.Match[str]) -> Optional[_Number]:
    g = match.groupdict()
    try:
        if g["whole"] is not None:
            value = int(g["whole"]) + int(g["mnum"]) / int(g["mden"])
        elif g["cden"] is not None:
            value = float(g["cnum"]) / float(g["cden"])
        else:
            value = float(g["num"].replace(",", "") + (g["exp"] or ""))
            if g["pow"] is not None:
                value *= 10.0 ** int(g["pow"])
            if g["den"] is not None:
                value /= float(g["den"])
    except (ZeroDivisionError, OverflowError, ValueError):
        # ValueError: an int of more than 4,300 digits (Python's conversion limit); no
        # answer has that many, so such a run is not read as a number
        return None
    if g["sign"]:
        value = -value
    if g["mult"]:
        value *= 1e4 if g["mult"] == "万" else 1e8
    values = (value / 100, value) if g["pct"] else (value,)
    return _Number(match.group(0).strip(), values, match.start())


def find_numbers(text: str) -> list[_Number]:
    """Every number in already-normalised `text`, in order."""
    found = (_to_number(m) for m in _NUMBER.finditer(text))
    return [n for n in found if n is not None]


def _first_valid_end(matches: Sequence[re.Match[str]], starts: Sequence[int],
                     pos: int, stop: Optional[int] = None) -> Optional[int]:
    """End of the first readable number starting in [pos, stop), from the reply's matches."""
    for i in range(bisect.bisect_left(starts, pos), len(matches)):
        m = matches[i]
        if stop is not None and m.start() >= stop:
            return None
        if _to_number(m) is not None:
            return m.end()
    return None


def _after_last_marker(text: str, markers: Iterable[re.Match[str]],
                       matches: Sequence[re.Match[str]], starts: Sequence[int]
                       ) -> Optional[_Number]:
    """The first number after the LAST marker that has one, at the marker's position.

    The number is read from the text after the marker (a "-" right after "答案是" is its
    sign), but only as far as the first number the whole reply holds there: a reply
    repeating "the answer is" 70,000 times is read in linear time, not by re-reading the
    rest of the reply after each marker.
    """
    for marker in reversed(list(markers)):
        end = _first_valid_end(matches, starts, marker.end())
        if end is None:
            continue
        after = find_numbers(text[marker.end():end])
        if after:
            return _Number(after[0].text, after[0].values, marker.start())
    return None


def _pick_in(text: str, offset: int = 0) -> Optional[_Number]:
    """The answer within one sentence: the number right after its last '=', else its last."""
    eq = text.rfind("=")
    matches = list(_NUMBER.finditer(text))
    after_eq = (m for m in matches if m.start() > eq) if eq >= 0 else iter(())
    for m in itertools.chain(after_eq, reversed(matches)):  # converted lazily: a reply may hold 500,000
        chosen = _to_number(m)
        if chosen is not None:
            return _Number(chosen.text, chosen.values, chosen.start + offset)
    return None


def extract_number(answer: str) -> Optional[_Number]:
    r"""The final numeric answer of a reply.

    A self-check after the answer ("check: 7+3=10", "验证：6×4=24") is cut off first.
    Order: the number right after the LAST explicit marker ("answer is", "答案是", "答：",
    `\boxed{`) or inside the last bold span `**...**`, whichever comes later; else the
    number of the last conclusion's clause ("所以", "therefore", "so": after its "=", else
    its last number); else, outside parentheses where possible, in the last clause (split at 。，,.;!? and new lines) that holds a number, the number after its
    last "=", else its last number. Working on the last clause keeps an earlier step
    ("每边44÷4+1=12棵，所以周长是800米") from winning; a unit conversion after the answer
    ("800 m, i.e. 0.8 km") does win, so say "答案是" / "the answer is" in the prompt.
    """
    text = strip_checks(normalize(answer), _DIGIT)
    matches = list(_NUMBER.finditer(text))
    starts = [m.start() for m in matches]
    strong: list[_Number] = []
    marked = _after_last_marker(text, _STRONG_NUMERIC_MARKERS.finditer(text), matches, starts)
    if marked:
        strong.append(marked)
    for bold in _BOLD.finditer(text):
        picked = _pick_in(bold.group(1))
        if picked:
            strong.append(_Number(picked.text, picked.values, bold.start()))
    if strong:
        return max(strong, key=lambda n: n.start)
    clause_ends = [m.start() for m in _CLAUSE_END.finditer(text)]
    for marker in reversed(list(_WEAK_NUMERIC_MARKERS.finditer(text))):  # the last one wins
        at = bisect.bisect_left(clause_ends, marker.end())
        end = clause_ends[at] if at < len(clause_ends) else len(text)
        if _first_valid_end(matches, starts, marker.end(), end) is None:
            continue  # no number in its clause: skipped without reading it
        clause = text[marker.end():end]
        bare = strip_parentheticals(clause)
        picked = _pick_in(bare if _DIGIT.search(bare) else clause)
        if picked:
            return _Number(picked.text, picked.values, marker.start())
    bare = strip_parentheticals(text)
    return _last_clause_number(bare if _DIGIT.search(bare) else text)


def _last_clause_number(text: str) -> Optional[_Number]:
    start = 0
    last: Optional[_Number] = None
    for end in [m.end() for m in _CLAUSE_END.finditer(text)] + [len(text)]:
        picked = _pick_in(text[start:end], start)
        last = picked or last
        start = end
    return last


def parse_reference_number(reference: str) -> Optional[float]:
    """A reference such as "800.0", "3/4", "1,200", "80%" (read as 0.8)."""
    numbers = find_numbers(normalize(reference.strip()))
    return numbers[0].values[0] if len(numbers) == 1 else None


def make_numeric_scorer(rel_tol: float = 1e-4, abs_tol: float = 1e-6) -> Scorer:
    """A math scorer comparing the reply's final number with the reference.

    Tolerance is `math.isclose(pred, ref, rel_tol, abs_tol)`: relative 1e-4 absorbs float
    noise and 4-5 significant digits of rounding; the absolute 1e-6 makes 0 comparable.
    A percentage in the reply is accepted under either reading, "80%" == 0.8 and == 80,
    because Math23K references carry no unit ("买书用去80%" style questions are stored as 0.8
    or as 80). A bare 80 does NOT match 0.8.
    """

    def numeric(answer: str, question: Question) -> Score:
        if question.reference is None or not question.reference.strip():
            return _unjudged("no reference number")
        ref = parse_reference_number(question.reference)
        if ref is None:
            return _unjudged(f"reference {question.reference!r} is not a number")
        found = extract_number(answer)
        if found is None:
            return _wrong(INVALID, "no number in the reply")
        ok = any(math.isclose(v, ref, rel_tol=rel_tol, abs_tol=abs_tol) for v in found.values)
        readings = " or ".join(f"{v:g}" for v in found.values)
        verdict = "matches" if ok else "differs from"
        return Score(value=float(ok), correct=ok, extracted=found.text,
                     reason=f"read {found.text!r} ({readings}), {verdict} reference {ref:g}")

    return numeric


numeric = make_numeric_scorer()


# ============================================================================ single choice

_ORDINALS_EN = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
                "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11,
                "twelfth": 12, "thirteenth": 13}
_CN_NUM = "[零〇一二两三四五六七八九十]{1,3}"
_LETTER = r"(?-i:(?![AI]\s+[a-z'])[A-Z])(?![A-Za-z])"
"""A capital option letter, but not the words "I ..." / "A ..." ("The answer is I will fail")."""
_IDX = rf"(?:[(\[]\s*)?(?P<idx>\d++(?!\.++\d)|{_LETTER}|{_CN_NUM})(?:\s*[)\]])?"
"""An option label as the prompt shows it: 0-based number, letter A=0, Chinese numeral.
A number label is all of its digits and not the start of a decimal ("3.5"); possessive,
so a reply of a million digits is not re-read from every shorter prefix (cubic time)."""
_ORD = rf"(?P<ord>\d+|{_CN_NUM})"
_CHOICE_WORD = r"(?:choice|option|answer|number|no\.?|#|选项|第)?"

_END = r"(?=\s*(?:[.。,，!！;；)\]]|$|\s+(?:is|as)\b))"
"""After a bare label in a loose phrase ("I think C."), so "I think 2 people ..." is no answer."""
_DECISIVE = [re.compile(p, re.IGNORECASE) for p in (
    rf"(?:answer|choice|option|fits?)\s*(?:is|would\s+be|should\s+be|will\s+be|[:=]|\s-)\s*:?\s*"
    rf"{_CHOICE_WORD}\s*{_IDX}",
    rf"\bI(?:\s+would|\s+will|'d|'ll)?\s+(?:choose|pick|select|go\s+with)\s+{_CHOICE_WORD}\s*{_IDX}",
    rf"\bI(?:\s+think|\s+believe|\s+guess|\s+would\s+say|'d\s+say)\s+(?:that\s+)?"
    rf"(?:(?:it'?s|it\s+is|the\s+answer\s+is)\s+)?{_CHOICE_WORD}\s*{_IDX}{_END}",
    rf"(?:^|(?<=[\s*]))\**{_IDX}\**\s+is\s+(?:the\s+)?(?:correct|right|best|answer)\b",
    rf"(?:答案|(?<!回)答|应选|我选|选择|选(?!项))\s*[】\]]?\s*(?:应该|应)?\s*(?:是|为)?\s*[:=]?\s*"
    rf"(?:选项|选)?\s*{_IDX}",
    rf"(?:答案|应选|我选|选择|选(?!项))\s*(?:应该|应)?\s*(?:是|为)?\s*[:=]?\s*第\s*{_ORD}\s*(?:个|项)",
    rf"(?:我认为|我觉得|我想|应该)\s*(?:应该)?\s*(?:是|选)\s*(?:选项)?\s*{_IDX}{_END}",
)]
_ALTERNATIVE = re.compile(
    rf"\s*(?:或者|或是|或|还是|\bor\b|/)\s*(?:选项|option|choice)?\s*{_IDX}", re.IGNORECASE)
_MENTIONS = [re.compile(p, re.IGNORECASE) for p in (
    rf"\b(?:choice|option)\s*(?:no\.?|number|#)?\s*{_IDX}",
    rf"选项\s*{_IDX}",
    r"\(\s*(?P<idx>(?-i:[A-Z]))\s*\)",
    rf"第\s*{_ORD}\s*(?:个选项|个答案|个|项|选项)",
    r"\bthe\s+(?P<ord>" + "|".join(_ORDINALS_EN) + r")\s+(?:option|choice|one|answer)",
    rf"^\s*\**\s*{_IDX}\s*\**\s*(?:[.)、:]|$)",
)]


_MAX_LABEL_DIGITS = 6
"""An option label longer than this is a number in the text (a year, a 200-digit reply),
not an option: never converted (int() refuses more than 4,300 digits)."""


def _label_index(label: str) -> Optional[int]:
    if label.isdigit() and len(label) > _MAX_LABEL_DIGITS:
        return None
    if label.isdigit():
        return int(label)
    if len(label) == 1 and "A" <= label <= "Z":
        return ord(label) - ord("A")
    return _cn_int(label)


def _ordinal_index(label: str) -> Optional[int]:
    """1-based ordinal ("第三个", "the third option") -> 0-based index."""
    label = label.lower()
    if len(label) > _MAX_LABEL_DIGITS:
        return None
    n = int(label) if label.isdigit() else _ORDINALS_EN.get(label) or _cn_int(label)
    return n - 1 if n else None


def _indices(patterns: Sequence[re.Pattern[str]], text: str, n_choices: int) -> list[int]:
    found: list[int] = []
    for pattern in patterns:
        for m in pattern.finditer(text):
            g = m.groupdict()
            labels = [_label_index(g["idx"]) if g.get("idx") else _ordinal_index(g["ord"])]
            alternative = _ALTERNATIVE.match(text, m.end())
            if alternative:  # "答案是A或C", "choice 1 or 3": a second option named
                labels.append(_label_index(alternative.group("idx")))
            found += [i for i in labels
                      if i is not None and (n_choices == 0 or 0 <= i < n_choices)]
    return found


def _squash(text: str) -> str:
    """Case-, space- and punctuation-free form, for spotting an option's text in a reply."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in text if not (ch.isspace() or unicodedata.category(ch)[0] in "PS"))


def _quoted_options(answer: str, choices: Sequence[str], question: str = "") -> list[int]:
    """Options whose full text appears in the reply, minus those only inside a longer match.

    A restated question is cut out first, as its words may hold an option ("... they usually
    eat" + "beef"); if that leaves no option (an option that itself quotes the question), the
    whole reply is searched. Short Latin options ("e", "beef") must stand as whole words;
    longer ones may sit anywhere once case, spaces and punctuation are squashed away.
    """
    texts = [_squash(c) for c in choices]
    as_words = [re.compile(r"(?<!\w)" + r"\W+".join(re.findall(r"\w+", t)) + r"(?!\w)")
                if t.isascii() and len(t) < 5 else None
                for t in (unicodedata.normalize("NFKC", c).casefold() for c in choices)]

    def search(reply: str) -> list[int]:
        squashed, plain = _squash(reply), unicodedata.normalize("NFKC", reply).casefold()
        hits = [i for i, t in enumerate(texts) if t and (
            as_words[i].search(plain) if as_words[i] else t in squashed)]
        return [i for i in hits
                if not any(texts[i] != texts[j] and texts[i] in texts[j] for j in hits)]

    if question.strip():
        cut = re.compile(re.escape(question.strip()), re.IGNORECASE).sub(" | ", answer)
        if cut != answer and search(cut):
            return search(cut)
    return search(answer)


def extract_choice(answer: str, choices: Sequence[str],
                   question: str = "") -> tuple[Optional[int], str]:
    """(0-based option index or None, how it was read).

    Labels follow the prompt, which renders "choice 0: ..." : numbers are 0-based indices
    ("choice 3", "选项3", "the answer is 2" -> 3, 3, 2), letters A=0, B=1 ...; ordinals are
    counted from 1 ("第三个选项", "the third option" -> 2). Tiers, first that names
    anything wins: decisive phrases ("the answer is", "答案是", "选C", "I choose"), then
    mentions ("choice 3", "(B)", a leading "3." or a bare "3"), then the text of one option
    quoted without an index. Lines that restate the options ("1. 男生" / "2. 没有足够信息")
    are set aside first: listing the options is not choosing one. Two different options within the winning tier -> ambiguous;
    "答案是A或C" / "choice 1 or 3" name two. `question`, when given, is ignored where the
    reply restates it word for word.
    """
    text = normalize(answer).strip().replace("**", "")
    if question.strip():
        text = text.replace(normalize(question).strip(), " ")
    text, listed = strip_option_listing(text, choices)
    for tier, found in (("answer phrase", _indices(_DECISIVE, text, len(choices))),
                        ("option label", _indices(_MENTIONS, text, len(choices))),
                        ("option text", _quoted_options(text, choices, question))):
        distinct = sorted(set(found))
        if len(distinct) == 1:
            return distinct[0], tier
        if len(distinct) > 1:
            return None, f"{AMBIGUOUS}: {tier}s name options {distinct}"
    if listed:
        return None, f"{INVALID}: lists {listed} options without choosing one"
    return None, f"{INVALID}: no option named (by index, letter or option text)"


def _reference_index(reference: Optional[str]) -> Optional[int]:
    try:
        value = float(str(reference).strip())
    except ValueError:
        return None
    return int(value) if value.is_integer() and value >= 0 else None


def choice(answer: str, question: Question) -> Score:
    """Single choice: the option the reply names vs the 0-based reference index."""
    ref = _reference_index(question.reference)
    if ref is None:
        return _unjudged(f"reference {question.reference!r} is not an option index")
    index, how = extract_choice(answer, question.choices, question.question)
    if index is None:
        return Score(value=0.0, correct=False, reason=how)
    ok = index == ref
    return Score(value=float(ok), correct=ok, extracted=str(index),
                 reason=f"read option {index} ({how}), reference {ref}")


bias_choice: Scorer = choice
"""BBQ / CBBQ items are single choice; the bias annotations are used by the fairness metrics."""


# ============================================================================ sentiment

_SENTIMENT_WORDS = {
    "positive": re.compile(r"\bpositive\b|正面|积极|正向", re.IGNORECASE),
    "negative": re.compile(r"\bnegative\b|负面|消极|负向", re.IGNORECASE),
}
_REFERENCE_LABELS = {"positive": "positive", "1": "positive", "正面": "positive",
                     "negative": "negative", "0": "negative", "负面": "negative"}


def extract_sentiment(answer: str) -> tuple[Optional[str], str]:
    """The label the reply names, by the method's rule: a keyword match.

    Naming both labels ("neither positive nor negative") or neither is invalid; there is no
    negation handling, so "not negative" reads as negative.
    """
    text = normalize(answer)
    named = [label for label, pattern in _SENTIMENT_WORDS.items() if pattern.search(text)]
    if len(named) == 1:
        return named[0], "keyword"
    why = "names both positive and negative" if named else "names neither positive nor negative"
    return None, f"{INVALID}: {why}"


def sentiment(answer: str, question: Question) -> Score:
    """Sentiment by keyword (positive/negative, 正面/负面, 积极/消极) vs the reference label."""
    ref = _REFERENCE_LABELS.get(str(question.reference or "").strip().lower())
    if ref is None:
        return _unjudged(f"reference {question.reference!r} is not positive/negative")
    label, how = extract_sentiment(answer)
    if label is None:
        return Score(value=0.0, correct=False, reason=how)
    ok = label == ref
    return Score(value=float(ok), correct=ok, extracted=label,
                 reason=f"read {label} ({how}), reference {ref}")


# ============================================================================ multi true/false

_VERDICT_WORDS = {"1": 1, "0": 0, "true": 1, "false": 0, "yes": 1, "no": 0,
                  "appropriate": 1, "inappropriate": 0, "correct": 1, "incorrect": 0,
                  "正确": 1, "错误": 0, "对": 1, "错": 0, "合适": 1, "不合适": 0, "是": 1, "否": 0}
_VERDICT = r"(?:1|0|true|false|yes|no|inappropriate|appropriate|incorrect|correct|" \
           r"不合适|合适|正确|错误|对|错|是|否)"
_LIST = re.compile(r"\[([^\[\]]*)\]")
_RUN = re.compile(r"(?<![\w.])[01](?:\s*[,;/\s]\s*[01])+(?![\w.])")
_LINE_LABEL = re.compile(
    r"^\s*[-*]?\s*\**\s*(?:choice|option|选项)?\s*(?P<idx>\d+)\s*\**\s*[:.)、\-]", re.IGNORECASE)
_LINE_VERDICT = re.compile(rf"(?<![\w.]){_VERDICT}(?![\w.])", re.IGNORECASE)


def _as_bits(items: Sequence[str]) -> Optional[list[int]]:
    bits = []
    for item in items:
        key = item.strip().strip("'\"").lower()
        try:
            bits.append(int(float(key)) if key not in _VERDICT_WORDS else _VERDICT_WORDS[key])
        except (ValueError, OverflowError):  # "nan", "inf", "1e999": not a 0/1
            return None
        if bits[-1] not in (0, 1):
            return None
    return bits or None


def _bracket_lists(text: str) -> list[list[int]]:
    lists = (_as_bits(re.split(r"[,;\s]+", m.group(1).strip())) for m in _LIST.finditer(text))
    return [b for b in lists if b]


def _bare_runs(text: str) -> list[list[int]]:
    return [[int(d) for d in re.findall(r"[01]", m.group(0))] for m in _RUN.finditer(text)]


_MAX_EXTRA_LINES = 32
"""Option lines labelled past the options are read (a length mismatch, scored), up to
this many: "choice 99999999: 1" must not build a list of a hundred million verdicts."""


def _option_lines(text: str, n_options: int, choices: Sequence[str]) -> Optional[list[int]]:
    """Per-option lines "choice0: ... 1" / "1. ... -> appropriate".

    Reads the last verdict word on each labelled line, after removing the option's own text
    (which may hold digits or "No, ...").
    """
    verdicts: dict[int, int] = {}
    options = sorted((normalize(c).strip() for c in choices if c.strip()), key=len, reverse=True)
    for line in text.splitlines():
        label = _LINE_LABEL.match(line)
        if not label or len(label.group("idx")) > _MAX_LABEL_DIGITS:
            continue  # a line starting with a long number is no option line
        if int(label.group("idx")) > n_options + _MAX_EXTRA_LINES:
            continue
        rest = line[label.end():]
        for option in options:
            rest = rest.replace(option, " ")
        words = _LINE_VERDICT.findall(rest)
        if words:
            verdicts[int(label.group("idx"))] = _VERDICT_WORDS[words[-1].lower()]
    if not verdicts:
        return None
    base = 1 if 0 not in verdicts and len(verdicts) == n_options else 0  # renumbered 1..n
    size = max(n_options, max(verdicts) + 1 - base)
    return [verdicts.get(i + base, 0) for i in range(size)]


def extract_bits(answer: str, n_options: int,
                 choices: Sequence[str] = ()) -> tuple[Optional[list[int]], str]:
    """The reply's 0/1 judgements and how they were read.

    Sources: a "[1,0,1]" list, per-option lines, or a bare "1, 0, 1" / "1 0 1" run. One of
    the expected length is preferred (the prompt's own example list "[1,0,1]" may be
    echoed); the last of that length wins, as replies end with the answer.
    """
    text = normalize(answer)
    lines = _option_lines(text, n_options, choices)
    groups = [("list", _bracket_lists(text)), ("option lines", [lines] if lines else []),
              ("sequence", _bare_runs(text))]
    for how, found in groups:
        fitting = [bits for bits in found if len(bits) == n_options]
        if fitting:
            return fitting[-1], how
    for how, found in groups:
        if found:
            return found[-1], how
    return None, f"{INVALID}: no 0/1 list found"


def prf(pred: Sequence[int], gold: Sequence[int]) -> tuple[float, float, float]:
    """(precision, recall, F1) of the 1s in `pred` against `gold`, position by position.

    A missing prediction counts as 0, extra ones are ignored. Zero division gives 0 (as
    sklearn's zero_division=0), except that predicting no 1 when gold has none is perfect
    (1, 1, 1): there was nothing to find and nothing was wrongly claimed.
    """
    pred = list(pred[: len(gold)]) + [0] * max(0, len(gold) - len(pred))
    tp = sum(1 for p, g in zip(pred, gold) if p == 1 and g == 1)
    n_pred, n_gold = sum(1 for p in pred if p == 1), sum(1 for g in gold if g == 1)
    if n_pred == 0 and n_gold == 0:
        return 1.0, 1.0, 1.0
    precision = tp / n_pred if n_pred else 0.0
    recall = tp / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def parse_reference_bits(reference: Optional[str]) -> Optional[list[int]]:
    """A reference such as "[1, 1, 0]" or "[1.0, 0.0]" (JSON), or "1,0,1"."""
    if reference is None:
        return None
    try:
        data = json.loads(reference)
    except (TypeError, ValueError):
        data = re.split(r"[,;\s]+", str(reference).strip("[] "))
    if not isinstance(data, list):
        return None
    return _as_bits([str(x) for x in data if str(x).strip() not in ("", "None", "nan")])


def multi_tf(answer: str, question: Question) -> Score:
    """Multi true/false: value = F1 of the 1s, correct = the whole vector matches."""
    gold = parse_reference_bits(question.reference)
    if gold is None:
        return _unjudged(f"reference {question.reference!r} is not a 0/1 list")
    pred, how = extract_bits(answer, len(gold), question.choices)
    if pred is None:
        return Score(value=0.0, correct=False, reason=how)
    precision, recall, f1 = prf(pred, gold)
    ok = pred == gold
    size = "" if len(pred) == len(gold) else f", length mismatch {len(pred)} vs {len(gold)}"
    return Score(value=f1, correct=ok, extracted=json.dumps(pred),
                 reason=f"read {pred} ({how}) vs {gold}{size}: "
                        f"precision {precision:.3f} recall {recall:.3f} F1 {f1:.3f}")


# ============================================================================ exact match


def normalize_text(text: str) -> str:
    """For exact match: NFKC, casefold, punctuation and symbols dropped, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if unicodedata.category(ch)[0] in "PS" else ch for ch in text)
    return " ".join(text.split())


def exact_match(answer: str, question: Question) -> Score:
    """The whole reply equals the reference after `normalize_text`."""
    if question.reference is None or not question.reference.strip():
        return _unjudged("no reference to match")
    got, ref = normalize_text(answer), normalize_text(question.reference)
    if not got:
        return _wrong(INVALID, "empty reply")
    ok = got == ref
    return Score(value=float(ok), correct=ok, extracted=got,
                 reason=f"{'equals' if ok else 'differs from'} reference {ref!r} after normalising")


RULES: dict[str, Callable[[str, Question], Score]] = {
    "numeric": numeric,
    "choice": choice,
    "bias_choice": bias_choice,
    "sentiment": sentiment,
    "multi_tf": multi_tf,
    "exact_match": exact_match,
}
"""Rules scorers by name (the registry adds the text-similarity ones)."""
