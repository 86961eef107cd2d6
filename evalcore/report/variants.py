"""Option-order and template sensitivity in a run's report, from the stored variant
calls (`runner.variants`): circular accuracy beside plain accuracy, position bias per
slot with its chi-square p, the items whose answer follows the slot, accuracy per
template with the spread, the worst template and McNemar between best and worst.
No model call: everything is read back from the database.
"""
from __future__ import annotations

from typing import Any, Optional

from sqlalchemy.engine import Engine

from evalcore.dataset.numbering import item_positions
from evalcore.metrics.positions import (circular_accuracy, position_bias, slot_followers,
                                        slot_label, template_figures)
from evalcore.prompt.variants import reordered
from evalcore.runner.variants import ORDER_STAGE, TEMPLATE_STAGE, VARIANT_STAGE
from evalcore.scorers.rules_choice import extract_choice
from evalcore.store import queries, run_items


def chosen_slot(call: Any, question: Any) -> Optional[int]:
    """The slot a choice reply picked: the rules scorer's stored index, else read again
    from the reply (a run judged by a model stores none)."""
    if call.answer is None or call.error is not None:
        return None
    stored = call.extracted
    if stored is not None and str(stored).isdigit():
        return int(stored)
    index, _ = extract_choice(call.answer, question.choices, question.question)
    return index


def variant_figures(engine: Engine, run_id: int) -> Optional[dict[str, Any]]:
    """The summary's sensitivity figures (None when the run has no variant call)."""
    calls = list(queries.iter_calls(engine, run_id, stage_prefix=VARIANT_STAGE))
    if not calls:
        return None
    questions = run_items.run_questions(engine, run_id)
    out: dict[str, Any] = {}
    asked = [c for c in calls if c.stage.startswith(ORDER_STAGE)]
    if asked:
        first = {c.item_id: c for c in queries.iter_calls(engine, run_id, stage="answer")
                 if c.round == 1}
        per_item: dict[int, list[tuple[list[int], Any]]] = {}
        for c in asked:
            order = [int(x) for x in c.stage.removeprefix(ORDER_STAGE).split(",")]
            per_item.setdefault(c.item_id, []).append((order, c))
        verdicts: dict[int, list[Optional[bool]]] = {}
        chosen_by: dict[int, list[Optional[int]]] = {}
        chosen_all: list[Optional[int]] = []
        right_all: list[int] = []
        slots = 0
        for item_id, variants in per_item.items():
            q = questions[item_id]
            ref = (q.reference or "").strip()
            if not ref.isdigit():
                continue
            n = len(q.choices)
            slots = max(slots, n)
            entries = ([(list(range(n)), first[item_id])] if item_id in first else []) + variants
            verdicts[item_id], chosen_by[item_id] = [], []
            for order, call in entries:
                shown = reordered(q, order)
                pick = chosen_slot(call, shown)
                right = order.index(int(ref))
                verdicts[item_id].append(None if call.error is not None or call.answer is None
                                         else pick == right)
                chosen_by[item_id].append(pick)
                chosen_all.append(pick if pick is not None and pick < n else None)
                right_all.append(right)
        positions = item_positions(engine, set(verdicts))
        out.update(circular_accuracy(verdicts))
        table, p = position_bias(chosen_all, right_all, slots)
        out["position_bias"], out["position_bias_p"] = table, p
        out["position_bias_orders"] = sum(c is not None for c in chosen_all)
        out["slot_followers"] = [
            {"item_idx": positions.get(k), "slot": slot_label(chosen_by[k][0])}
            for k in slot_followers(chosen_by)]
        out["orders_per_item"] = max(len(v) for v in chosen_by.values()) if chosen_by else 0
    templated = [c for c in calls if c.stage.startswith(TEMPLATE_STAGE)]
    if templated:
        names = sorted({c.stage.removeprefix(TEMPLATE_STAGE) for c in templated})
        items = sorted({c.item_id for c in templated})
        got = {(c.item_id, c.stage.removeprefix(TEMPLATE_STAGE)):
               (None if c.error is not None or c.correct is None else bool(c.correct))
               for c in templated}
        out.update(template_figures({t: [got.get((i, t)) for i in items] for t in names}))
    return out


def add_variants(report: dict[str, Any], engine: Engine, run_id: int) -> None:
    """Write the figures into `report["summary"]` in place (nothing without variants)."""
    figures = variant_figures(engine, run_id)
    if figures is not None:
        report["summary"].update(figures)


def _pct(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def worst_words(figures: dict[str, Any]) -> str:
    """"worst few", or "no worst template (lowest accuracy tied)" (`template_figures`)."""
    worst = figures.get("worst_template")
    return f"worst {worst}" if worst else "no worst template (lowest accuracy tied)"


def variant_lines(summary: dict[str, Any]) -> list[str]:
    """The CLI's lines: circular vs plain accuracy, position bias, templates."""
    lines = []
    if summary.get("circular_items"):
        low, high = summary["circular_ci"]
        lines.append(f"circular accuracy (right under all {summary['orders_per_item']} option "
                     f"orders): {_pct(summary['circular_accuracy'])} [{_pct(low)}, "
                     f"{_pct(high)}] over {summary['circular_items']} items; plain "
                     f"{_pct(summary['plain_accuracy'])}")
        bias = ", ".join(f"{s} chosen {_pct(v['chosen'])} / right {_pct(v['right'])}"
                         for s, v in summary["position_bias"].items())
        p = summary["position_bias_p"]
        lines.append(f"position bias over the {summary['position_bias_orders']} orders "
                     f"where an option was read: {bias}; chi-square p = "
                     f"{'n/a' if p is None else format(p, '.3g')}")
        followers = summary.get("slot_followers") or []
        if followers:
            lines.append(f"answer follows the slot in {len(followers)} items: " + ", ".join(
                f"Q{f['item_idx'] + 1 if f['item_idx'] is not None else '?'} ({f['slot']})"
                for f in followers[:10]) + (" ..." if len(followers) > 10 else ""))
    lines += bias_order_lines(summary)
    if summary.get("template_accuracy"):
        acc = ", ".join(f"{t} {_pct(v)}" for t, v in summary["template_accuracy"].items())
        line = f"templates: {acc}; spread {_pct(summary['template_spread'])}, " \
            + worst_words(summary)
        test = summary.get("template_mcnemar")
        if test:
            line += (f"; McNemar {summary['best_template']} vs {summary['worst_template']}: "
                     f"{test['b']} vs {test['c']} discordant items, p = {test['p']:.3g}")
        lines.append(line)
    return lines


def _num(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def bias_order_lines(figures: dict[str, Any]) -> list[str]:
    """BBQ / CBBQ: the bias score on each option order asked (the run's own is the first,
    the original order) and its range, so a reader sees whether it moves with the order."""
    by_order = figures.get("bias_score_by_order")
    if not by_order:
        return []
    lines = ["bias score by option order (original option indices in the order shown):"]
    for order, v in by_order.items():
        total = f", total {_num(v['s_total'])}" if v.get("s_total") is not None else ""
        lines.append(f"  {order}: ambiguous {_num(v['s_amb'])}, disambiguated "
                     f"{_num(v['s_dis'])}{total}, accuracy {_num(v['accuracy'])} "
                     f"({v['items']} items)")
    spread = figures.get("bias_score_range") or {}
    parts = [f"{name} {_num(r[0])} to {_num(r[1])}" for name, r in spread.items()
             if r is not None and name != "accuracy"]
    if parts:
        lines.append("  range over the orders: " + ", ".join(parts))
    return lines
