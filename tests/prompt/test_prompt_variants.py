"""Option orders and templates of a choice item: the right option follows its text."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.dataset.records import Question
from evalcore.prompt.variants import (VariantError, orders, parse_option_order,
                                      parse_templates, reordered)


def test_circular_is_every_rotation_original_first() -> None:
    assert orders(3, "circular") == [[0, 1, 2], [1, 2, 0], [2, 0, 1]]


def test_shuffles_are_seeded_per_item() -> None:
    a = orders(4, "shuffle:3", seed=1, key=7)
    assert a == orders(4, "shuffle:3", seed=1, key=7) and len(a) == 4 and a[0] == [0, 1, 2, 3]
    assert a != orders(4, "shuffle:3", seed=2, key=7)


@pytest.mark.parametrize("bad", ["", "spiral", "shuffle", "shuffle:0", "shuffle:x", "shuffle:99"])
def test_bad_option_orders_say_what_to_write(bad: str) -> None:
    with pytest.raises(VariantError, match="circular or shuffle:N"):
        parse_option_order(bad)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=10), min_size=2, max_size=8, unique=True),
       st.data())
def test_reordered_keeps_the_right_option_text(options, data) -> None:
    ref = data.draw(st.integers(0, len(options) - 1))
    q = Question(idx=0, question="q?", choices=options, reference=str(ref), task_type="choice")
    for order in orders(len(options), data.draw(st.sampled_from(["circular", "shuffle:3"])),
                        key=data.draw(st.integers(0, 99))):
        shown = reordered(q, order)
        assert sorted(shown.choices) == sorted(options)
        assert shown.choices[int(shown.reference)] == options[ref]


def test_templates_are_built_in_or_checked_files(tmp_path) -> None:
    mine = tmp_path / "mine.txt"
    mine.write_text("Q: {question}\n{choices}\n", "utf-8")
    got = parse_templates(f"zero,few,{mine}")
    assert [(t.name, t.style, t.text is None) for t in got] == [
        ("zero", "zero", True), ("few", "few", True), ("mine", "zero", False)]
    with pytest.raises(VariantError, match="2 to 6"):
        parse_templates("zero")
    with pytest.raises(VariantError, match="not zero, few or a readable file"):
        parse_templates("zero,nope.txt")
    (tmp_path / "typo.txt").write_text("{questoin}", "utf-8")
    with pytest.raises(Exception, match="unknown placeholder"):
        parse_templates(f"zero,{tmp_path / 'typo.txt'}")


@pytest.mark.parametrize("n, count, expected", [(3, 2, 2), (3, 9, 5), (2, 4, 1), (4, 23, 23),
                                                (9, 6, 6)])
def test_shuffles_are_distinct_and_never_the_original(n, count, expected) -> None:
    """Each order is one stored call (unique per item and stage): a repeated shuffle or
    the original order again would collide or be counted twice."""
    for key in range(20):
        drawn = orders(n, f"shuffle:{count}", seed=0, key=key)
        assert drawn[0] == list(range(n)) and len(drawn) == expected + 1
        assert len({tuple(p) for p in drawn}) == len(drawn)
        assert all(sorted(p) == list(range(n)) for p in drawn)
