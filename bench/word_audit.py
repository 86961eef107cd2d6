"""Blind audit of word attacks: draw, write blind, score a reviewer's verdicts.

    # fresh samples from files no audit, table or threshold was built on (every shared
    # CODAH and TruthfulQA row that still swaps has been shown to a reviewer)
    .venv/bin/python bench/word_audit.py --write --lang en --n 200 --sample-seed 29 \
        --suffix _fluency_fresh --rows BBQ-Age=1-600 --rows Translation=1-500
    .venv/bin/python bench/word_audit.py --write --lang zh --n 200 --sample-seed 31 \
        --suffix _fluency_fresh --rows CBBQ-SES=1-3960 --rows CBBQ-SES-dis=1-3960 \
        --rows CBBQ-gender=1-1838 --rows CBBQ-gender-amb=1-1838 --rows Translation-zh=1-500
    # after the fluency round: the attack's defaults (fluency check, register kept), none
    # of the rows an earlier word audit showed (Chinese: the Math23K sample the Chinese
    # table was last corrected on)
    .venv/bin/python bench/word_audit.py --write --n 200 --sample-seed 29 --suffix _fluency \
        --exclude docs/audits/2026-11-26/word_key_en.json \
                  docs/audits/2026-11-26/word_key_en_fresh.json \
                  docs/audits/2026-11-26/word_key_zh.json \
                  docs/audits/2026-11-27/word_key_en_s4.json \
                  docs/audits/2026-11-27/word_key_en_s5.json \
                  docs/audits/2026-11-27/word_key_en_s5b.json
    # or from given rows only, of the shared file or of another file of the set's format
    .venv/bin/python bench/word_audit.py --write --lang en --n 200 --sample-seed 29 \
        --rows CODAH=1901-2700@PATH/TO/public_codah.csv --suffix _fluency_public

    .venv/bin/python bench/word_audit.py --write                 # both languages, n=200, seed 7
    .venv/bin/python bench/word_audit.py --score docs/audits/DATE/word_verdicts_en.json
    # a fresh sample after a fix: new seed, none of the items an earlier sample showed
    .venv/bin/python bench/word_audit.py --write --lang en --sample-seed 11 --suffix _fresh \
        --exclude docs/audits/DATE/word_key_en.json
    # the third English sample, disjoint from both earlier ones
    .venv/bin/python bench/word_audit.py --write --lang en --sample-seed 13 --suffix _s4 \
        --exclude docs/audits/2026-11-26/word_key_en.json \
                  docs/audits/2026-11-26/word_key_en_fresh.json
    # the fourth, after the precision-by-source round (bench/word_sources.py)
    .venv/bin/python bench/word_audit.py --write --lang en --sample-seed 17 --suffix _s5 \
        --exclude docs/audits/2026-11-26/word_key_en.json \
                  docs/audits/2026-11-26/word_key_en_fresh.json \
                  docs/audits/2026-11-27/word_key_en_s4.json

`--write` attacks the shared sets at word level (seed 1, the e5 guard on), keeps the
items that changed and carry no flag (what `attacks approve --unflagged` would approve),
and draws a seeded sample per language: English from CODAH and TruthfulQA (question and
option swaps together), Chinese from Math23K. It writes, under docs/audits/<date>/:

- `word_blind_{en,zh}.json`: [{"id", "original", "attacked"}], each side the question
  and, for choice items, its options in order; nothing else (no flags, no pairs, no
  similarity, no notes), for a reviewer who did not write the attack;
- `word_key_{en,zh}.json`: what the reviewer must not see (set, row, pairs and where,
  similarity), for the lead to trace a verdict back.

The reviewer answers in `word_verdicts_{en,zh}.json`: [{"id": 1, "verdict": "keeps" |
"changes", "why": "..."}]. `--score` prints the share that keeps the meaning with its
95% Wilson interval (target: >= 95%, lower bound >= 92%).
"""
from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "datasets" / "trusted-evaluation"
SETS = {"en": {"CODAH": "CODAHtest.csv", "TruthfulQA": "TruthfulQASinglectest.csv"},
        "zh": {"Math23K": "Math23Ktest.csv"}}
