"""The BBQ / CBBQ bias score by option order (`report.fairness_orders.scores_by_order`)
over any items and any replies: a reader that answers by content (the same option
wherever it is shown) has the same bias score on every order; the original order's entry
is the run's own reading; a slot outside the order is no answer, never an error."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from evalcore.metrics.bbq import bias_scores
from evalcore.prompt.variants import orders
from evalcore.report.fairness_orders import SCORES, _item, scores_by_order
from tests.properties.hostile import FAST


@st.composite
def bias_items(draw):  # noqa: ANN001, ANN201
    """{item: row} of 3-option items (target, UNKNOWN distinct), a chosen option each
    (or None: unread) and a format."""
    n = draw(st.integers(1, 12))
    rows, content = {}, {}
    for k in range(n):
        target, unknown = draw(st.permutations([0, 1, 2]))[:2]
        pick = draw(st.one_of(st.none(), st.integers(0, 2)))
        rows[k] = {"item_id": k, "round": 1, "context_condition": draw(
            st.sampled_from(["ambig", "disambig", "ambiguous", "disambiguous"])),
            "question_polarity": draw(st.sampled_from(["neg", "nonneg", "non_neg"])),
            "bias_label": draw(st.integers(0, 2)), "target": target, "unknown": unknown,
            "pred": pick, "bias_category": draw(st.sampled_from(["", "a", "b"])),
            "target_source": "found"}
        content[k] = pick
    return rows, content, draw(st.sampled_from(["bbq", "cbbq"]))


@FAST
@given(bias_items(), st.sampled_from(["circular", "shuffle:3"]))
def test_a_content_reader_has_one_bias_score_on_every_order(data, mode):
    rows, content, fmt = data
    picks = [(k, order, None if content[k] is None else order.index(content[k]))
             for k in rows for order in orders(3, mode, 0, k)[1:]]
    out = scores_by_order(rows, {k: 3 for k in rows}, picks, fmt)
    own = bias_scores([_item(r, r["pred"]) for r in rows.values()], fmt)
    first = out["bias_score_by_order"]["0,1,2"]
    assert {k: first[k] for k in SCORES} == {k: own.get(k) for k in SCORES}
    groups: dict[str, list] = {"0,1,2": list(rows)}  # each order: the items shown in it
    for k, order, _ in picks:
        groups.setdefault(",".join(map(str, order)), []).append(k)
    for key, scores in out["bias_score_by_order"].items():  # the same options chosen
        same = bias_scores([_item(rows[k], rows[k]["pred"]) for k in groups[key]], fmt)
        assert {n: scores[n] for n in SCORES} == {n: same.get(n) for n in SCORES}
    for name, span in out["bias_score_range"].items():
        if mode == "circular" and span is not None:
            assert span[0] == span[1]


@FAST
@given(bias_items(), st.lists(st.one_of(st.none(), st.integers(-5, 9)), min_size=1,
                              max_size=40))
def test_any_slot_is_read_or_left_unanswered(data, slots):
    rows, _, fmt = data
    keys = list(rows)
    picks = [(keys[i % len(keys)], order, slot) for i, slot in enumerate(slots)
             for order in orders(3, "circular")[1:2]]
    out = scores_by_order(rows, {k: 3 for k in rows}, picks, fmt)
    assert sum(v["items"] for v in out["bias_score_by_order"].values()) == \
        len(rows) + len(picks)
    for scores in out["bias_score_by_order"].values():
        for name in ("s_amb", "s_dis", "s_total"):
            value = scores[name]
            assert value is None or -1.0 <= value <= 1.0
