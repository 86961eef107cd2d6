"""What the repeated-answers figures cost on top of the stability report: answer groups,
semantic entropy, G-Pass@k / mG-Pass@k and judge flicker are computed from the stored
rounds (no model call), so the cost is CPU time while the report is built.

A run of M maths questions x N rounds is written straight to a fresh SQLite store
(replies alternate between phrasings and answers; a re-judging pass of S answers x 3),
then `stability_report` is timed with and without `add_repeats` (median of R).

    .venv/bin/python bench/repeats_bench.py                       # 1000 x 10, 200 re-judged
    .venv/bin/python bench/repeats_bench.py --questions 200 --rounds 50
    .venv/bin/python bench/repeats_bench.py --meaning --questions 200   # e5 grouping cost

`--meaning`: an open-answer run (5 phrasings a question, 4 of one meaning) reported with
and without grouping by meaning; the first report with it embeds every distinct reply
(cold: the model loads too), the second finds them in the process cache.
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


def seed_open(engine, questions: int, rounds: int) -> int:
    import json

    from evalcore.dataset import import_dataset, load_items
    from evalcore.store import queries

    body = "".join(json.dumps({"question": f"Describe thing {i}.", "answer": f"thing {i}"})
                   + "\n" for i in range(questions))
    ds = import_dataset(engine, body.encode(), filename="o.jsonl", name="open",
                        mapping={"question": "question", "reference": "answer",
                                 "task_type": "open", "language": "en"})
    items = load_items(engine, ds.id)
    run = queries.create_run(engine, kind="stability", dataset_id=ds.id, model="m",
                             judge="rules", rounds=rounds, status="done",
                             total=questions * rounds, done=questions * rounds,
                             config={"item_ids": [i.id for i in items]})
    forms = ["Thing {i} is a small red box.", "It is a small red box, thing {i}.",
             "Thing {i} is a large blue ball.", "Thing {i} is a red box that is small.",
             "I think thing {i} is a box, small and red."]
    calls = [{"run_id": run.id, "item_id": it.id, "round": r + 1, "stage": "answer",
              "model": "m", "prompt": "", "answer": forms[r % 5].format(i=it.idx),
              "correct": r % 5 != 2, "score": 1.0, "reason": "bench", "error": None}
             for it in items for r in range(rounds)]
    for start in range(0, len(calls), 5000):
        queries.record_calls(engine, calls[start:start + 5000])
    return int(run.id)


def meaning_cost(engine, questions: int, rounds: int) -> None:
    import os

    from evalcore.report.stability import stability_report

    run_id = seed_open(engine, questions, rounds)
    for meaning in (False, True, True):
        wall, cpu = time.perf_counter(), time.process_time()
        report = stability_report(engine, run_id, meaning=meaning)
        print(f"meaning={meaning}: wall {time.perf_counter() - wall:.2f} s, CPU "
              f"{time.process_time() - cpu:.2f} s, mean entropy "
              f"{report['summary']['semantic_entropy_mean']:.3f} "
              f"({questions} questions x {rounds} rounds, {questions * 5} distinct replies; "
              f"{os.cpu_count()} cores)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--questions", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--rejudged", type=int, default=200)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--meaning", action="store_true", help="measure grouping by meaning (e5)")
    args = p.parse_args()
    import os

    os.environ.setdefault("EVALCORE_HOME", tempfile.mkdtemp())  # a fresh e5 vector store

    from evalcore.report import repeats, stability
    from evalcore.store.db import make_engine

    home = Path(tempfile.mkdtemp())
    engine = make_engine(f"sqlite:///{home / 'bench.db'}")
    if args.meaning:
        meaning_cost(engine, args.questions, args.rounds)
        return
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
