"""Answer extraction on >= 200 realistic replies (scripts/extraction_accuracy.py prints it)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location(
        "extraction_accuracy", ROOT / "scripts" / "extraction_accuracy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_table_is_large_mixed_and_read_at_least_98_percent() -> None:
    result = _script().evaluate()
    assert result["cases"] >= 200
    assert set(result["by_kind"]) == {"choice", "number"}
    misses = [(f["reply"], f["expected"], f["got"]) for f in result["failures"]]
    assert result["accuracy"] >= 0.98, misses


def test_the_accuracy_can_fail(tmp_path) -> None:
    bad = tmp_path / "cases.jsonl"
    bad.write_text('{"kind": "number", "reply": "x = 7 (check: 7+3=10)", "expected": 10}\n'
                   '{"kind": "choice", "reply": "1. a\\n2. b", "choices": ["a", "b"], '
                   '"expected": 0}\n', encoding="utf-8")
    result = _script().evaluate(bad)
    assert result["accuracy"] == 0.0 and len(result["failures"]) == 2
