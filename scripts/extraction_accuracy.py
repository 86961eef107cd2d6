"""Accuracy of answer extraction on the table of realistic replies.

    .venv/bin/python scripts/extraction_accuracy.py [--failures]

Reads tests/scorers/data/extraction_cases.jsonl (one reply a line, Chinese and English:
verbose, restating the question, listing the options, refusing, garbage) and compares
what `extract_choice` / `extract_number` read with the expected answer (null = nothing
should be read). Cases marked "set": "held-out" were written after the extractor and
first scored without changing it (37/40); the rest were written alongside it.
tests/scorers/test_extraction_table.py runs the same function.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "scorers" / "data" / "extraction_cases.jsonl"


def read_case(case: dict[str, Any]) -> Any:
    """What the extractor reads from one case's reply (None = nothing)."""
    from evalcore.scorers.rules import extract_number
    from evalcore.scorers.rules_choice import extract_choice

    if case["kind"] == "choice":
        return extract_choice(case["reply"], case["choices"])[0]
    found = extract_number(case["reply"])
    return None if found is None else found.values[0]


def _same(got: Any, expected: Any) -> bool:
    if got is None or expected is None:
        return got is None and expected is None
    return math.isclose(float(got), float(expected), rel_tol=1e-9, abs_tol=1e-12)


def evaluate(path: Path = CASES) -> dict[str, Any]:
    """{"cases", "correct", "accuracy", "by_kind", "failures"} over the table."""
    cases = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
             if line.strip()]
    failures, by_kind, by_set = [], {}, {}
    for case in cases:
        got = read_case(case)
        ok = _same(got, case["expected"])
        for table, key in ((by_kind, case["kind"]), (by_set, case.get("set", "development"))):
            counts = table.setdefault(key, [0, 0])
            counts[0] += 1
            counts[1] += ok
        if not ok:
            failures.append({**case, "got": got})
    correct = len(cases) - len(failures)
    return {"cases": len(cases), "correct": correct, "accuracy": correct / len(cases),
            "by_kind": {k: {"cases": n, "correct": c} for k, (n, c) in by_kind.items()},
            "by_set": {k: {"cases": n, "correct": c} for k, (n, c) in by_set.items()},
            "failures": failures}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--failures", action="store_true", help="print every miss")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    result = evaluate()
    print(f"{result['correct']}/{result['cases']} replies read as expected "
          f"({result['accuracy']:.1%})")
    for group in ("by_kind", "by_set"):
        for name, figures in result[group].items():
            print(f"  {name}: {figures['correct']}/{figures['cases']}")
    if args.failures:
        for f in result["failures"]:
            print(f"  MISS {f['kind']}: {f['reply']!r} expected {f['expected']!r} got {f['got']!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
