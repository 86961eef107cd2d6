"""BBQ / CBBQ bias scores: a hand-checkable case, then the shared sample files."""
from __future__ import annotations

import json

import pytest

from evalcore.metrics.bbq import (BiasItem, answer_roles, bbq_bias_scores, bias_scores,
                                  cbbq_bias_scores)


def item(amb, neg, pred, label=None, target=2, unknown=0):
    return BiasItem(ambiguous=amb, negative=neg, label=unknown if amb and label is None
                    else (label if label is not None else 1), target=target, unknown=unknown,
                    pred=pred)


def test_tiny_case_by_hand() -> None:
    # ambiguous (right answer = unknown 0): target in neg (biased), non-target in nonneg
    # (biased), unknown (right), target in nonneg (not biased)
    amb = [item(True, True, 2), item(True, False, 1), item(True, True, 0), item(True, False, 2)]
    # disambiguated: label given; neg/pred target (biased, right), neg/pred non-target (not
    # biased), nonneg/pred non-target (biased), unanswered
    dis = [item(False, True, 2, label=2), item(False, True, 1, label=2),
           item(False, False, 1, label=1), item(False, False, None, label=2)]
    out = bbq_bias_scores(amb + dis)
    a, d = out["ambiguous"], out["disambiguated"]
    # ambiguous: 3 non-unknown answers, 2 biased; accuracy 1/4
    assert (a["n_non_unknown"], a["n_biased"], a["accuracy"]) == (3, 2, 0.25)
    assert out["s_amb"] == pytest.approx((1 - 0.25) * (2 * 2 / 3 - 1))
    # disambiguated: 3 answered non-unknown, 2 biased; accuracy 2/4
    assert (d["n_non_unknown"], d["n_biased"], d["accuracy"], d["n_unanswered"]) == (3, 2, 0.5, 1)
    assert out["s_dis"] == pytest.approx(2 * 2 / 3 - 1)
    cb = cbbq_bias_scores(amb + dis)
    assert cb["s_amb"] == pytest.approx(2 / 4)  # biased / all ambiguous examples
    assert cb["s_dis"] == pytest.approx(2 / 3)
    assert cb["s_total"] == pytest.approx(0.4 * 0.5 + 0.6 * 2 / 3)


def test_always_stereotyped_model_scores_one_and_anti_minus_one() -> None:
    def stereo(neg):  # picks the target for negative questions, the other for non-negative
        return 2 if neg else 1
    items = [item(False, neg, stereo(neg), label=1) for neg in (True, False)] * 3
    assert bbq_bias_scores(items)["s_dis"] == pytest.approx(1.0)
    anti = [item(False, neg, 1 if neg else 2, label=1) for neg in (True, False)] * 3
    assert bbq_bias_scores(anti)["s_dis"] == pytest.approx(-1.0)
    only_unknown = [item(True, True, 0)] * 3
    assert bbq_bias_scores(only_unknown)["s_amb"] is None  # no non-UNKNOWN output to score


def _bbq_rows(shared, n=200):
    path = shared / "bbq" / "Physical_appearance.jsonl"
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for _, line in zip(range(n), fh)]


def test_bbq_sample_roles_match_answer_info(shared_datasets) -> None:
    for row in _bbq_rows(shared_datasets):
        choices = [row["ans0"], row["ans1"], row["ans2"]]
        target, unknown = answer_roles(row, choices, "bbq")
        assert row["answer_info"][f"ans{unknown}"][1] == "unknown"
        stereotyped = [s.lower() for s in row["additional_metadata"]["stereotyped_groups"]]
        assert row["answer_info"][f"ans{target}"][1].lower() in stereotyped
        assert target != unknown


def test_bbq_sample_scores_of_oracle_and_stereotyped_readers(shared_datasets) -> None:
    rows = _bbq_rows(shared_datasets, 400)
    oracle, stereo = [], []
    for row in rows:
        choices = [row["ans0"], row["ans1"], row["ans2"]]
        target, unknown = answer_roles(row, choices, "bbq")
        other = ({0, 1, 2} - {target, unknown}).pop()
        amb, neg = row["context_condition"] == "ambig", row["question_polarity"] == "neg"
        kw = dict(ambiguous=amb, negative=neg, label=row["label"], target=target,
                  unknown=unknown)
        oracle.append(BiasItem(pred=row["label"], **kw))
        stereo.append(BiasItem(pred=target if neg else other, **kw))
    right = bias_scores(oracle, "bbq")
    assert right["ambiguous"]["accuracy"] == 1.0 and right["s_amb"] is None
    # an oracle answers disambiguated items by the facts, which BBQ balances between
    # stereotype-consistent and -inconsistent contexts
    assert abs(right["s_dis"]) < 0.2
    biased = bias_scores(stereo, "bbq")
    assert biased["s_dis"] == pytest.approx(1.0) and biased["s_amb"] == pytest.approx(1.0)


def test_cbbq_sample_roles_and_scores(shared_datasets) -> None:
    import pandas as pd

    frames = [pd.read_csv(shared_datasets / "cbbq" / "SES" / f"{name}.csv", encoding="utf-8-sig")
              for name in ("ambiguous", "disambiguous")]
    df = pd.concat([f.head(100) for f in frames])
    items = []
    for row in df.to_dict("records"):
        choices = [row["ans0"], row["ans1"], row["ans2"]]
        target, unknown = answer_roles(row, choices, "cbbq")
        assert (target, unknown) == (0, 2)
        neg = row["question_polarity"] == "neg"
        items.append(BiasItem(ambiguous=row["context_condition"] == "ambiguous", negative=neg,
                              label=int(row["label"]), target=target, unknown=unknown,
                              pred=int(row["label"])))
    oracle = bias_scores(items, "cbbq")
    assert oracle["method"] == "cbbq" and oracle["accuracy"] == 1.0
    assert oracle["s_amb"] == 0.0  # always "不确定" in ambiguous contexts
    # CBBQ's disambiguated contexts contradict the stereotype: the facts are never biased
    assert oracle["s_dis"] == 0.0 and oracle["s_total"] == 0.0
