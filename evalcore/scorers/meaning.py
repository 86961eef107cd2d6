"""Do two open answers to one question mean the same? Two routes.

- Offline (`offline_same`): e5's cosine alone was right on 20 of a blind reviewer's 40
  pairs: it puts any two sentences of one topic near 0.9 and does not see a "not". Cheap
  lexical cues decide first, each one a way answers on one topic differ that e5 misses:
  opposite yes/no, a negation on one side only, different numbers, and one or two content
  words swapped in an otherwise equal sentence ("on Monday" / "on Friday"). What no cue
  decides goes to e5 at `MEANING_COSINE`. Calibrated on tests/metrics/meaning_pairs.json
  only (the blind file is the audit, never tuned on).
- A judge model (`meaning_request`, `parse_same`): asked "same meaning?" per pair of
  answers; its reply is hostile input, read by a parser that never raises.
"""
from __future__ import annotations

import functools
import hashlib
import json
import re
import unicodedata
from difflib import SequenceMatcher
from typing import Optional

from evalcore.providers.base import ChatRequest
from evalcore.scorers.text import tokenize

MEANING_COSINE = 0.90
"""e5 cosine at or above which two answers no cue told apart are one meaning. With the
cues first, 0.90 is the best of 0.80..0.99 on the calibration pairs (38 of 40; e5 alone:
34 of 40 at 0.945). The blind figures are in docs/repeats.md."""

STOP = frozenset("""a an the is are was were be been being am of to in on at for by with and or
it its this that these those we you he she they i our your his her their my me us them
do does did will would can could should shall may might must has have had as from into
than then so s 's also just very about some any there here what which who whom whose
的 了 是 在 和 与 也 就 都 而 及 着 吗 呢 吧 啊 个 这 那 我 你 他 她 它 我们 你们 他们""".split())
"""Function words: their presence says nothing about which answer is given."""
NEGATORS = frozenset("""not no never none nothing nobody neither nor cannot can't won't don't
doesn't didn't isn't aren't wasn't weren't shouldn't couldn't wouldn't n't without
不 不是 不能 不会 不要 不可以 不可 不用 不必 没 没有 无 非 别 未 并非 绝不 否""".split())
"""Words that turn a statement round; one side having one and the other none is a cue."""
_NOT_NEGATING = frozenset({"不过", "不仅", "不但", "不断", "不少", "不同", "无论", "非常"})
YES = frozenset({"yes", "yeah", "yep", "correct", "true", "right", "是", "是的", "对",
                 "对的", "可以", "会", "能"})
NO = frozenset({"no", "nope", "false", "incorrect", "wrong", "不", "不是", "不对", "不能",
                "不会", "不可以", "否", "没有"})
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _tokens(text: str) -> list[str]:
    return list(_cached_tokens(text))


@functools.lru_cache(maxsize=8192)
def _cached_tokens(text: str) -> tuple[str, ...]:
    """A reply is compared with several representatives: tokenised once."""
    return tuple(tokenize(text))


def _numbers(text: str) -> set[str]:
    """The numbers written in digits, thousands commas dropped ("1,200" = "1200")."""
    text = unicodedata.normalize("NFKC", text)
    return {m.group().replace(",", "").rstrip("0").rstrip(".") if "." in m.group()
            else m.group().replace(",", "") for m in _NUMBER.finditer(text)}


def _negated(tokens: list[str], text: str) -> bool:
    if any(t in NEGATORS and t not in _NOT_NEGATING for t in tokens):
        return True
    if re.search(r"n't\b", text.lower()):
        return True
    return any(t.startswith(("不", "没")) and t not in _NOT_NEGATING for t in tokens)


def _polarity(tokens: list[str]) -> int:
    """+1 / -1 when the answer opens with yes / no, else 0."""
    if not tokens:
        return 0
    return 1 if tokens[0] in YES else -1 if tokens[0] in NO else 0


def _near(word: str, words: set[str]) -> bool:
    """`word` or a form of it ("dog"/"dogs", "metal"/"metallic") is in `words`."""
    if word in words:
        return True
    return len(word) >= 4 and any(len(w) >= 4 and (w.startswith(word) or word.startswith(w))
                                  for w in words)


