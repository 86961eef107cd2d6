"""The stability page's summary cards: one card per bin (right j of N times) while N is
small, and one card per stability class when N > `MAX_BIN_CARDS` (101 cards for N = 100
say less than 5), with the full 0..N table kept for an expander.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalcore.metrics.stability import CLASSES, classify

MAX_BIN_CARDS = 20
CLASS_COLOURS = {"perfect": "#1a9850", "high": "#91cf60", "unstable": "#fee08b",
                 "severe": "#fc8d59", "failed": "#d73027"}
CLASS_LABELS = {"perfect": "perfect (N of N)", "high": "high (>= 80%)",
                "unstable": "unstable (50-80%)", "severe": "severe (1 to < 50%)",
                "failed": "failed (0 of N)"}


def class_cards(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One card per class, best first: label, the bins it spans (lowest, highest
    correct count), questions and percent; from the report's distribution counts."""
    n = int(report["repetition_count"])
    counts = {int(j): int(c) for j, c in report["distribution"]["distribution_counts"].items()}
    total = sum(counts.values()) or 1
    cards = []
    for name in CLASSES:
        bins = [j for j in range(n + 1) if classify(j, n) == name]
        if not bins:
            continue
        count = sum(counts.get(j, 0) for j in bins)
        cards.append({"class": name, "label": CLASS_LABELS[name], "colour": CLASS_COLOURS[name],
                      "bins": (min(bins), max(bins)), "count": count,
                      "percent": 100.0 * count / total})
    return cards


def grouped(report: Mapping[str, Any]) -> bool:
    """Whether the page should show class cards instead of one card per bin."""
    return int(report["repetition_count"]) > MAX_BIN_CARDS


def questions_card(report: Mapping[str, Any]) -> tuple[str, str | None]:
    """(value, help) of the Questions card: "4 of 10" when the run stopped (cancelled,
    failed) before asking every question, so a partial report does not look complete."""
    asked = report["distribution"]["total_questions"]
    planned = report["summary"].get("run_questions")
    if planned and asked < planned:
        return (f"{asked} of {planned}", f"The run stopped ({report['status']}) before asking "
                "the rest: every figure here covers the questions asked.")
    return str(asked), None

