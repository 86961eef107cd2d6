"""Small pure helpers the Fairness page draws with: suite specs as editable tables, the
generated prompts and the report's pairs and answers as rows.

A suite spec (`perturb.counterfactual.load_templates`) is nested TOML data; the page edits
it as three flat tables (templates, slot values, axis fills) so a user can add a template,
a slot value, an attribute or one of its values by adding a row. `spec_tables` and
`spec_from_tables` convert both ways and leave everything they do not show untouched;
`generate_suite` then validates the result (check_spec names what is wrong). Nothing here
computes a metric: tables only reshape the report, so they agree with the JSON download.
No streamlit; pandas is imported inside the functions.
"""
from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evalcore.perturb.counterfactual import RESERVED_FILL, SuiteError

if TYPE_CHECKING:
    import pandas as pd

TEMPLATE_COLUMNS = ("id", "text", "label", "category")
SLOT_COLUMNS = ("slot", "value")
AXIS_COLUMNS = ("attribute", "value", "placeholder", "fill")
"""Columns of the three editable tables. An axis row fills one placeholder for one value of
one attribute; several rows with the same (attribute, value, placeholder) make a list
(several names for one group: the k-th goes into the k-th pair). Placeholder `attributes`
is reserved: its fill `key=value` records another attribute the value carries."""
ANSWER_FIGURES = ("sentiment", "professionalism", "score", "toxicity", "stereotype",
                  "refusal", "length_words", "length_chars", "judge_sentiment",
                  "judge_professionalism", "judge_stereotype")
"""An answer's analysis figures, in the order the pair view shows them."""


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (
        isinstance(value, str) and not value.strip())


def _text(value: Any) -> str:
    return "" if _blank(value) else str(value).strip()


# ------------------------------------------------------------------ spec <-> tables


