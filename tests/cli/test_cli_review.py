"""`review` through the CLI: create a queue, two users take items as EVALCORE_USER, decide,
edit, adjudicate, and read the figures; the JSON shapes the issue promises."""
from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from evalcore.cli import main
from tests.fakes.review_sets import seed_attack_set


def _json(capsys, argv: list[str]):  # type: ignore[no-untyped-def]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_review_create_next_submit_adjudicate_stats(engine, capsys, monkeypatch, tmp_path):
    set_id, _ = seed_attack_set(engine, 3)
    rules = tmp_path / "rules.txt"
    rules.write_text("Reject a swap that changes what is asked.", encoding="utf-8")
    created = _json(capsys, ["review", "create", "--attack-set", str(set_id), "--double", "100",
                             "--guidelines", str(rules), "--json"])
    queue = str(created["queue_id"])
    monkeypatch.setenv("EVALCORE_USER", "ann")
    card = _json(capsys, ["review", "next", queue, "--json"])
    assert card["guidelines"].startswith("Reject a swap") and card["position"] == 0
    assert _json(capsys, ["review", "next", queue, "--json"])["item_id"] == card["item_id"]
    assert main(["review", "submit", queue, str(card["item_id"]), "--verdict", "reject",
                 "--question", "question 0, edited", "--option", "1=nope"]) == 0
    assert capsys.readouterr().out == f"item {card['item_id']}: reject\n"
    monkeypatch.setenv("EVALCORE_USER", "bob")
    second = _json(capsys, ["review", "next", queue, "--json"])
    assert second["item_id"] == card["item_id"]  # the second review, blind
    assert "verdict" not in json.dumps(second)
    assert main(["review", "submit", queue, str(card["item_id"]), "--verdict", "approve"]) == 0
    capsys.readouterr()
    stats = _json(capsys, ["review", "stats", queue, "--json"])
    assert {"total", "decided", "by_reviewer", "agreement", "disagreements",
            "precision"} <= set(stats)
    assert stats["by_reviewer"] == {"ann": 1, "bob": 1}
    assert stats["disagreements"] == [{"item_id": card["item_id"], "adjudication": None,
                                       "verdicts": {"ann": "reject", "bob": "approve"}}]
    assert main(["review", "adjudicate", queue, str(card["item_id"]), "--verdict",
                 "reject"]) == 0
    capsys.readouterr()
    stats = _json(capsys, ["review", "stats", queue, "--json"])
    assert stats["decided"] == 1 and stats["precision"]["overall"]["kept"] == 0
    assert set(stats["agreement"]) >= {"method", "value", "pairs"}


def test_next_says_null_when_nothing_is_left_and_errors_are_one_line(engine, capsys,
                                                                      monkeypatch):
    set_id, _ = seed_attack_set(engine, 1)
    queue = str(_json(capsys, ["review", "create", "--attack-set", str(set_id),
                               "--json"])["queue_id"])
    monkeypatch.setenv("EVALCORE_USER", "ann")
    item = _json(capsys, ["review", "next", queue, "--json"])["item_id"]
    assert main(["review", "submit", queue, str(item), "--verdict", "approve"]) == 0
    capsys.readouterr()
    assert _json(capsys, ["review", "next", queue, "--json"]) == {"item_id": None}
    assert main(["review", "submit", queue, str(item), "--verdict", "right"]) == 2
    assert "one of approve, reject" in capsys.readouterr().err
    assert main(["review", "submit", queue, str(item), "--verdict", "approve",
                 "--option", "x"]) == 2
    assert "N=TEXT" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["review", "create", "--json"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=4))
@example(["²=x"])  # a digit to str.isdigit, not to int()
def test_option_flags_parse_or_say_how_to_write_them(pairs: list[str]) -> None:
    from evalcore.cli.review import _options
    from evalcore.errors import EvalcoreError

    try:
        parsed = _options(pairs)
    except EvalcoreError as exc:
        assert "N=TEXT" in str(exc)
        return
    for pair in pairs:
        assert int(pair.partition("=")[0]) in parsed
    assert all(isinstance(k, int) and k >= 0 for k in parsed)
