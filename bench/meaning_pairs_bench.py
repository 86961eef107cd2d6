"""Same meaning? Fresh answer pairs for a blind reviewer, and the routes scored on labels.

    # draw N fresh pairs (seeded) for a reviewer: no label, no route's decision in the file
    .venv/bin/python bench/meaning_pairs_bench.py draw --truthfulqa --n 40 --seed 11 \
        --out /tmp/pairs.json
    .venv/bin/python bench/meaning_pairs_bench.py draw --run 12 --n 40 --seed 11 --out ...
    # the reviewer writes {"<id>": true|false, ...} (true = same meaning); score the routes
    .venv/bin/python bench/meaning_pairs_bench.py score --pairs /tmp/pairs.json \
        --verdicts /tmp/verdicts.json [--judge local]
    # a labelled file (calibration or a past blind audit): both routes on it
    .venv/bin/python bench/meaning_pairs_bench.py score \
        --labelled tests/metrics/meaning_pairs.json \
        --judge local

Sources for `draw`: `--run ID`: two different answer texts of one open question of a
stored stability run (the database of the settings, e.g. a run on the local model);
`--truthfulqa`: two options of one TruthfulQA multi-true question from the shared data
(half two true options, half a true and a false one, the reviewer is not told which).
`score` prints, per route, right / total with a Wilson 95% interval, by language and by
label: offline (cues + e5, `scorers.meaning.offline_same`), e5 alone at 0.945, and with
`--judge MODEL` the judge model asked `meaning_request` (parsed by `parse_same`; an
unreadable reply counts as "different", as the grouping keeps such answers apart).
"""
from __future__ import annotations

import argparse
import asyncio
import csv
import json
import random
import sys
import time
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TRUTHFULQA = ROOT.parent.parent / "shared/datasets/trusted-evaluation/TruthfulQAMultictest.csv"


def _truthfulqa_pairs(n: int, rng: random.Random) -> list[dict[str, Any]]:
    path = TRUTHFULQA if TRUTHFULQA.exists() else Path(
        "/work/shared/datasets/trusted-evaluation/TruthfulQAMultictest.csv")
    with path.open(encoding="utf-8-sig") as fh:
        rows = list(csv.DictReader(fh))
    rng.shuffle(rows)
    out: list[dict[str, Any]] = []
    for row in rows:
        options = [(row[f"choice{i}"], row.get(f"answer{i}", "")) for i in range(24)
                   if row.get(f"choice{i}", "").strip()]
        true = [t for t, a in options if a.strip().startswith("1")]
        false = [t for t, a in options if a.strip().startswith("0")]
        want_same = len(out) % 2 == 0
        if want_same and len(true) >= 2:
            a, b = rng.sample(true, 2)
        elif not want_same and true and false:
            a, b = rng.choice(true), rng.choice(false)
        else:
            continue
        out.append({"question": row["question"], "a": a, "b": b, "lang": "en"})
        if len(out) == n:
            break
    return out


def _run_pairs(run_id: int, n: int, rng: random.Random) -> list[dict[str, Any]]:
    from evalcore.config import load_settings
    from evalcore.dataset.language import detect_language
    from evalcore.runner.meaning_judge import open_groups
    from evalcore.store.db import make_engine

    engine = make_engine(load_settings().db_url)
    candidates = []
    for _, (question, groups) in open_groups(engine, run_id).items():
        texts = [g.example for g in groups if g.answer is not None]
        candidates += [(question, a, b) for i, a in enumerate(texts) for b in texts[i + 1:]]
    picked = rng.sample(candidates, min(n, len(candidates)))
    return [{"question": q, "a": a, "b": b, "lang": detect_language(a + b)} for q, a, b in picked]