def _content(tokens: list[str]) -> set[str]:
    """The words that carry the answer (function words and bare numbers left out)."""
    return {t for t in tokens if t not in STOP and not _NUMBER.fullmatch(t)
            and (len(t) > 1 or "\u4e00" <= t <= "\u9fff")}


def _swapped(ta: list[str], tb: list[str]) -> Optional[tuple[list[str], list[str]]]:
    """The words replaced when `tb` is `ta` with one or two words swapped in place
    ("the meeting is on Monday" / "... on Friday"; "the Earth orbits the Sun" / "the
    Sun orbits the Earth"): the same frame with another filler is another answer. None
    when the sentences differ otherwise (words added, dropped or moved)."""
    ops = SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes()
    if any(op in ("insert", "delete") for op, *_ in ops):
        return None
    old = [w for op, i1, i2, _, _ in ops if op == "replace" for w in ta[i1:i2]]
    new = [w for op, _, _, j1, j2 in ops if op == "replace" for w in tb[j1:j2]]
    kept = [w for op, i1, i2, _, _ in ops if op == "equal" for w in ta[i1:i2]]
    if not old or len(old) > 2 or len(new) > 2 or not _content(kept):
        return None
    if not (_content(old) and _content(new)) or any(_near(w, set(new)) for w in old):
        return None  # a function word, or another form of the same word kept
    return old, new


def cue(a: str, b: str) -> Optional[tuple[bool, str]]:
    """(same?, why) when a lexical cue decides the pair, else None (e5 decides)."""
    ta, tb = _tokens(a), _tokens(b)
    pa, pb = _polarity(ta), _polarity(tb)
    if pa and pb and pa != pb:
        return False, "one says yes, the other no"
    if _negated(ta, a) != _negated(tb, b):
        return False, "a negation on one side only"
    na, nb = _numbers(a), _numbers(b)
    if na and nb and not (na <= nb or nb <= na):
        return False, "different numbers"
    swap = _swapped(ta, tb)
    if swap is not None:
        return False, f"the same sentence with {' '.join(swap[0])!r} / {' '.join(swap[1])!r}"
    ca, cb = _content(ta), _content(tb)
    only_a = {w for w in ca if not _near(w, cb)}
    only_b = {w for w in cb if not _near(w, ca)}
    if ca and cb and (not only_a or not only_b) and (na <= nb or nb <= na):
        return True, "one answer's words are all in the other"
    return None


def offline_same(a: str, b: str, cosine: float, threshold: float = MEANING_COSINE
                 ) -> tuple[bool, str]:
    """(same meaning?, why): a lexical cue, else e5's `cosine` against `threshold`."""
    decided = cue(a, b)
    if decided is not None:
        return decided
    sign = ">=" if cosine >= threshold else "<"
    return cosine >= threshold, f"e5 cosine {cosine:.3f} {sign} {threshold}"


# --------------------------------------------------------------------------- judge route

MEANING_STAGE = "meaning:"
"""Call stage prefix of a judge's "same meaning?" verdict on one unordered answer pair."""

MEANING_SYSTEM = "You compare two answers. You reply with exactly one word: yes or no."
MEANING_PROMPT = """QUESTION: {question}
ANSWER 1: {a}
ANSWER 2: {b}
Do ANSWER 1 and ANSWER 2 give the same answer to the QUESTION (the same claim, even in other
words, another language, or with more or less detail)? Answers that contradict each other,
name another person, place, thing or number, or say yes where the other says no are not
the same. Reply yes or no."""
"""Short, the instruction last and a one-word system line: small local models (SmolLM2-135M)
otherwise continue the text instead of answering."""


def ordered(a: str, b: str) -> tuple[str, str]:
    """The pair in one canonical order: a pair's verdict is asked and cached once."""
    return (a, b) if a <= b else (b, a)


def pair_stage(judge: str, a: str, b: str) -> str:
    """The call stage caching `judge`'s verdict on the unordered pair of answer keys."""
    first, second = ordered(a, b)
    digest = hashlib.sha256(json.dumps([judge, first, second]).encode("utf-8")).hexdigest()
    return MEANING_STAGE + digest[:24]


