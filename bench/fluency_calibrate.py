"""The fluency check's threshold from labelled swaps; one JSON line per measure.

    .venv/bin/python bench/fluency_calibrate.py            # tune on "tune", report "test"
    .venv/bin/python bench/fluency_calibrate.py --rows     # every pair with its cost

bench/fluency_pairs.jsonl holds sentences written for this (none from a dataset): each has
one "[original|swap]" and a label, good (the swap keeps the meaning and reads naturally)
or bad (a broken collocation, another thing or person, a wrong sense, a degree form, a
register the sentence does not have), and a split. The threshold is chosen on "tune"
only (the best balanced accuracy, share of good kept + share of bad dropped, among
thresholds keeping at least `--keep` of the good ones), then applied to "test". Chinese rows are scored token by token (`_stepwise`) to measure
whether SmolLM2 reads Chinese well enough; the attack does not check Chinese swaps.
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


def cost(text: str, language: str = "en") -> float:
    from evalcore.perturb.fluency import swap_cost

    match = _SLOT.search(text)
    if match is None:
        raise SystemExit(f"{PAIRS}: no [original|swap] in {text!r}")
    before, after = text[:match.start()], text[match.end():]
    if language == "zh":
        return (_stepwise(before, match.group(2) + after)
                - _stepwise(before, match.group(1) + after))
    return swap_cost(before, match.group(1), match.group(2), after)


def _stepwise(prefix: str, continuation: str, top: int = 100) -> float:
    """log P(continuation | prefix) one token per request, for Chinese: the check's
    forcing grammar fails on SmolLM2's byte tokens (a Chinese character is 1-3 of them).
    Each step reads the raw log-probability of the next token from the top `top`
    (below them: the last one's, an upper bound); a bias towards "." only keeps the
    sampled token a whole character, so the server returns the step's probabilities."""
    from evalcore.perturb.fluency import _model

    model = _model()
    head, ids = model.tokens(prefix), model.tokens(continuation)
    total = 0.0
    for n, token in enumerate(ids):
        reply = model.server.handle_completions({
            "prompt": head + ids[:n], "n_predict": 1, "n_probs": top, "temperature": 0,
            "logit_bias": [[model.tokens(".")[0], 100]], "post_sampling_probs": False})
        ranked = reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
        total += next((r["logprob"] for r in ranked if r["id"] == token),
                      ranked[-1]["logprob"])
    return total


def _rates(rows: list[dict], threshold: float) -> dict:
    good = [r for r in rows if r["label"] == "good"]
    bad = [r for r in rows if r["label"] == "bad"]
    return {"good_kept": f"{sum(r['cost'] >= threshold for r in good)}/{len(good)}",
            "bad_dropped": f"{sum(r['cost'] < threshold for r in bad)}/{len(bad)}"}


def choose(rows: list[dict], keep: float) -> float:
    """The threshold with the best balanced accuracy on the tuning pairs (share of good
    swaps kept + share of bad ones dropped) among those keeping at least `keep` of the
    good ones (coverage); a tie goes to the lower, keeping more."""
    good = [r["cost"] for r in rows if r["label"] == "good"]
    bad = [r["cost"] for r in rows if r["label"] == "bad"]
    if not good or not bad:
        return 0.0

    def balanced(t: float) -> float:
        return sum(c >= t for c in good) / len(good) + sum(c < t for c in bad) / len(bad)

    allowed = [t for t in sorted(good) if sum(c >= t for c in good) >= keep * len(good)]
    return round(max(allowed, key=balanced) - 0.01, 2)  # max keeps the first best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", action="store_true", help="print every pair's cost")
    parser.add_argument("--keep", type=float, default=0.8,
                        help="least share of good tuning swaps kept (coverage)")
    args = parser.parse_args()
    rows = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    for row in rows:
        row["cost"] = round(cost(row["text"], row["language"]), 2)
        if args.rows:
            print(json.dumps(row, ensure_ascii=False), flush=True)
    from scipy.stats import mannwhitneyu

    from evalcore.perturb.fluency import THRESHOLD

    for language in ("en", "zh"):
        part = [r for r in rows if r["language"] == language]
        tune = [r for r in part if r["split"] == "tune"]
        test = [r for r in part if r["split"] == "test"]
        chosen = choose(tune, args.keep)
        good = [r["cost"] for r in part if r["label"] == "good"]
        bad = [r["cost"] for r in part if r["label"] == "bad"]
        auc = mannwhitneyu(good, bad).statistic / (len(good) * len(bad))  # ROC AUC
        print(json.dumps({"language": language, "auc_all": round(auc, 3),
                          "chosen_on_tune": chosen,
                          "tune": _rates(tune, chosen), "test": _rates(test, chosen),
                          "in_use": THRESHOLD, "test_in_use": _rates(test, THRESHOLD)}),
              flush=True)


if __name__ == "__main__":
    main()
