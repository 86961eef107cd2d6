"""A BBQ / CBBQ run asked under other orders of its three options (`--option-order`):
the bias score recomputed on each order, beside the run's own.

The run's bias score stays computed from its own answers in the original order
(`report.fairness`). Each order asked (`runner.variants`, stage `variant:order:1,2,0`:
the original option indices in the order shown) gives its answers read back to the
original options (the slot chosen -> the option shown there), scored with the same
targets, UNKNOWN options and formulas (`metrics.bbq.bias_scores`). A bias figure that
moves between orders follows the slots, not the groups.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Sequence

from sqlalchemy.engine import Engine

from evalcore.metrics.bbq import BiasItem, bias_scores, is_ambiguous, is_negative
from evalcore.prompt.variants import reordered
from evalcore.report.variants import chosen_slot, variant_figures
from evalcore.runner.variants import ORDER_STAGE
from evalcore.store import queries, run_items

SCORES = ("s_amb", "s_dis", "s_total", "accuracy")


def _item(row: Mapping[str, Any], pred: Optional[int]) -> BiasItem:
    return BiasItem(ambiguous=is_ambiguous(row["context_condition"]),
                    negative=is_negative(row["question_polarity"]), label=row["bias_label"],
                    target=row["target"], unknown=row["unknown"], pred=pred,
                    category=row["bias_category"], target_source=row["target_source"],
                    item_id=row["item_id"])


def bias_by_order(engine: Engine, run_id: int, bias_rows: Sequence[Mapping[str, Any]],
                  fmt: str) -> Optional[dict[str, Any]]:
    """{"bias_score_by_order": {order: {s_amb, s_dis, s_total, accuracy, items}},
    "bias_score_range": {score: [min, max]}} over the orders asked, the original order
    ("0,1,2": round 1 of the run's own answers) first; None without an order asked.

    `bias_rows`: the fairness report's rows of the run's bias items (targets, UNKNOWN
    options and the original order's reading, from `report.fairness._bias_fields`)."""
    calls = list(queries.iter_calls(engine, run_id, stage_prefix=ORDER_STAGE))
    base = {r["item_id"]: r for r in bias_rows
            if r["round"] == 1 and r["bias_label"] is not None}
    calls = [c for c in calls if c.item_id in base]
    if not calls:
        return None
    asked = {c.item_id for c in calls}  # every order over the same items
    base = {k: v for k, v in base.items() if k in asked}
    questions = run_items.run_questions(engine, run_id)
    picks = []
    for call in calls:
        order = [int(x) for x in call.stage.removeprefix(ORDER_STAGE).split(",")]
        picks.append((call.item_id, order,
                      chosen_slot(call, reordered(questions[call.item_id], order))))
    sizes = {k: len(questions[k].choices) for k in base}
    return scores_by_order(base, sizes, picks, fmt)


def scores_by_order(base: Mapping[Any, Mapping[str, Any]], sizes: Mapping[Any, int],
                    picks: Iterable[tuple[Any, Sequence[int], Optional[int]]],
                    fmt: str) -> dict[str, Any]:
    """Pure: the bias scores per order. `base`: item -> its bias row (round 1, original
    order); `sizes`: item -> its number of options; `picks`: (item, order shown, slot
    chosen or None). A slot is read back to the option it held (`order[slot]`); a slot
    outside the order (a reply naming no shown option) is no answer."""
    by_order: dict[str, list[BiasItem]] = {}
    for item_id, row in base.items():
        key = ",".join(map(str, range(sizes[item_id])))
        by_order.setdefault(key, []).append(_item(row, row["pred"]))
    for item_id, order, slot in picks:
        if item_id not in base:
            continue
        pred = order[slot] if slot is not None and 0 <= slot < len(order) else None
        by_order.setdefault(",".join(map(str, order)), []).append(_item(base[item_id], pred))
    scores = {}
    for key, items in by_order.items():
        figures = bias_scores(items, fmt)
        scores[key] = {**{k: figures.get(k) for k in SCORES}, "items": len(items)}
    spread = {}
    for name in SCORES:
        values = [v[name] for v in scores.values() if v[name] is not None]
        spread[name] = [min(values), max(values)] if values else None
    return {"bias_score_by_order": scores, "bias_score_range": spread}


def order_figures(engine: Engine, run_id: int, bias_rows: Sequence[Mapping[str, Any]]
                  ) -> Optional[dict[str, Any]]:
    """The fairness report's `variants` block: circular accuracy, position bias and slot
    followers (`report.variants`), and for BBQ / CBBQ the bias score by order."""
    figures = variant_figures(engine, run_id)
    if figures is None or not bias_rows:
        return figures
    figures.update(bias_by_order(engine, run_id, bias_rows,
                                 bias_rows[0]["bias_format"]) or {})
    return figures
