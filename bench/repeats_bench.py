"""What the repeated-answers figures cost on top of the stability report: answer groups,
semantic entropy, G-Pass@k / mG-Pass@k and judge flicker are computed from the stored
rounds (no model call), so the cost is CPU time while the report is built.

A run of M maths questions x N rounds is written straight to a fresh SQLite store
(replies alternate between phrasings and answers; a re-judging pass of S answers x 3),
then `stability_report` is timed with and without `add_repeats` (median of R).

    .venv/bin/python bench/repeats_bench.py                       # 1000 x 10, 200 re-judged
    .venv/bin/python bench/repeats_bench.py --questions 200 --rounds 50
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def seed(engine, questions: int, rounds: int, rejudged: int) -> int:
    from evalcore.dataset import import_dataset, load_items
    from evalcore.store import queries
    from evalcore.store.tables import utcnow

    body = "".join(f'{{"question": "What is {i} + {i}?", "answer": "{2 * i}"}}\n'
                   for i in range(questions))
    ds = import_dataset(engine, body.encode(), filename="b.jsonl", name="bench",
                        mapping={"question": "question", "reference": "answer",
                                 "task_type": "math", "language": "en"})
    items = load_items(engine, ds.id)
    run = queries.create_run(engine, kind="stability", dataset_id=ds.id, model="m",
                             judge="rules", rounds=rounds, status="done",
                             total=questions * rounds, done=questions * rounds,
                             config={"item_ids": [i.id for i in items]})
    phrasings = ["The answer is {}.", "So Tom has {} apples in the end.", "{}"]
    now = utcnow()
    calls = []
    for item in items:
        right = 2 * item.idx
        for r in range(rounds):
            value = right if (item.idx + r) % 3 else right + (r % 2) + 1
            calls.append({"run_id": run.id, "item_id": item.id, "round": r + 1,
                          "stage": "answer", "model": "m", "prompt": "",
                          "answer": phrasings[r % 3].format(value), "extracted": str(value),
                          "correct": value == right, "score": float(value == right),
                          "reason": "bench", "error": None})
    for n, item in enumerate(items[:rejudged]):
        for j in (1, 2, 3):
            calls.append({"run_id": run.id, "item_id": item.id, "round": 1,
                          "stage": f"rejudge{j}:1", "model": "judge", "prompt": "",
                          "answer": "{}", "correct": (n + j) % 4 != 0, "score": 1.0,
                          "reason": "bench", "error": None, "created_at": now})
    for start in range(0, len(calls), 5000):
        queries.record_calls(engine, calls[start:start + 5000])
    return int(run.id)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--questions", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--rejudged", type=int, default=200)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()

    from evalcore.report import repeats, stability
    from evalcore.store.db import make_engine

    home = Path(tempfile.mkdtemp())
    engine = make_engine(f"sqlite:///{home / 'bench.db'}")
    run_id = seed(engine, args.questions, args.rounds, args.rejudged)
    real, real_add = repeats.add_repeats, repeats.RepeatRounds.add

    def timed(with_repeats: bool) -> float:
        # without: neither the per-round extraction nor the figures (the report as before)
        repeats.add_repeats = real if with_repeats else (lambda *a, **k: None)
        repeats.RepeatRounds.add = real_add if with_repeats else (lambda *a, **k: None)
        times = []
        for _ in range(args.repeat):
            start = time.process_time()
            stability.stability_report(engine, run_id)
            times.append(time.process_time() - start)
        repeats.add_repeats, repeats.RepeatRounds.add = real, real_add
        return statistics.median(times)

    base, full = timed(False), timed(True)
    report = stability.stability_report(engine, run_id)
    print(f"{args.questions} questions x {args.rounds} rounds, {args.rejudged} answers "
          f"re-judged x3: report CPU {base:.2f} s without, {full:.2f} s with the repeated-"
          f"answers figures (+{full - base:.2f} s, +{100 * (full - base) / base:.0f}%); "
          f"0 model calls; mean entropy {report['summary']['semantic_entropy_mean']:.3f}, "
          f"judge noise {report['summary']['judge_noise']['judge_share_of_spread']:.3f}")


if __name__ == "__main__":
    main()
