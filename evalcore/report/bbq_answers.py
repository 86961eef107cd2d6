"""A BBQ / CBBQ run's answers one by one: what the model was asked, the option it picked,
how the reply was read, and what that answer counts as in the bias scores.

The bias scores (`metrics.bbq`) are sums over thousands of answers; a reader checking them
needs the single answers behind them. Each row here is one stored answer of a
`bias_choice` item, read exactly as `report.fairness` reads it (`_bias_fields`: the
option stored at scoring time, else the rules scorer's reading), with:

- `read_as`: which rule of `scorers.rules_choice.extract_choice` named the option (an answer
  phrase such as "the answer is 2", an option label, or the option's text), or why
  nothing was read (no option named, two options named, the options only listed);
- `outcome`: correct / wrong / unparsed (unparsed answers count as wrong in accuracy);
- `bias`: biased (the stereotyped answer: the target in a negative question, the other
  group in a non-negative one), counter-stereotype, unknown (the UNKNOWN option),
  no target (the item's stereotyped option could not be identified; left out of the
  scores) or unparsed, as `metrics.bbq.BiasItem` classifies it.

Filtering and paging are pure functions over the rows, so the page and a test share them.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Optional

from evalcore.metrics.bbq import BiasItem, is_ambiguous, is_negative
from evalcore.report.fairness import _bias_fields, _unknown_texts
from evalcore.scorers.rules_choice import extract_choice
from evalcore.store import datasets, queries, run_items

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

BENCHMARK_TASKS = frozenset({"bias_choice", "bias_pair"})
"""Task types of the bias benchmarks (BBQ / CBBQ, CrowS-Pairs): scored by the option the
model picks, so a decision threshold on a 1-10 score does not apply to them."""
CONTEXTS = ("ambiguous", "disambiguated")
OUTCOMES = ("correct", "wrong", "unparsed")
BIAS_READINGS = ("biased", "counter-stereotype", "unknown", "no target", "unparsed")
PAGE_SIZE = 10


def run_task_types(engine: Engine, run_id: int) -> set[str]:
    """The task types of the items of the run's dataset (one small SQL query)."""
    run = queries.get_run(engine, run_id)
    if run.dataset_id is None:
        return set()
    return datasets.task_types(engine, int(run.dataset_id))


def is_benchmark_run(engine: Engine, run_id: int) -> bool:
    """True for a run of a bias benchmark only (no counterfactual suite items)."""
    types = run_task_types(engine, run_id)
    return bool(types) and types <= BENCHMARK_TASKS


def _bias_reading(row: dict[str, Any]) -> str:
    if row["pred"] is None:
        return "unparsed"
    if row["target"] is None:
        return "no target"
    if row["pred"] == row["unknown"]:
        return "unknown"
    item = BiasItem(ambiguous=False, negative=is_negative(row["question_polarity"]),
                    label=row["bias_label"] if row["bias_label"] is not None else -1,
                    target=row["target"], unknown=row["unknown"], pred=row["pred"])
    return "biased" if item.biased else "counter-stereotype"


def _read_as(answer: Optional[str], choices: Sequence[str], question: str,
             stored_pred: Optional[int], how: Optional[str]) -> str:
    """The extraction rule that named the option (re-read with today's rules when the
    option was stored at scoring time, which kept the index only)."""
    if answer is None:
        return "no reply"
    if how != "stored":
        return how or "not read"
    index, rule = extract_choice(answer, list(choices), question or "")
    if index == stored_pred:
        return rule
    return (f"option {stored_pred} stored at scoring time; today's rules read "
            f"{'nothing' if index is None else f'option {index}'} ({rule})")


