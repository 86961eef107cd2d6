"""Shared by the attack set, robustness and CLI tests: a small maths set and a fake attack.

The fake attack is deterministic and known, so the storage, review and report tests can
check exact values without depending on the real engine's choices (tested in its own files).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

QUESTIONS = [("Tom has 3 apples and buys 4 more. How many apples now?", 7),
             ("Ann has 10 pens and loses 5. How many pens are left?", 5),
             ("A box holds 7 eggs and another holds 8. How many eggs in all?", 15),
             ("Sam reads 20 pages a day for 2 days. How many pages?", 40)]


@dataclass
class FakeResult:
    attacked: str
    attack_num: int
    pairs: list = field(default_factory=list)
    similarity: float = 0.97
    flags: list = field(default_factory=list)
    level: str = "word"
    details: dict = field(default_factory=dict)


def fake_attack(question: Any, level: str, seed: int = 0) -> FakeResult:
    """'How many' -> 'What number of'; item 2 also loses a number (flagged)."""
    text = question.question.replace("How many", "What number of")
    flags = []
    if question.idx == 2:
        text = text.replace("8", "9")
        flags = ["number_changed"]
    return FakeResult(text, 1 + (question.idx == 2), [["How many", "What number of"]],
                      0.95 - 0.01 * question.idx, flags, level, {"seed": seed})


@pytest.fixture()
def fake_engine(monkeypatch):
    """evalcore.perturb.attack_questions replaced by `fake_attack` (records its calls)."""
    import evalcore.perturb as perturb

    calls: list[dict] = []

    async def attack_questions(questions, level, *, seed=0, params=None, translator=None,
                               on_progress=None):
        calls.append({"n": len(questions), "level": level, "seed": seed, "params": params})
        return [fake_attack(q, level, seed) for q in questions]

    monkeypatch.setattr(perturb, "attack_questions", attack_questions, raising=False)
    return calls


def write_math_csv(path: Path, rows=QUESTIONS, attacked: dict[int, str] | None = None,
                   pairs: dict[int, str] | None = None) -> Path:
    """A Math23K-format CSV; with `attacked` the method's attacked layout."""
    import csv

    header = ["id", "question", "segmented_text", "equation", "answer"]
    if attacked is not None:
        header += ["attacked_question", "attack_num", "synword_pairs"]
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        for i, (q, a) in enumerate(rows):
            row = [100 + i, q, " ".join(q.split()), f"x={a}", f"{a}.0"]
            if attacked is not None:
                row += [attacked.get(i, q), 1, (pairs or {}).get(i, "{}")]
            writer.writerow(row)
    return path


@pytest.fixture()
def math_dataset(engine, tmp_path: Path) -> str:
    from evalcore.dataset import import_dataset

    import_dataset(engine, write_math_csv(tmp_path / "apples.csv"), name="apples")
    return "apples"
