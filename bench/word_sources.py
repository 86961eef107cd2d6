"""Precision of word swaps by candidate source, from every blind-judged English item (#25 item 5).

    .venv/bin/python bench/word_sources.py            # table on stdout, JSON with --json

Re-attacks the items of the three blind English samples (seeds 7, 11, 13: their key
files) with the current code (attack seed 1, no e5: the guard only removes items) and
tabulates each swap the reviewers saw and the re-attack still makes by its candidate
source (reviewed table, contraction or spelling phrase, listed phrase, WordNet), part of
speech and place (question, right option, distractor). A swap of an item judged "keeps"
kept the meaning; in an item judged "changes", the swaps the reviewer's reason names
failed and the others are left out (not judged alone).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "datasets" / "trusted-evaluation"
FILES = {"CODAH": "CODAHtest.csv", "TruthfulQA": "TruthfulQASinglectest.csv"}
AUDITS = ROOT / "docs" / "audits"
SAMPLES = [("2026-11-26/word_key_en.json", "2026-11-26/word_verdicts_en.json"),
           ("2026-11-26/word_key_en_fresh.json", "2026-11-26/word_verdicts_en_fresh.json"),
           ("2026-11-27/word_key_en_s4.json", "2026-11-27/word_verdicts_en_s4.json")]


def source(rep: dict) -> str:
    """The candidate source of one replacement's details."""
    if rep.get("kind") == "phrase":
        before, after = rep["before"].lower(), rep["after"].lower()
        squash = lambda s: re.sub(r"[\s'’]", "", s)
        if "'" in before + after or "’" in before + after or " " not in before + after:
            return "contraction/spelling"
        return "listed phrase" if squash(before) != squash(after) else "contraction/spelling"
    return "table" if rep.get("sense") == "table" else "wordnet"


def place(where: str, right: set[int]) -> str:
    places = set()
    for part in where.split(", "):
        if part == "question":
            places.add("question")
        else:
            places.add("right option" if int(part.split()[1]) in right else "distractor")
    return "+".join(sorted(places))


def _blamed(pairs: list, verdict: dict) -> str | None:
    """The swap a "changes" reason names first (reasons name the failing swap, then may
    list the others as fine)."""
    if verdict["verdict"] != "changes":
        return None
    why = verdict["why"].lower()
    found = [(m.start(), before) for before, _, _ in pairs
             if (m := re.search(rf"(?<![a-z]){re.escape(before.lower())}(?![a-z])", why))]
    return min(found)[1] if found else None


def rows() -> list[dict]:
    from evalcore.dataset import parse_dataset
    from evalcore.perturb.attack import _local_attack, right_options

    params = {"replacements": None, "min_similarity": 0.55}
    data = {name: parse_dataset(DATA / f).questions for name, f in FILES.items()}
    out = []
    for key_file, verdict_file in SAMPLES:
        keys = json.loads((AUDITS / key_file).read_text(encoding="utf-8"))
        verdicts = {v["id"]: v for v in json.loads((AUDITS / verdict_file).read_text(encoding="utf-8"))}
        for k in keys:
            q = data[k["set"]][k["row"] - 1]
            _, _, _, details = _local_attack(q, "word", 1, params)
            reps = {(r["before"].lower(), r["after"].lower()): r for r in details["replacements"]}
            v = verdicts[k["id"]]
            right = set(right_options(q))
            blamed = _blamed(k["pairs"], v)
            judged = {(b.lower(), a.lower()) for b, a, _ in k["pairs"]}
            new = sum(1 for pair in reps if pair not in judged)
            for before, after, where in k["pairs"]:
                rep = reps.get((before.lower(), after.lower()))
                verdict = ("keeps" if v["verdict"] == "keeps"
                           else "fails" if before == blamed else "unjudged")
                out.append({"sample": key_file, "id": k["id"], "pair": f"{before} -> {after}",
                            "where": place(where, right),
                            "source": source(rep) if rep else "gone",
                            "pos": (rep or {}).get("pos") or "-", "verdict": verdict,
                            "why": v["why"] if verdict == "fails" else "",
                            "new_swaps": new, "swaps_now": len(reps)})
    return out


def table(data: list[dict], by: tuple[str, ...]) -> list[tuple]:
    counts: dict[tuple, Counter] = defaultdict(Counter)
    for r in data:
        if r["verdict"] != "unjudged":
            counts[tuple(r[b] for b in by)][r["verdict"]] += 1
    return sorted(((k, c["keeps"], c["fails"]) for k, c in counts.items()),
                  key=lambda t: -(t[1] + t[2]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="every swap as JSON lines")
    args = parser.parse_args()
    data = rows()
    if args.json:
        for r in data:
            print(json.dumps(r))
        return
    for by in (("source",), ("source", "where"), ("source", "pos"), ("source", "pos", "where")):
        print(f"\n| {' | '.join(by)} | swaps | keeps | fails | precision |")
        for k, keeps, fails in table(data, by):
            n = keeps + fails
            print(f"| {' | '.join(k)} | {n} | {keeps} | {fails} | {keeps / n:.1%} |")
    items: dict[tuple, list[dict]] = defaultdict(list)
    for r in data:
        items[(r["sample"], r["id"])].append(r)
    attacked = [rs for rs in items.values() if rs[0]["swaps_now"]]
    failing = [rs for rs in attacked
               if any(r["verdict"] == "fails" and r["source"] != "gone" for r in rs)]
    unjudged = [rs for rs in attacked if rs not in failing and rs[0]["new_swaps"]]
    print(f"\njudged items {len(items)}; still attacked {len(attacked)}; with a failed swap "
          f"still made {len(failing)}; with a swap no reviewer saw {len(unjudged)}; "
          f"item precision on the judged swaps {1 - len(failing) / max(1, len(attacked)):.1%}")
    gone = sum(1 for r in data if r["source"] == "gone")
    print(f"\nswaps no longer made by the current code: {gone} of {len(data)}")


if __name__ == "__main__":
    main()