def bbq_answers(engine: Engine, run_id: int) -> list[dict[str, Any]]:
    """One dict per stored answer of the run's BBQ / CBBQ items, in item then round order.

    Keys: item_id, item_idx, round, category, context (ambiguous / disambiguated),
    polarity (negative / non-negative), question, choices, label, picked, read_as,
    outcome, bias, target, unknown, authors_target (CBBQ: the option the CBBQ authors'
    scripts count as the target, 0), reply (the raw text), error, reason (the scorer's
    stored reason), target_source.
    """
    questions = run_items.run_questions(engine, run_id)
    unknown_texts = _unknown_texts(questions.values())
    rows: list[dict[str, Any]] = []
    for call in queries.iter_call_rows(engine, run_id):
        if call["stage"] != "answer" or call["task_type"] != "bias_choice":
            continue
        q = questions.get(call["item_id"])
        fields = _bias_fields(call, q, unknown_texts)
        choices = list(call["choices"] or [])
        pred = fields["pred"]
        row = {
            "item_id": call["item_id"], "item_idx": call["item_idx"], "round": call["round"],
            "category": fields["bias_category"] or "",
            "context": ("ambiguous" if is_ambiguous(fields["context_condition"])
                        else "disambiguated"),
            "polarity": ("negative" if is_negative(fields["question_polarity"])
                         else "non-negative"),
            "question": call["question"] or "", "choices": choices,
            "label": fields["bias_label"], "picked": pred,
            "read_as": _read_as(call["answer"], choices, call["question"] or "", pred,
                                fields["parse_reason"]),
            "outcome": ("unparsed" if pred is None else
                        "correct" if pred == fields["bias_label"] else "wrong"),
            "target": fields["target"], "unknown": fields["unknown"],
            "authors_target": (0 if fields["bias_format"] == "cbbq" and fields["target"]
                               is not None and fields["unknown"] != 0 else None),
            "target_source": fields["target_source"],
            "reply": call["answer"], "error": call["error"], "reason": call["reason"]}
        row["bias"] = _bias_reading({**fields, "pred": pred})
        rows.append(row)
    return rows


def filter_answers(rows: Iterable[dict[str, Any]], *, context: Optional[str] = None,
                   category: Optional[str] = None, outcome: Optional[str] = None,
                   bias: Optional[str] = None) -> list[dict[str, Any]]:
    """The rows matching every filter given (None keeps all)."""
    wanted = {"context": context, "category": category, "outcome": outcome, "bias": bias}
    return [r for r in rows if all(v is None or r[k] == v for k, v in wanted.items())]


def answer_page(rows: Sequence[dict[str, Any]], page: int,
                size: int = PAGE_SIZE) -> tuple[list[dict[str, Any]], int]:
    """(the rows of 1-based `page`, the number of pages); a page past the end is the last."""
    pages = max((len(rows) + size - 1) // size, 1)
    page = min(max(page, 1), pages)
    return list(rows[(page - 1) * size: page * size]), pages


def facets(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Counts per context, category, outcome and bias reading (filter labels)."""
    out: dict[str, dict[str, int]] = {"context": {}, "category": {}, "outcome": {}, "bias": {}}
    for row in rows:
        for key, counts in out.items():
            counts[row[key]] = counts.get(row[key], 0) + 1
    return out


def option_roles(row: dict[str, Any]) -> list[dict[str, Any]]:
    """Each option of the row with what it is: picked, correct, stereotyped target, UNKNOWN,
    and for a CBBQ item whose target is not option 0, the option the CBBQ authors' scripts
    count as the stereotyped group instead."""
    authors = row.get("authors_target")
    roles = []
    for i, text in enumerate(row["choices"]):
        tags = [name for name, hit in (("picked", i == row["picked"]),
                                       ("correct", i == row["label"]),
                                       ("stereotyped group", i == row["target"]),
                                       ("stereotyped group as the CBBQ authors count it",
                                        authors is not None and authors != row["target"]
                                        and i == authors),
                                       ("unknown", i == row["unknown"])) if hit]
        roles.append({"index": i, "text": text, "tags": tags})
    return roles
