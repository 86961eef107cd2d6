"""The BBQ / CBBQ / CrowS readers over hostile replies and hostile uploaded rows: option
indices, roles, stored picks and re-reads return a value or None, never raise.

Functions covered: metrics.bbq (option_index, squash, unknown_phrasings, answer_roles,
bias_scores), report.fairness._bias_fields, report.bbq_answers._read_as, metrics.crows
(crows_scores over any picks).
"""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore.dataset.records import Question
from evalcore.metrics import bbq, crows
from evalcore.report.bbq_answers import _read_as
from evalcore.report.fairness import _bias_fields
from tests.properties.hostile import FAST, SLOW, choices_lists, replies

_CELLS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), replies,
                   st.sampled_from(["²", "١", "2", " 2 ", "9" * 5000, "ans²", "nan", "-1"]))
_INFO = st.dictionaries(st.one_of(st.sampled_from(["ans0", "ans1", "ans2", "ans²", "ans" + "9" * 5000]),
                                  st.text(max_size=6)),
                        st.one_of(st.lists(st.one_of(st.text(max_size=8),
                                                     st.just("unknown")), max_size=3), _CELLS),
                        max_size=4)
METAS = st.fixed_dictionaries({}, optional={
    "answer_info": _INFO, "target_loc": _CELLS, "context_condition": _CELLS,
    "question_polarity": _CELLS, "category": _CELLS, "bias_targeted_groups": _CELLS,
    "additional_metadata": st.one_of(st.none(), st.fixed_dictionaries(
        {"stereotyped_groups": st.lists(st.text(max_size=8), max_size=3)}))})


@pytest.mark.parametrize("value", ["²", "ans²"[3:], "9" * 5000, float("nan"), float("inf"),
                                   True, None, "", "-1", 2.5])
def test_option_index_refuses_what_is_no_index(value) -> None:
    assert bbq.option_index(value) is None


def test_option_index_reads_indices() -> None:
    assert [bbq.option_index(v) for v in ("2", 2, 2.0, " 1 ", "١")] == [2, 2, 2, 1, 1]


@FAST
@given(_CELLS)
def test_option_index_is_an_index_or_none(value) -> None:
    index = bbq.option_index(value)
    assert index is None or 0 <= index < 10 ** 6


@FAST
@given(METAS, choices_lists, st.sampled_from(["bbq", "cbbq"]))
def test_answer_roles_of_hostile_rows(meta: dict, choices: list[str], fmt: str) -> None:
    unknown = bbq.unknown_phrasings([(meta, choices, meta.get("target_loc"))])
    roles = bbq.answer_roles(meta, choices, fmt, unknown)
    assert roles.source in ("answer_info", "target_loc", "targeted group", "ans0 convention",
                            "not found")


@FAST
@given(METAS, choices_lists, st.one_of(st.none(), replies), _CELLS, _CELLS, replies)
def test_bias_fields_and_read_as_of_hostile_calls(meta, choices, answer, extracted,
                                                  reference, question) -> None:
    call = {"choices": choices, "extracted": extracted, "answer": answer,
            "question": question, "reference": reference}
    fields = _bias_fields(call, Question(idx=0, question=question, choices=choices, meta=meta))
    assert fields["pred"] is None or fields["pred"] >= 0
    item = bbq.BiasItem(ambiguous=bbq.is_ambiguous(fields["context_condition"]),
                        negative=bbq.is_negative(fields["question_polarity"]),
                        label=fields["bias_label"] if fields["bias_label"] is not None else -1,
                        target=fields["target"], unknown=fields["unknown"], pred=fields["pred"])
    for fmt in ("bbq", "cbbq"):
        scores = bbq.bias_scores([item], fmt)
        assert isinstance(scores, dict)
    assert isinstance(_read_as(answer, choices, question, fields["pred"],
                               fields["parse_reason"]), str)


@SLOW
@given(st.lists(st.builds(crows.PairPick, st.text(max_size=8),
                          st.one_of(st.none(), st.booleans()),
                          st.sampled_from(["stereo", "antistereo", "?"])), max_size=8))
def test_crows_scores_of_any_picks(picks) -> None:
    out = crows.crows_scores(picks)
    assert out["answers"] == len(picks)
    for block in (out["overall"], *out["by_bias_type"].values()):
        assert block["share"] is None or 0.0 <= block["share"] <= 1.0
