"""The bias benchmarks' figures of a fairness report (BBQ, CBBQ, CrowS-Pairs) as short rows
and notes, for the places that only summarise them: the trust report and the CLI.

CBBQ gets two readings side by side. evalcore counts as the target the option that names
`bias_targeted_groups`; the CBBQ authors' scripts count ans0 as the biased answer to every
negative question. Papers quote the authors' figures, so a reader comparing with a paper
needs them, and needs to know on how many items the two readings differ.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

AUTHORS = "CBBQ authors' convention"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def authors_note(authors: Mapping[str, Any]) -> str:
    """What the authors'-convention figures are and where they part from evalcore's."""
    differ = authors["differing_items"]
    where = (f"they differ on {differ} of {authors['items']} items "
             f"({authors['differing_ambiguous']} ambiguous, "
             f"{authors['differing_disambiguated']} disambiguated), where the targeted group "
             f"is not option A (e.g. items {authors['differing_item_ids'][:5]})"
             if differ else f"they agree on all {authors['items']} items (the targeted group "
                            "is option A in each)")
    return ("The CBBQ authors' scripts count option A as the biased answer to every "
            "negative question; evalcore counts the option that names the targeted group. "
            f"Papers quote the authors' figures; {where}.")


def benchmark_summary(report: Mapping[str, Any]) -> dict[str, Any]:
    """{"rows": [{figure, evalcore, authors}], "notes": [...]} of the report's BBQ / CBBQ
    scores and CrowS-Pairs share; empty rows for a counterfactual suite."""
    rows: list[dict[str, str]] = []
    notes: list[str] = []
    bbq = report.get("bbq")
    if bbq:
        method = bbq["method"].upper()
        authors = bbq.get("authors_convention")
        figures = [("ambiguous", "s_amb"), ("disambiguated", "s_dis")]
        if bbq.get("s_total") is not None or authors:
            figures.append(("total", "s_total"))
        for label, key in figures:
            rows.append({"figure": f"{method} bias, {label}", "evalcore": _num(bbq.get(key)),
                         "authors": _num(authors.get(key)) if authors else "same"})
        rows.append({"figure": f"{method} accuracy", "evalcore": _num(bbq.get("accuracy")),
                     "authors": "same"})
        if authors:
            notes.append(authors_note(authors))
    crows = report.get("crows_pairs")
    if crows:
        overall = crows["overall"]
        share = ("n/a" if overall["share"] is None else
                 f"{100 * overall['share']:.1f}% of {overall['n']} "
                 f"[{100 * overall['low']:.1f}%, {100 * overall['high']:.1f}%], "
                 f"{overall['preference']}")
        # Nangia et al. score a masked LM's pseudo-likelihoods, not a chat model's pick
        rows.append({"figure": "CrowS-Pairs stereotyped share", "evalcore": share,
                     "authors": "-"})
        parse = crows.get("parse") or {}
        if parse.get("answers"):
            rows.append({"figure": "CrowS-Pairs replies read",
                         "evalcore": f"{parse['answers'] - parse['unparsed']} of "
                                     f"{parse['answers']}", "authors": "-"})
    return {"rows": rows, "notes": notes}


def benchmark_lines(report: Mapping[str, Any]) -> list[str]:
    """The CBBQ authors'-convention figures and their note as terminal lines (the BBQ /
    CBBQ line itself and the CrowS block are printed by the CLI's summary already)."""
    authors = (report.get("bbq") or {}).get("authors_convention")
    if not authors:
        return []
    figures = (f"{AUTHORS}: ambiguous {_num(authors['s_amb'])}, disambiguated "
               f"{_num(authors['s_dis'])}, total {_num(authors['s_total'])}")
    return [figures, f"  note: {authors_note(authors)}"]
