"""Same meaning? The offline cues + e5, measured on both labelled files, and the judge's
reply parser (hostile input: any text, never an exception)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.scorers.meaning import (MEANING_COSINE, cue, offline_same, pair_stage,
                                      parse_same)

ROOT = Path(__file__).resolve().parents[2]
CALIBRATION = ROOT / "tests/metrics/meaning_pairs.json"
BLIND = ROOT / "docs/audits/2026-11-26/meaning_pairs_blind.json"


def _pairs(path: Path) -> list[tuple[str, str, bool]]:
    data = json.loads(path.read_text("utf-8"))
    if isinstance(data, dict):
        return ([(a, b, True) for a, b in data["same"]]
                + [(a, b, False) for a, b in data["different"]])
    return [(p["a"], p["b"], bool(p["same"])) for p in data]


def _right(pairs, cosines, threshold: float = MEANING_COSINE) -> int:
    return sum(offline_same(a, b, c, threshold)[0] == same
               for (a, b, same), c in zip(pairs, cosines))


@pytest.mark.parametrize("path, expected, e5_alone", [(CALIBRATION, 38, 34), (BLIND, 31, 20)])
def test_offline_route_figures_in_docs(path, expected, e5_alone) -> None:
    """The figures docs/repeats.md states: cues + e5 at 0.90 against e5 alone at 0.945.
    The threshold is the best on the calibration file only; the blind file is measured."""
    from evalcore.scorers.text import embedding_cosine_batch

    pairs = _pairs(path)
    cosines = embedding_cosine_batch([a for a, _, _ in pairs], [b for _, b, _ in pairs])
    assert _right(pairs, cosines) == expected
    assert sum((c >= 0.945) == same for (_, _, same), c in zip(pairs, cosines)) == e5_alone
    if path == CALIBRATION:
        grid = [round(0.8 + 0.005 * i, 3) for i in range(39)]
        assert max(_right(pairs, cosines, t) for t in grid) == expected


@pytest.mark.parametrize("a, b, same", [
    ("Yes, it is safe to eat.", "No, it is not safe to eat.", False),
    ("It is safe.", "It is not safe.", False),
    ("这个可以吃。", "这个不能吃。", False),
    ("He was born in 1879.", "He died in 1955.", False),
    ("It costs 1,200 dollars.", "The price is 1200 dollars, tax included.", None),
    ("The meeting is on Monday.", "The meeting is on Friday.", False),
    ("巴黎是法国的首都。", "柏林是德国的首都。", False),
    ("The Pacific is the largest ocean.", "The largest ocean on Earth is the Pacific Ocean.", True),
    ("Dogs are mammals.", "Snakes are reptiles.", None),
])
def test_cues(a: str, b: str, same) -> None:
    got = cue(a, b)
    assert (None if got is None else got[0]) == same
    swapped = cue(b, a)
    assert (None if swapped is None else swapped[0]) == same  # symmetric


@pytest.mark.parametrize("reply, same", [
    ("Yes", True), ("yes.", True), ("**No**", False), ("Answer: yes", True),
    ("NO, they differ.", False), ("They are the same.", True), ("They are not the same.", False),
    ("They differ but agree on Paris.", None), ("The same.", True),
    ('{"same": true}', True), ('```json\n{"same": false}\n```', False),
    ('{"answer": "no"}', False), ("是的，意思相同。", True), ("不是。", False),
    ("答案：不同", False), ("", None), ("Maybe.", None), ("  \n\n yes", True),
    ("Different: one names Paris, the other Lyon.", False),
    ("The answer to this question is: No.", False), ('The answer to this question is "yes."', True),
    ("The answer is: I'm an AI designed to help", None),
])
def test_parse_same_reads_the_usual_replies(reply: str, same) -> None:
    assert parse_same(reply) is same


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.none(), st.text(max_size=300),
                 st.text(alphabet="{}[]\":,yesno \n*", max_size=300)))
def test_parse_same_never_raises_and_says_yes_no_or_nothing(reply) -> None:
    assert parse_same(reply) in (True, False, None)


@settings(max_examples=200, deadline=None)
@given(st.booleans(), st.sampled_from(["", "**", "'", '"', "`"]),
       st.sampled_from(["", "Answer: ", "answer - ", "\n  ", "Final answer: "]),
       st.text(alphabet=st.characters(blacklist_categories=("L", "N", "M")), max_size=20),
       st.text(max_size=200))
def test_a_wrapped_yes_or_no_is_read_whatever_follows(same, quote, lead, gap, tail) -> None:
    word = "yes" if same else "no"
    assert parse_same(f"{lead}{quote}{word.upper() if len(tail) % 2 else word}{quote}"
                      f"{gap if '{' not in gap else ''} {tail}") is same or "{" in tail


@settings(max_examples=200, deadline=None)
@given(st.booleans(), st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=80),
       st.sampled_from(["same", "same_meaning", "answer", "verdict"]))
def test_a_json_verdict_in_prose_is_read(same, prose, key) -> None:
    value = json.dumps({key: same, "reason": "x"})
    assert parse_same(f"{prose}\n{value}\n{prose}") is same


def test_a_huge_reply_is_read_quickly() -> None:
    import time

    started = time.perf_counter()
    assert parse_same("{" * 200_000 + "yes") is None
    assert parse_same("yes " + "x" * 2_000_000) is True
    assert time.perf_counter() - started < 1.0


def test_a_pair_is_cached_once_whatever_its_order() -> None:
    assert pair_stage("j", "a", "b") == pair_stage("j", "b", "a") != pair_stage("k", "a", "b")


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=120), st.text(max_size=120), st.floats(-1, 1))
def test_offline_same_of_any_replies_is_symmetric_and_never_raises(a, b, cosine) -> None:
    got, why = offline_same(a, b, cosine)
    assert isinstance(got, bool) and why
    assert offline_same(b, a, cosine)[0] == got


def test_a_runaway_reply_is_cut_in_the_judge_request() -> None:
    from evalcore.scorers.meaning import ANSWER_CHARS, meaning_request

    text = meaning_request("q?", "x" * 1_000_000, "short").messages[-1]["content"]
    assert len(text) < ANSWER_CHARS + 1000 and "short" in text
