"""Degenerate back-translations: the reply cleaner and the flags e5 misses.

The planted shapes are the ones the embedded model produced on Math23K (issue #25 item 4):
the question cut off and padded with 90 "；" (e5 0.974, unflagged before), meta labels
("Translation:", "Pronounced as:"), the whole text three times, English left in.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalcore.dataset.records import Question
from evalcore.perturb import LLMTranslator, check_attack
from evalcore.perturb.degenerate import (
    CHECKS,
    FLAGS,
    clean_translation,
    flag_reasons,
    reasons,
)
from evalcore.providers.base import ModelConfig
from tests.fakes.fault_server import FaultConfig, FaultServer

ZH = "一个工厂要生产3000个零件，前6天生产了750个，剩下的要在15天内完成，平均每天生产多少个？"
EN = "Tom has 3 apples and buys 4 more apples at the shop. How many apples does he have now?"
CUT = "一个工厂要生产3000个零件，前6天生产了750个，剩下的要在15天" + "；" * 90


def flags_of(original: str, attacked: str, similarity: float = 0.974) -> list[str]:
    """All guard flags at the e5 score the junk really got (so low_similarity stays off)."""
    return check_attack(Question(idx=0, question=original), attacked, similarity=similarity)[1]


# ---------------------------------------------------------------- planted junk, guard


def test_cut_off_with_ninety_semicolons_is_flagged_with_reasons():
    found = flags_of(ZH, CUT)
    assert {"cut_off", "punctuation_run", "length_ratio"} <= set(found)
    assert "low_similarity" not in found and "number_changed" not in found  # what hid it
    why = reasons(ZH, CUT)
    assert "90 punctuation marks in a row" in why["punctuation_run"]
    assert "mid-sentence" in why["cut_off"] and "15天" in why["cut_off"]


def test_cut_off_without_padding_is_flagged():
    assert "cut_off" in flags_of(ZH, "一个工厂要生产3000个零件，前6天生产了750个，剩下的要在15天内完成，")
    assert "cut_off" in flags_of(EN, "Tom has 3 apples and buys 4 more apples at the shop. How many")
    assert flags_of(EN, "Tom has 3 apples and buys 4 more apples in the shop. How many apples "
                        "does he have now?") == []


@pytest.mark.parametrize("original, attacked, cut", [
    # the embedded model's own output: the question's last clause gone, no end mark
    ("山上有苹果树200棵，桃树比苹果树多(1/5)，桃树有多少棵？", "森极的苹果树200棵，桃树比苹果树多(1/5)", True),
    ("一本字典定价9元，0.8出售后还赚20%，这本字典进价=多少元．", "求定一本字典定价9元,0.8出售后还赚20%,这本字典", True),
    # the method's own back-translations: only the final mark dropped, the question intact
    ("两个因数都是6，积=．", "两个因数都是6，积=", False),
    ("多少千米是630千米的(4/9)．", "630 千米的（4/9）是多少千米", False),
    # a char attack of Math23K: the ending ")=．" is three marks, not a padding run
    ("一个数的(4/5)是80，这个数的(1/4)=．", "一个数的(4/5)是80，&这个！数的(1/4)=．", False),
])
def test_cut_off_needs_more_than_a_dropped_full_stop(original, attacked, cut):
    assert ("cut_off" in reasons(original, attacked)) is cut


def test_whole_text_three_times_is_flagged_when_not_cleaned():
    found = flags_of(ZH, ZH + ZH + ZH)
    assert {"repeated_ngrams", "length_ratio"} <= set(found)
    assert "number_changed" in found  # three times the numbers: the old guard saw only this
    assert "repeated_ngrams" in flags_of(EN, EN[:-1] + " now now now now now?")


def test_pivot_language_left_in_is_flagged():
    half = "一个工厂要生产3000个parts，前6天produced了750个，剩下的要在15天内完成，平均每天生产多少个？"
    assert "pivot_language_left" in flags_of(ZH, half)
    assert "English word(s) left" in reasons(ZH, half)["pivot_language_left"]
    assert "pivot_language_left" in flags_of(EN, EN.replace("apples does", "苹果 does"))
    # units and words the original has are not pivot text
    assert "pivot_language_left" not in flags_of("一条路长3km，已修1km，还剩多少km？",
                                                 "一条路长3km，已经修了1km，还剩几km？")


def test_ordinary_rewording_raises_no_degenerate_flag():
    reworded = "一个工厂需要生产3000个零件，前6天生产了750个，其余的要在15天内完成，平均每天要生产多少个？"
    assert not set(flags_of(ZH, reworded)) & set(FLAGS)
    assert reasons(ZH, ZH) == {}


def test_flag_reasons_only_for_stored_flags():
    assert set(flag_reasons(["cut_off"], ZH, CUT)) == {"cut_off"}
    assert flag_reasons([], ZH, CUT) == {} and flag_reasons(None, ZH, CUT) == {}


def test_attacks_show_gives_the_reasons():
    from evalcore.perturb.review import attack_item_info
    from evalcore.store.tables import AttackItem

    item = AttackItem(id=1, attack_set_id=1, source_item_id=1, original=ZH, attacked=CUT,
                      flags=["number_changed", "cut_off", "punctuation_run"])
    info = attack_item_info(item)
    assert set(info["reasons"]) == {"cut_off", "punctuation_run"}
    assert "90 punctuation marks" in info["reasons"]["punctuation_run"]


# ---------------------------------------------------------------- planted junk, cleaner


@pytest.mark.parametrize("reply, expected", [
    ("Translation: " + ZH, ZH),
    ("翻译：" + ZH, ZH),
    ("Here is the translation:\n\n" + ZH, ZH),
    ("求解：\n\n" + CUT, CUT),
    ("Sure! Here's the Chinese translation of the text:\n" + ZH, ZH),
    ("“" + ZH + "”", ZH),
    (f'"{EN}"\n\nNote: I kept every number.', EN),
    (ZH + "\n\nPronounced as: yi ge gong chang yao sheng chan", ZH),
    ("Translation: " + EN + "\nPronounced as: tom has three apples", EN),
    ("```\n" + EN + "\n```\nThis keeps the numbers.", EN),
    (ZH + ZH + ZH, ZH),
    (ZH + "\n" + ZH + "\n" + ZH[:20], ZH),
    (f"{EN} {EN} {EN}", EN),
    (EN, EN),
])
def test_cleaner_removes_meta_text_and_repeats(reply, expected):
    assert clean_translation(reply) == expected


def _config(server: FaultServer) -> ModelConfig:
    return ModelConfig(name="fake", kind="openai", base_url=server.openai_url, model="fake",
                       concurrency=2, timeout=5.0, max_retry_wait=1.0)


def test_translator_reply_with_labels_and_repeats_comes_back_clean():
    """The issue's replies through the real client path: labels, notes and a three-fold
    repeat are gone from the attacked text; nothing degenerate is left to flag."""
    from evalcore.perturb import attack_questions
    from evalcore.providers.client import run_closing_clients

    reworded = "一个工厂需要生产3000个零件，前6天生产了750个，其余的要在15天内完成，平均每天要生产多少个？"

    def responder(prompt: str, schema: dict | None) -> str:
        if "into English" in prompt:
            return "Translation: A factory must make 3000 parts...\n\nPronounced as: a fac-to-ry"
        return "\n".join([reworded] * 3)

    with FaultServer(FaultConfig(responder=responder)) as server:
        results = run_closing_clients(attack_questions(
            [Question(idx=0, question=ZH)], "sentence", translator=LLMTranslator(_config(server)),
            params={"similarity": False}))
    assert results[0].attacked == reworded
    assert results[0].flags == []


# ---------------------------------------------------------------- hostile text


TEXT = st.text(st.characters(codec="utf-8"), max_size=300)
MIXED = st.text(st.sampled_from(list("天工厂零件个，。？；! ?.\n\"“”：:翻译Translation abc123")),
                max_size=200)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reply=st.one_of(TEXT, MIXED))
def test_cleaner_never_raises_and_never_grows(reply):
    out = clean_translation(reply)
    assert isinstance(out, str) and len(out) <= len(reply)
    assert out == out.strip()


@settings(max_examples=150, deadline=None)
@given(original=st.one_of(TEXT, MIXED), attacked=st.one_of(TEXT, MIXED))
def test_every_check_returns_a_reason_or_none(original, attacked):
    for check in CHECKS.values():
        why = check(original, attacked)
        assert why is None or (isinstance(why, str) and why)
    found = reasons(original, attacked)
    assert set(found) <= set(FLAGS)
    assert reasons(original, original) == {}


@settings(max_examples=80, deadline=None)
@given(unit=st.text(st.sampled_from(list("一个工厂零件生产多少天完成3075")), min_size=4,
                    max_size=40),
       times=st.integers(2, 5), sep=st.sampled_from(["", " ", "\n"]))
def test_a_text_said_several_times_is_said_once(unit, times, sep):
    text = sep.join([unit] * times)
    out = clean_translation(text)
    flat, kept = text.replace(sep, ""), out.replace(sep, "") if sep else out
    assert kept and flat == kept * (len(flat) // len(kept))  # left alone keeps its separator
    if len(set(unit)) >= 4:  # its period is 4+: collapsed ("0000" or "10000" is left alone)
        assert len(unit) % len(out) == 0 and out * (len(unit) // len(out)) == unit


@settings(max_examples=80, deadline=None)
@given(body=st.text(st.sampled_from(list("一个工厂零件生产多少天完成要在平均每")), min_size=12,
                    max_size=60),
       cut=st.floats(0.2, 0.8), run=st.integers(4, 120), mark=st.sampled_from(list("；。，、.")))
def test_any_cut_question_padded_with_marks_is_flagged(body, cut, run, mark):
    original = body + "？"
    attacked = body[:max(1, int(len(body) * cut))] + mark * run
    why = reasons(original, attacked)
    assert "punctuation_run" in why
    if mark in "；，、":  # after "。" or "." the first mark may be the real end: not cut_off
        assert "cut_off" in why
