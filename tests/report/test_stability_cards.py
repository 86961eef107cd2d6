"""Class cards for N > 20: every question counted once, in the class `classify` gives."""
from __future__ import annotations

import random

from evalcore.metrics.stability import classify
from evalcore.report.stability_cards import class_cards, grouped


def test_class_cards_sum_the_bins_of_each_class():
    rng = random.Random(1)
    n = 100
    correct = [rng.randint(0, n) for _ in range(500)] + [0, n, n]
    counts = {str(j): sum(1 for c in correct if c == j) for j in range(n + 1)}
    report = {"repetition_count": n, "distribution": {"distribution_counts": counts}}
    cards = class_cards(report)
    assert grouped(report) and not grouped({"repetition_count": 20})
    assert [c["class"] for c in cards] == ["perfect", "high", "unstable", "severe", "failed"]
    for card in cards:
        assert card["count"] == sum(1 for c in correct if classify(c, n) == card["class"])
    assert sum(c["count"] for c in cards) == len(correct)
    assert {c["class"]: c["bins"] for c in cards}["high"] == (80, 99)
    assert abs(sum(c["percent"] for c in cards) - 100.0) < 1e-9