ANSWER_CHARS = 2000
"""Each answer is cut to this many characters in the request: a runaway reply must not
make the judge call (and its cost) unbounded."""


def meaning_request(question: str, a: str, b: str) -> ChatRequest:
    """The "same meaning?" request for two replies (given in canonical order, each cut
    to `ANSWER_CHARS`)."""
    first, second = (t if len(t) <= ANSWER_CHARS else t[:ANSWER_CHARS] + " ..."
                     for t in ordered(a, b))
    return ChatRequest.user(MEANING_PROMPT.format(question=question, a=first, b=second),
                            system=MEANING_SYSTEM, temperature=0.0, max_tokens=16)


_WORD = re.compile(r"[a-z]+|[\u4e00-\u9fff]+")
_LEAD_IN = re.compile(r"^\W*(?:my |the )?(?:final |short )?(?:answer|reply|verdict)"
                      r"(?: to (?:this|the|your) question)?(?: is)?\W*")
"""'The answer to this question is: No.' (how SmolLM2-135M answers) opens with its verdict."""
_JSON_KEYS = ("same", "same_meaning", "answer", "verdict", "result")


def parse_same(reply: Optional[str]) -> Optional[bool]:
    """The judge's yes/no from its reply; None when it says neither or both.

    Reads a JSON object's `same`/`answer` field, else the first yes/no word of the reply
    (markdown, quotes and a lead-in like "Answer:" skipped). Any text, any length: it
    looks at the first 2000 characters only and never raises.
    """
    if not isinstance(reply, str):
        return None
    text = unicodedata.normalize("NFKC", reply[:2000]).strip().lower()
    if not text:
        return None
    if "{" in text:
        found = _from_json(text)
        if found is not None:
            return found
    words = _WORD.findall(_LEAD_IN.sub("", text, count=1))
    for word in words[:40]:
        if word in ("answer", "reply", "verdict", "the", "a", "is", "my", "final",
                    "答案", "回答", "判断", "结论", "答"):
            continue
        if word in ("yes", "same", "true", "identical", "equivalent"):
            return True
        if word in ("no", "not", "different", "false", "differ", "contradict"):
            return False
        if "\u4e00" <= word[0] <= "\u9fff":
            return _chinese(word)
        break
    return _phrased(text)


_SAID_DIFFERENT = re.compile(r"\bnot\b[^.]{0,30}\bsame\b|\bdiffer|\bcontradict|\bdisagree|"
                             r"\bopposite\b|不同|不一样|矛盾")
_SAID_SAME = re.compile(r"\bsame\b|\bequivalent\b|\bidentical\b|\bagree\b|相同|一样|一致")


def _phrased(text: str) -> Optional[bool]:
    """A reply that does not open with yes/no but says "different" (or "the same") in
    its first sentences, and not the other: "They differ: one names Lyon"."""
    head = text[:400]
    different = _SAID_DIFFERENT.search(head) is not None
    same = _SAID_SAME.search(_SAID_DIFFERENT.sub(" ", head)) is not None
    return None if different == same else same


def _chinese(word: str) -> Optional[bool]:
    if word.startswith(("不", "否", "没")):
        return False
    if word.startswith(("是", "相同", "一样", "一致", "对", "同")):
        return True
    if word.startswith(("答案", "回答", "判断", "结论")):
        rest = word[2:]
        return _chinese(rest) if rest else None
    return None


def _from_json(text: str) -> Optional[bool]:
    for match in re.finditer(r"\{[^{}]{0,500}\}", text):
        try:
            value = json.loads(match.group())
        except ValueError:
            continue
        if not isinstance(value, dict):
            continue
        for key in _JSON_KEYS:
            v = value.get(key)
            if isinstance(v, bool):
                return v
            if isinstance(v, (int, float)) and v in (0, 1):
                return bool(v)
            if isinstance(v, str):
                got = parse_same(v) if "{" not in v else None
                if got is not None:
                    return got
    return None
