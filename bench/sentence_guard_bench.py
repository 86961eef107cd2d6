"""Degenerate back-translations: how often each guard flag fires, on two kinds of output.

    .venv/bin/python bench/sentence_guard_bench.py --files           # the method's own files
    .venv/bin/python bench/sentence_guard_bench.py --files --show 40 # ... and flagged rows
    .venv/bin/python bench/sentence_guard_bench.py --generate OUT.jsonl --n 20   # local model
    .venv/bin/python bench/sentence_guard_bench.py --model OUT.jsonl --show 40  # flag them
    .venv/bin/python bench/sentence_guard_bench.py --levels          # false alarms char/word

`--files` reads trusted-evaluation/attacked/*_undersentenceattack.csv (the method's
back-translations, 30 rows each) and counts each degenerate flag (evalcore.perturb.degenerate)
and the length ratio percentiles the band was calibrated on. `--generate` back-translates the
first N Math23K and N CODAH questions through the embedded model (SmolLM2-135M, temperature
0, seed 0), one JSON line per item with the raw replies, so `--model` can re-check them
without the model. One JSON line per measure.
"""
from __future__ import annotations

import argparse
import asyncio
import csv
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "datasets" / "trusted-evaluation"
FILES = {"Math23K": "question", "CODAH": "Question prompt",
         "TruthfulQASinglectest": "question", "TruthfulQAMultictest": "question"}


def _emit(**row: object) -> None:
    print(json.dumps(row, ensure_ascii=False), flush=True)


def _rows(name: str) -> list[tuple[str, str]]:
    """(original, attacked) pairs; csv module, as some rows carry more cells than the header."""
    path = DATA / "attacked" / f"{name}_undersentenceattack.csv"
    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        q, a = header.index(FILES[name]), header.index("attacked_question")
        return [(r[q], r[a]) for r in reader if len(r) > max(q, a)]


async def _generate(out: Path, n: int, only: str | None = None) -> None:
    import msgspec

    from evalcore.dataset import parse_dataset
    from evalcore.perturb.sentence import LLMTranslator, clean_reply
    from evalcore.providers.local import stop_local
    from evalcore.providers.registry import default_local_config

    config = msgspec.structs.replace(default_local_config(), name="local-bench", timeout=300.0)
    translator = LLMTranslator(config)
    items = [] if only == "en" else [("zh", "en", q.question) for q in
                                     parse_dataset(DATA / "Math23Ktest.csv").questions[:n]]
    items += [] if only == "zh" else [("en", "zh", q.question) for q in
                                      parse_dataset(DATA / "CODAHtest.csv").questions[:n]]

    async def one(i: int, source: str, pivot: str, text: str) -> dict:
        started = time.perf_counter()
        record: dict = {"i": i + (n if only == "en" else 0), "source": source, "pivot": pivot, "original": text}
        try:
            record["pivot_raw"] = await translator.raw_reply(text, source, pivot)
            record["pivot_text"] = clean_reply(record["pivot_raw"])
            record["back_raw"] = await translator.raw_reply(record["pivot_text"], pivot, source)
        except Exception as exc:  # noqa: BLE001 - recorded, the bench goes on
            record["error"] = f"{type(exc).__name__}: {exc}"
        record["seconds"] = round(time.perf_counter() - started, 1)
        with out.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        return record

    try:
        await asyncio.gather(*(one(i, *item) for i, item in enumerate(items)))
    finally:
        stop_local()


def _ratio(original: str, attacked: str) -> float:
    from evalcore.perturb.degenerate import _compact

    return round(len(_compact(attacked)) / max(1, len(_compact(original))), 2)


def _show(rows: list[dict], limit: int) -> None:
    for row in rows[:limit]:
        _emit(**row)