NAMED_ONLY = {"en": {"BBQ-Age": "../bbq/Age.sample.jsonl",
                     "Translation": "translation2019zhtest.csv"},
              "zh": {"CBBQ-SES": "../cbbq/SES/ambiguous.csv",
                     "CBBQ-SES-dis": "../cbbq/SES/disambiguous.csv",
                     "CBBQ-gender": "../cbbq/gender/disambiguous.csv",
                     "CBBQ-gender-amb": "../cbbq/gender/ambiguous.csv",
                     "Translation-zh": "translation2019zhtest.csv"}}
MAPPINGS = {"Translation-zh": {"question": "chinese", "reference": "english"}}
"""Sets whose question is not the column the file's format reads (the translation set's
Chinese side)."""
"""Files no word audit, table or threshold was ever built on (BBQ's Age and CBBQ's contexts
and questions, the translation set's English sentences): drawn only when named in --rows,
for a fresh sample once the shared CODAH, TruthfulQA and Math23K rows have all been shown.
BBQ and CBBQ write many items from one template: a sample keeps one item per distinct set
of swaps, so one template's swap is not counted many times."""
KEEPS = "keeps"
CHANGES = "changes"
TARGET, TARGET_LOW = 0.95, 0.92


def _side(question: str, options: list[str]) -> dict[str, object]:
    return {"question": question, "options": options} if options else {"question": question}


def parse_rows(specs: list[str]) -> dict[str, tuple[Path, range]]:
    """`SET=FIRST-LAST` or `SET=FIRST-LAST@FILE` (1-based data rows, both ends in) ->
    {set: (file, rows)}: the rows of a set to draw from (and attack: only those)."""
    known = {name: file for table in (SETS, NAMED_ONLY) for sets in table.values()
             for name, file in sets.items()}
    out = {}
    for spec in specs:
        name, _, rest = spec.partition("=")
        span, _, file = rest.partition("@")
        first, _, last = span.partition("-")
        if name not in known or not (first.isdigit() and last.isdigit()) or int(first) < 1:
            raise SystemExit(f"error: --rows {spec!r}: write SET=FIRST-LAST[@FILE] with SET "
                             f"one of {', '.join(known)} and 1-based rows, e.g. CODAH=1-250")
        out[name] = (Path(file) if file else DATA / known[name],
                     range(int(first), int(last) + 1))
    return out


def draw(language: str, n: int, sample_seed: int, seed: int,
         exclude: frozenset[tuple[str, int]] = frozenset(),
         rows: dict[str, tuple[Path, range]] | None = None,
         coverage: dict[str, int] | None = None) -> tuple[list, list]:
    """(blind rows, key rows) of `n` unflagged attacked items of `language`, none of the
    (set, row) pairs in `exclude` (items an earlier sample showed a reviewer); with
    `rows`, only the sets and rows named there (parse_rows)."""
    from evalcore.dataset import parse_dataset
    from evalcore.perturb import attack_questions

    pool = []
    sets = SETS[language] | (NAMED_ONLY[language] if rows is not None else {})
    for name, file in sets.items():
        if rows is not None and name not in rows:
            continue
        path, span = rows[name] if rows is not None else (DATA / file, None)
        questions = parse_dataset(path, mapping=MAPPINGS.get(name)).questions
        if span is not None:
            questions = [q for q in questions if q.idx + 1 in span]
        results = asyncio.run(attack_questions(questions, "word", seed=seed))
        if coverage is not None:  # the share the sample's items were drawn from
            coverage["items"] = coverage.get("items", 0) + len(results)
            coverage["swapped"] = coverage.get("swapped", 0) + sum(bool(r.pairs) for r in results)
            coverage["unflagged"] = coverage.get("unflagged", 0) + sum(
                bool(r.pairs) and not r.flags for r in results)
        for q, r in zip(questions, results):
            if r.pairs and not r.flags and (name, q.idx + 1) not in exclude:
                pool.append((name, q, r))
    random.Random(sample_seed).shuffle(pool)
    pool = _one_per_swap_set(pool)
    blind, key = [], []
    for i, (name, q, r) in enumerate(pool[:n], 1):
        options = list(q.choices) if r.choices else []
        blind.append({"id": i, "original": _side(q.question, options),
                      "attacked": _side(r.attacked, list(r.choices))})
        key.append({"id": i, "set": name, "row": q.idx + 1,
                    "pairs": [[a, b, w] for (a, b), w in zip(r.pairs, r.where)],
                    "similarity": r.similarity})
    return blind, key


