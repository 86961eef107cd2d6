"""The fluency check's threshold from labelled swaps; one JSON line per measure.

    .venv/bin/python bench/fluency_calibrate.py            # tune on "tune", report "test"
    .venv/bin/python bench/fluency_calibrate.py --rows     # every pair with its cost

bench/fluency_pairs.jsonl holds sentences written for this (none from a dataset): each has
one "[original|swap]" and a label, good (the swap keeps the meaning and reads naturally)
or bad (a broken collocation, another thing or person, a wrong sense, a degree form, a
register the sentence does not have), and a split. The threshold is chosen on "tune"
only (the most bad swaps dropped while keeping at least `--keep` of the good ones), then
applied to "test".
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PAIRS = ROOT / "bench" / "fluency_pairs.jsonl"
_SLOT = re.compile(r"\[([^|\]]+)\|([^\]]+)\]")


def cost(text: str) -> float:
    from evalcore.perturb.fluency import swap_cost

    match = _SLOT.search(text)
    if match is None:
        raise SystemExit(f"{PAIRS}: no [original|swap] in {text!r}")
    return swap_cost(text[:match.start()], match.group(1), match.group(2),
                     text[match.end():])


def _rates(rows: list[dict], threshold: float) -> dict:
    good = [r for r in rows if r["label"] == "good"]
    bad = [r for r in rows if r["label"] == "bad"]
    return {"good_kept": f"{sum(r['cost'] >= threshold for r in good)}/{len(good)}",
            "bad_dropped": f"{sum(r['cost'] < threshold for r in bad)}/{len(bad)}"}


def choose(rows: list[dict], keep: float) -> float:
    """The highest threshold that keeps at least `keep` of the good tuning swaps."""
    good = sorted(r["cost"] for r in rows if r["label"] == "good")
    allowed = int(len(good) * (1 - keep))  # good swaps the threshold may drop
    return round(good[allowed] - 0.01, 2) if good else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", action="store_true", help="print every pair's cost")
    parser.add_argument("--keep", type=float, default=0.85,
                        help="least share of good tuning swaps kept")
    args = parser.parse_args()
    rows = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    for row in rows:
        row["cost"] = round(cost(row["text"]), 2)
        if args.rows:
            print(json.dumps(row, ensure_ascii=False), flush=True)
    from evalcore.perturb.fluency import THRESHOLD

    for language in ("en", "zh"):
        part = [r for r in rows if r["language"] == language]
        tune = [r for r in part if r["split"] == "tune"]
        test = [r for r in part if r["split"] == "test"]
        chosen = choose(tune, args.keep)
        print(json.dumps({"language": language, "chosen_on_tune": chosen,
                          "tune": _rates(tune, chosen), "test": _rates(test, chosen),
                          "in_use": THRESHOLD, "test_in_use": _rates(test, THRESHOLD)}),
              flush=True)


if __name__ == "__main__":
    main()