def draw(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    pairs = _run_pairs(args.run, args.n, rng) if args.run else _truthfulqa_pairs(args.n, rng)
    for i, p in enumerate(pairs, 1):
        if rng.random() < 0.5:
            p["a"], p["b"] = p["b"], p["a"]
        p["id"] = f"p{i:03d}"
    source = f"run {args.run}" if args.run else "TruthfulQA multi-true options"
    Path(args.out).write_text(json.dumps(
        {"about": f"{len(pairs)} answer pairs from {source}, seed {args.seed}. For each id "
                  "write true if the two answers give the same answer to the question "
                  "(other words, more or less detail), false otherwise, into a verdicts "
                  "file {\"p001\": true, ...}.",
         "pairs": [{k: p[k] for k in ("id", "lang", "question", "a", "b")} for p in pairs]},
        ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"wrote {len(pairs)} unlabelled pairs to {args.out}")


def _labelled(args: argparse.Namespace) -> list[dict[str, Any]]:
    if args.labelled:
        data = json.loads(Path(args.labelled).read_text("utf-8"))
        if isinstance(data, dict):  # the calibration file: {"same": [[a, b]], "different": ...}
            return ([{"a": a, "b": b, "same": True, "question": "", "lang": _lang(a)}
                     for a, b in data["same"]]
                    + [{"a": a, "b": b, "same": False, "question": "", "lang": _lang(a)}
                       for a, b in data["different"]])
        return [{"question": "", **p, "same": bool(p["same"])} for p in data]
    pairs = json.loads(Path(args.pairs).read_text("utf-8"))["pairs"]
    verdicts = json.loads(Path(args.verdicts).read_text("utf-8"))
    missing = [p["id"] for p in pairs if p["id"] not in verdicts]
    if missing:
        raise SystemExit(f"error: the verdicts file has no verdict for {', '.join(missing[:5])}"
                         f" ({len(missing)} pairs; write true/false for every id)")
    return [{**p, "same": bool(verdicts[p["id"]])} for p in pairs]


def _lang(text: str) -> str:
    from evalcore.dataset.language import detect_language

    return detect_language(text)


def _wilson(right: int, n: int) -> str:
    from evalcore.metrics.stability import wilson_interval

    low, high = wilson_interval(right, n)
    return f"{right}/{n} ({right / n:.0%}, 95% CI {low:.0%}-{high:.0%})"


def _report(name: str, pairs: list[dict[str, Any]], said: list[bool]) -> None:
    right = [s == p["same"] for s, p in zip(said, pairs)]
    parts = [f"{name}: {_wilson(sum(right), len(right))}"]
    for key, label in (("lang", None), ("same", None)):
        for value in sorted({p[key] for p in pairs}, key=str):
            sel = [r for r, p in zip(right, pairs) if p[key] == value]
            tag = value if key == "lang" else ("same pairs" if value else "different pairs")
            parts.append(f"{tag} {sum(sel)}/{len(sel)}")
    print("; ".join(parts))


async def _ask(judge: str, pairs: list[dict[str, Any]]) -> tuple[list[Optional[bool]], float]:
    from evalcore.config import load_settings
    from evalcore.providers.client import get_client
    from evalcore.providers.registry import get_model
    from evalcore.scorers.meaning import meaning_request, parse_same

    config = get_model(load_settings().models_path, judge)
    client = get_client(config)
    started = time.perf_counter()

    async def one(p: dict[str, Any]) -> Optional[bool]:
        reply = await client.chat(meaning_request(p["question"] or "(not given)", p["a"], p["b"]))
        return parse_same(reply.text) if reply.ok else None

    said = await asyncio.gather(*(one(p) for p in pairs))
    return list(said), time.perf_counter() - started


def score(args: argparse.Namespace) -> None:
    from evalcore.scorers.meaning import offline_same
    from evalcore.scorers.text import embedding_cosine_batch

    pairs = _labelled(args)
    cosines = embedding_cosine_batch([p["a"] for p in pairs], [p["b"] for p in pairs])
    _report("offline (cues + e5)", pairs, [offline_same(p["a"], p["b"], c)[0]
                                           for p, c in zip(pairs, cosines)])
    _report("e5 alone >= 0.945", pairs, [c >= 0.945 for c in cosines])
    if args.judge:
        from evalcore.providers.client import run_closing_clients

        said, seconds = run_closing_clients(_ask(args.judge, pairs))
        _report(f"judge {args.judge}", pairs, [bool(s) for s in said])
        unreadable = sum(s is None for s in said)
        yes = sum(s is True for s in said)
        print(f"judge {args.judge}: {len(pairs)} calls in {seconds:.1f} s "
              f"({seconds / len(pairs):.2f} s a call), said same {yes}, unreadable {unreadable}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("draw", help="fresh unlabelled pairs for a reviewer")
    src = d.add_mutually_exclusive_group(required=True)
    src.add_argument("--run", type=int, help="a stored stability run's open answers")
    src.add_argument("--truthfulqa", action="store_true", help="TruthfulQA options (shared)")
    d.add_argument("--n", type=int, default=40)
    d.add_argument("--seed", type=int, default=11)
    d.add_argument("--out", required=True)
    s = sub.add_parser("score", help="the routes against labels")
    s.add_argument("--labelled", help="a labelled file (calibration or a past audit)")
    s.add_argument("--pairs", help="a drawn pairs file")
    s.add_argument("--verdicts", help="the reviewer's {id: true|false}")
    s.add_argument("--judge", metavar="MODEL", help="also ask this judge model")
    args = ap.parse_args()
    if args.cmd == "score" and not (args.labelled or (args.pairs and args.verdicts)):
        ap.error("score needs --labelled FILE, or --pairs and --verdicts")
    draw(args) if args.cmd == "draw" else score(args)


if __name__ == "__main__":
    main()
