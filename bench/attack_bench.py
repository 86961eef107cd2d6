"""Attack speed and quality on the shared Math23K and CODAH sets; one JSON line per measure.

    .venv/bin/python bench/attack_bench.py               # speed: char, zh word (load apart), en word
    .venv/bin/python bench/attack_bench.py --similarity  # + e5 similarity of attacks vs. unrelated pairs

Attack timings exclude the e5 similarity (params similarity=False); it is timed apart.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "datasets" / "trusted-evaluation"


def _load(name: str) -> list:
    from evalcore.dataset import parse_dataset

    return parse_dataset(DATA / name).questions


def _emit(**row: object) -> None:
    print(json.dumps(row, ensure_ascii=False), flush=True)


def _time_attacks(label: str, questions: list, level: str, params: dict) -> list:
    from evalcore.perturb import attack_questions

    started = time.perf_counter()
    results = asyncio.run(attack_questions(questions, level, seed=0,
                                           params={**params, "similarity": False}))
    seconds = time.perf_counter() - started
    flagged = sum(1 for r in results if set(r.flags) - {"unchanged"})
    _emit(bench=label, questions=len(questions), seconds=round(seconds, 3),
          edits=sum(r.attack_num for r in results),
          unchanged=sum(1 for r in results if "unchanged" in r.flags), flagged=flagged)
    return results


def _percentiles(values: list[float]) -> dict[str, float]:
    q = statistics.quantiles(values, n=20)
    return {"min": round(min(values), 4), "p5": round(q[0], 4), "median":
            round(statistics.median(values), 4), "p95": round(q[-1], 4),
            "max": round(max(values), 4)}


def _similarity(label: str, questions: list, results: list) -> None:
    from evalcore.scorers.text import embedding_cosine_batch

    changed = [(q, r) for q, r in zip(questions, results) if r.attacked != q.question]
    started = time.perf_counter()
    sims = embedding_cosine_batch([r.attacked for _, r in changed],
                                  [q.question for q, _ in changed])
    seconds = time.perf_counter() - started
    _emit(bench=f"{label} e5 similarity", pairs=len(changed), seconds=round(seconds, 2),
          **_percentiles(sims))


def _unrelated(label: str, questions: list) -> None:
    from evalcore.scorers.text import embedding_cosine_batch

    rng = random.Random(0)
    others = questions[:]
    rng.shuffle(others)
    pairs = [(a.question, b.question) for a, b in zip(questions, others) if a.idx != b.idx]
    sims = embedding_cosine_batch([a for a, _ in pairs], [b for _, b in pairs])
    _emit(bench=f"{label} unrelated pairs e5", pairs=len(pairs), **_percentiles(sims))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--similarity", action="store_true",
                        help="also measure e5 similarities (slow: ~20 ms per text)")
    args = parser.parse_args()
    math, codah = _load("Math23Ktest.csv"), _load("CODAHtest.csv")

    from evalcore.perturb.tokens import segment

    started = time.perf_counter()
    segment("预热", "zh")
    _emit(bench="jieba load", seconds=round(time.perf_counter() - started, 3))
    char_zh = _time_attacks("char Math23K", math, "char", {})
    char_en = _time_attacks("char CODAH", codah, "char", {})
    _time_attacks("char+typos CODAH", codah, "char", {"ops": ["insert", "swap", "drop",
                                                                "keyboard"]})

    from evalcore.perturb.word import load_zh_synonyms

    _emit(bench="zh synonym data load", seconds=round(load_zh_synonyms(), 3))
    word_zh = _time_attacks("word Math23K", math, "word", {})
    _time_attacks("word Math23K (warm cache)", math, "word", {})
    from evalcore.perturb.word import _wordnet

    started = time.perf_counter()
    _wordnet()
    _emit(bench="WordNet load", seconds=round(time.perf_counter() - started, 3))
    word_en = _time_attacks("word CODAH", codah, "word", {})
    if args.similarity:
        for label, qs, res in (("char Math23K", math, char_zh), ("char CODAH", codah, char_en),
                               ("word Math23K", math, word_zh), ("word CODAH", codah, word_en)):
            _similarity(label, qs, res)
        _unrelated("Math23K", math)
        _unrelated("CODAH", codah)


if __name__ == "__main__":
    main()