def files(show: int) -> None:
    """Each flag's count on the method's back-translated files, and the length ratios."""
    from evalcore.perturb.degenerate import FLAGS, reasons

    flagged: list[dict] = []
    for name in FILES:
        rows = _rows(name)
        counts: Counter[str] = Counter()
        any_flag = 0
        for i, (original, attacked) in enumerate(rows):
            why = reasons(original, attacked)
            counts.update(list(why))
            any_flag += bool(why)
            if why:
                flagged.append({"set": name, "row": i + 1, "original": original,
                                "attacked": attacked, "reasons": why})
        ratios = sorted(_ratio(o, a) for o, a in rows)
        _emit(bench="files", set=name, rows=len(rows), flagged=any_flag,
              **{f: counts[f] for f in FLAGS},
              length_ratio_min=ratios[0], length_ratio_p5=ratios[len(ratios) // 20],
              length_ratio_median=statistics.median(ratios),
              length_ratio_p95=ratios[-1 - len(ratios) // 20], length_ratio_max=ratios[-1])
    _show(flagged, show)


def model(paths: list[Path], show: int) -> None:
    """Clean and check every back-translation a --generate run stored (all guard flags,
    e5 included), counting each flag; --show prints every item to read by eye."""
    from evalcore.dataset.records import Question
    from evalcore.perturb.degenerate import FLAGS, reasons
    from evalcore.perturb.guard import check_attack
    from evalcore.perturb.sentence import clean_reply
    from evalcore.values import validated

    unique: dict[tuple[str, str], dict] = {}
    for path in paths:  # runs may overlap (one per language): each question once
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                unique.setdefault((record["source"], record["original"]), record)
    records = sorted(unique.values(), key=lambda r: (r["source"] != "zh", r["original"]))
    per_language: dict[str, Counter[str]] = {}
    shown: list[dict] = []
    for record in records:
        counts = per_language.setdefault(record["source"], Counter())
        counts["items"] += 1
        if "error" in record:
            counts["translation_failed"] += 1
            continue
        attacked = clean_reply(record["back_raw"])
        if not attacked:
            counts["translation_failed"] += 1
            continue
        counts["cleaned"] += attacked != record["back_raw"].strip()
        clean = validated(Question, {"idx": record["i"], "question": record["original"]})
        sim, flags = check_attack(clean, attacked)
        degenerate = reasons(record["original"], attacked)
        counts.update(flags)
        counts["flagged"] += bool(flags)
        counts["degenerate"] += bool(degenerate)
        counts["only_degenerate"] += bool(flags) and set(flags) <= set(FLAGS)
        shown.append({"i": record["i"], "original": record["original"],
                      "raw": record["back_raw"][:300], "attacked": attacked,
                      "similarity": None if sim is None else round(sim, 3), "flags": flags,
                      "reasons": degenerate})
    for language, counts in per_language.items():
        _emit(bench="model", source=language, **dict(counts))
    _show(shown, show)


def levels() -> None:
    """False alarms elsewhere: the new flags on char and word attacks (seed 0, no e5) of
    all 500 Math23K and CODAH questions, which are not degenerate by construction."""
    from evalcore.dataset import parse_dataset
    from evalcore.perturb import attack_questions
    from evalcore.perturb.degenerate import FLAGS

    for name, file in (("Math23K", "Math23Ktest.csv"), ("CODAH", "CODAHtest.csv")):
        questions = parse_dataset(DATA / file).questions
        for level in ("char", "word"):
            results = asyncio.run(attack_questions(questions, level, seed=0,  # type: ignore[arg-type]
                                                   params={"similarity": False}))
            counts = Counter(f for r in results for f in r.flags if f in FLAGS)
            _emit(bench="levels", set=name, level=level, items=len(results),
                  flagged=sum(1 for r in results if set(r.flags) & set(FLAGS)), **counts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", action="store_true", help="the method's attacked files")
    parser.add_argument("--generate", type=Path, help="back-translate with the local model")
    parser.add_argument("--model", type=Path, nargs="+", help="flag --generate outputs")
    parser.add_argument("--levels", action="store_true", help="new flags on char/word attacks")
    parser.add_argument("--n", type=int, default=20, help="items per language (--generate)")
    parser.add_argument("--only", choices=("zh", "en"), help="one language (--generate)")
    parser.add_argument("--show", type=int, default=0, help="flagged rows to print")
    args = parser.parse_args()
    if args.generate:
        from evalcore.providers.client import run_closing_clients

        run_closing_clients(_generate(args.generate, args.n, args.only))
    if args.files:
        files(args.show)
    if args.model:
        model(args.model, args.show)
    if args.levels:
        levels()


if __name__ == "__main__":
    main()