def _one_per_swap_set(pool: list) -> list:
    """The pool without a template-written item whose swaps an earlier one already made."""
    named_only = {name for sets in NAMED_ONLY.values() for name in sets}
    seen, out = set(), []
    for name, q, r in pool:
        swaps = (name, tuple(sorted(map(tuple, r.pairs))))
        if name in named_only and swaps in seen:
            continue
        seen.add(swaps)
        out.append((name, q, r))
    return out


def seen_items(keys: list[Path], language: str) -> frozenset[tuple[str, int]]:
    """(set, row) of every item in the earlier key files of `language` (word_key_en.json,
    word_key_en_fresh.json): a fresh sample must not show a reviewer those again."""
    return frozenset((k["set"], k["row"]) for path in keys
                     if path.stem.split("_")[2:3] == [language]
                     for k in json.loads(path.read_text(encoding="utf-8")))


def write(out: Path, n: int, sample_seed: int, seed: int, languages: list[str],
          suffix: str = "", exclude: list[Path] | None = None,
          rows: dict[str, tuple[Path, range]] | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for language in languages:
        coverage: dict[str, int] = {}
        blind, key = draw(language, n, sample_seed, seed, seen_items(exclude or [], language),
                          rows, coverage)
        for stem, lines in (("blind", blind), ("key", key)):
            path = out / f"word_{stem}_{language}{suffix}.json"
            path.write_text(json.dumps(lines, ensure_ascii=False, indent=1) + "\n",
                            encoding="utf-8")
        print(json.dumps({"language": language, "items": len(blind), "coverage": coverage,
                          "sample_seed": sample_seed,
                          "attack_seed": seed, "out": str(out)}))


def score(verdicts: list[dict]) -> dict[str, object]:
    """Share of "keeps" verdicts with its 95% Wilson interval; any other verdict is an
    error a reviewer can fix (the id is named)."""
    from evalcore.metrics.stability import wilson_interval

    bad = [v.get("id") for v in verdicts if v.get("verdict") not in (KEEPS, CHANGES)]
    if bad:
        raise SystemExit(f"error: verdicts {bad[:5]} are not {KEEPS!r} or {CHANGES!r} "
                         "(fix the verdicts file)")
    n = len(verdicts)
    keeps = sum(1 for v in verdicts if v["verdict"] == KEEPS)
    low, high = wilson_interval(keeps, n)
    return {"items": n, "keeps": keeps, "share": round(keeps / n, 4),
            "wilson_95": [round(low, 4), round(high, 4)],
            "target_met": keeps / n >= TARGET and low >= TARGET_LOW,
            "changes_ids": [v["id"] for v in verdicts if v["verdict"] == CHANGES]}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="draw and write the blind files")
    parser.add_argument("--score", type=Path, help="a verdicts file to score")
    parser.add_argument("--lang", choices=("en", "zh"), action="append",
                        help="language(s) to draw (default both)")
    parser.add_argument("--n", type=int, default=200, help="items per language")
    parser.add_argument("--sample-seed", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1, help="attack seed")
    parser.add_argument("--suffix", default="",
                        help="file name suffix, e.g. _fresh for a second sample beside the first")
    parser.add_argument("--exclude", type=Path, action="extend", nargs="+", default=[],
                        help="earlier key files (word_key_LANG*.json), several after one "
                             "--exclude or one per --exclude: none of their items is drawn")
    parser.add_argument("--rows", action="append", default=[], metavar="SET=FIRST-LAST[@FILE]",
                        help="draw only from these 1-based rows of a set (repeat per set; "
                             "@FILE reads another file of the set's format, e.g. the public "
                             "CODAH file); sets not named are not drawn")
    parser.add_argument("--out", type=Path,
                        default=ROOT / "docs" / "audits" / dt.date.today().isoformat())
    return parser


def main() -> None:
    parser = build_parser()
    args = parser.parse_args()
    missing = [str(p) for p in args.exclude if not p.is_file()]
    if missing:
        parser.error(f"--exclude: no such key file {missing[0]} (give the word_key_*.json "
                     "files of the earlier samples)")
    if args.score:
        print(json.dumps(score(json.loads(args.score.read_text(encoding="utf-8")))))
    elif args.write:
        write(args.out, args.n, args.sample_seed, args.seed, args.lang or ["en", "zh"],
              args.suffix, args.exclude, parse_rows(args.rows) if args.rows else None)
    else:
        parser.error("choose --write or --score FILE")


if __name__ == "__main__":
    main()