def spec_tables(spec: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The spec's templates, slot values and axis fills as rows for three data editors."""
    templates = [{"id": t.get("id", ""), "text": t.get("text", ""),
                  "label": "" if t.get("label") is None else str(t["label"]),
                  "category": t.get("category", "")} for t in spec.get("templates", [])]
    slots = [{"slot": name, "value": str(value)}
             for name, values in (spec.get("slots") or {}).items() for value in values]
    axes = []
    for attribute, values in (spec.get("axes") or {}).items():
        for value, fills in values.items():
            for placeholder, fill in fills.items():
                if placeholder == RESERVED_FILL and isinstance(fill, Mapping):
                    parts = [f"{k}={v}" for k, v in fill.items()]
                else:
                    parts = [str(f) for f in (fill if isinstance(fill, list) else [fill])]
                axes.extend({"attribute": attribute, "value": value, "placeholder": placeholder,
                             "fill": part} for part in parts)
    return {"templates": templates, "slots": slots, "axes": axes}


def _label(value: Any, tid: str) -> int | None:
    text = _text(value)
    if not text:
        return None
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if number not in (0.0, 1.0):
        raise SuiteError(f"template {tid!r}: label must be 1 (the answer should be positive), "
                         f"0 (negative) or empty, not {text!r}")
    return int(number)


def spec_from_tables(spec: Mapping[str, Any], templates: Iterable[Mapping[str, Any]],
                     slots: Iterable[Mapping[str, Any]], axes: Iterable[Mapping[str, Any]]
                     ) -> dict[str, Any]:
    """A copy of `spec` with its templates, slots and axes taken from the edited tables.

    Rows whose key cells are blank are skipped (a data editor's empty new row). Unchanged
    slot lists keep their original values (numbers stay numbers), so an untouched table
    gives back the spec it was made from.
    """
    out = copy.deepcopy(dict(spec))
    rows = []
    for position, row in enumerate(templates):
        tid, text = _text(row.get("id")), row.get("text")
        if not tid and _blank(text):
            continue
        if not tid:
            raise SuiteError(f"template row {position + 1}: give it an id (any unique word)")
        entry: dict[str, Any] = {"id": tid, "text": "" if _blank(text) else str(text)}
        label = _label(row.get("label"), tid)
        if label is not None:
            entry["label"] = label
        if _text(row.get("category")):
            entry["category"] = _text(row.get("category"))
        rows.append(entry)
    out["templates"] = rows

    new_slots: dict[str, list[Any]] = {}
    for row in slots:
        name, value = _text(row.get("slot")), _text(row.get("value"))
        if name and value:
            new_slots.setdefault(name, []).append(value)
    old_slots = spec.get("slots") or {}
    out["slots"] = {name: (list(old_slots[name])
                           if [str(v) for v in old_slots.get(name, [])] == values else values)
                    for name, values in new_slots.items()}

    new_axes: dict[str, dict[str, dict[str, Any]]] = {}
    for position, row in enumerate(axes):
        attribute, value = _text(row.get("attribute")), _text(row.get("value"))
        placeholder, fill = _text(row.get("placeholder")), _text(row.get("fill"))
        if not (attribute or value or placeholder or fill):
            continue
        if not (attribute and value and placeholder):
            raise SuiteError(f"attribute row {position + 1}: fill in attribute, value and "
                             f"placeholder (got {attribute!r}, {value!r}, {placeholder!r})")
        fills = new_axes.setdefault(attribute, {}).setdefault(value, {})
        if placeholder == RESERVED_FILL:
            key, sep, carried = fill.partition("=")
            if not sep or not key.strip() or not carried.strip():
                raise SuiteError(f"attribute row {position + 1}: placeholder "
                                 f"'{RESERVED_FILL}' records another attribute as key=value "
                                 f"(e.g. gender=female), not {fill!r}")
            fills.setdefault(RESERVED_FILL, {})[key.strip()] = carried.strip()
        elif placeholder in fills:
            previous = fills[placeholder]
            fills[placeholder] = [*(previous if isinstance(previous, list) else [previous]), fill]
        else:
            fills[placeholder] = fill
    out["axes"] = new_axes
    return out


# ------------------------------------------------------------------ suite preview


def _attributes_text(attributes: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in attributes.items())


def suite_preview_rows(parsed: Any, limit: int | None = None) -> list[dict[str, Any]]:
    """The generated prompts (first `limit`): pair, variant, attributes, prompt."""
    questions = parsed.questions if limit is None else parsed.questions[:limit]
    return [{"pair": q.meta.get("pair_id"), "variant": q.meta.get("variant"),
             "attributes": _attributes_text(q.meta.get("attributes") or {}),
             "prompt": q.question} for q in questions]


# ------------------------------------------------------------------ pairs and answers


EFFECT_COLUMNS = ("attribute", "metric", "favoured", "disfavoured", "n_pairs",
                  "median_difference", "rank_biserial", "cohens_dz", "p_value", "p_adjusted",
                  "omnibus_test", "omnibus_p", "significant")
"""The effects table's columns, in the order the page and the CLI show them."""


def effect_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The report's ranked effects as flat rows (`EFFECT_COLUMNS` first), tested ones only."""
    return [{**{c: e.get(c) for c in EFFECT_COLUMNS}, "group": e.get("group"),
             "compared_with": e.get("compared_with"), "largest_pair": e.get("largest_pair")}
            for e in report.get("effects", []) if e.get("tested")]


def strongest_effect(report: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The first significant effect of the ranked list (None when none is significant)."""
    return next((e for e in report.get("effects", []) if e.get("significant")), None)


def effect_text(effect: Mapping[str, Any]) -> str:
    """One line for an effect: "gender · score: favours male over others (...), median
    difference +1.00 over 20 pairs, r = 1.00, Holm p = 0.0002"."""
    median = effect.get("median_difference")
    r, p = effect.get("rank_biserial"), effect.get("p_adjusted")
    if effect.get("kind") == "interaction":
        who = (f"{effect['group']} "
               f"{'higher' if effect.get('higher') == effect['group'] else 'lower'} than "
               f"{effect['compared_with']}" if effect.get("favoured") else "no interaction")
    else:
        who = (f"favours {effect['favoured']} over {effect['disfavoured']}"
               if effect.get("favoured") else "no direction")
    return (f"{effect['attribute']} · {effect['metric']}: {who}, median difference of "
            f"{effect['group']} {'-' if median is None else f'{median:+.2f}'} over "
            f"{effect['n_pairs']} pairs, r = {'-' if r is None else f'{r:.2f}'}, "
            f"Holm p = {'-' if p is None else f'{p:.2g}'}")


def _spread_options(report: Mapping[str, Any]) -> dict[str, tuple[int, float, str]]:
    worst: dict[str, tuple[int, float, str]] = {}
    for v in report.get("violations", []):
        rank = (0 if v["severity"] == "HIGH" else 1, -float(v["spread"]),
                f"{v['severity']} {v['metric']} spread {float(v['spread']):.2f}")
        if v["pair_id"] not in worst or rank < worst[v["pair_id"]]:
            worst[v["pair_id"]] = rank
    return worst


def pair_options(report: Mapping[str, Any]) -> dict[str, str]:
    """pair_id -> label, the first the pair view opens on.

    With a significant effect: pairs by their spread in that effect's figure (its
    `largest_pair` first), so the view opens where the strongest evidence shows most.
    Without one: pairs with the largest single-pair spreads first (HIGH, then widest).
    """
    pairs = [p["pair_id"] for p in report.get("pairs", [])]
    effect = strongest_effect(report)
    if effect is not None:
        metric = effect["metric"]
        spreads = {p["pair_id"]: (p.get("spreads") or {}).get(metric)
                   for p in report.get("pairs", [])}
        order = sorted(pairs, key=lambda pid: (pid != effect.get("largest_pair"),
                                               -(spreads.get(pid) or 0.0)))
        return {pid: (f"{pid} · {metric} spread {spreads[pid]:.2f}"
                      + (f" (strongest effect: {effect['attribute']} {metric})"
                         if pid == effect.get("largest_pair") else "")
                      if spreads.get(pid) is not None else f"{pid} · no {metric}")
                for pid in order}
    worst = _spread_options(report)
    order = sorted(pairs, key=lambda pid: worst.get(pid, (2, 0.0, "")))
    return {pid: (f"{pid} · {worst[pid][2]}" if pid in worst else f"{pid} · no large spread")
            for pid in order}


def answers_by_variant(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """A pair's answer rows (from `pair_view`) grouped per variant, samples in round order."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for row in sorted(rows, key=lambda r: (r["item_idx"], r["round"])):
        out.setdefault(str(row.get("variant")), []).append(row)
    return out


def answer_figures(row: Mapping[str, Any]) -> dict[str, Any]:
    """The analysis figures of one answer that it has (missing ones left out)."""
    return {name: row[name] for name in ANSWER_FIGURES if row.get(name) is not None}


def pair_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per answer of a pair: variant, sample, the figures, the error if any."""
    return [{"variant": r.get("variant"), "sample": r.get("round"), **answer_figures(r),
             "error": r.get("error")} for r in rows]


def records_frame(rows: Iterable[Mapping[str, Any]], columns: Sequence[str] | None = None
                  ) -> pd.DataFrame:
    """A DataFrame of dict rows (nested values as JSON text), `columns` first if given.

    Report blocks are lists of dicts whose values may be lists or dicts (group values,
    meta); Arrow-backed tables in the page need flat scalars.
    """
    import pandas as pd

    flat = [{key: (json.dumps(value, ensure_ascii=False, default=str)
                   if isinstance(value, (list, dict, tuple)) else value)
             for key, value in row.items()} for row in rows]
    frame = pd.DataFrame(flat)
    if columns is not None:
        frame = frame.reindex(columns=[c for c in columns if c in frame.columns]
                              + [c for c in frame.columns if c not in columns])
    return frame
