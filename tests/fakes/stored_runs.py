"""Datasets and finished runs written straight to the store with known verdicts.

For report, page and CLI tests that must not need a model server: the verdict of every
(item, round) is chosen by the test, so expected figures can be computed directly.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path

MAPPING = {"question": "question", "reference": "answer", "task_type": "math",
           "language": "en"}


def seed_dataset(engine, name: str, questions: Sequence[str], answers: Sequence[str] | None = None
                 ) -> int:
    """Import a JSON-lines dataset of `questions` (maths, answers "1", "2", ...); its id."""
    from evalcore.dataset import import_dataset

    answers = answers or [str(i + 1) for i in range(len(questions))]
    body = "\n".join(json.dumps({"question": q, "answer": a}, ensure_ascii=False)
                     for q, a in zip(questions, answers)) + "\n"
    dataset = import_dataset(engine, body.encode("utf-8"), filename=f"{name}.jsonl", name=name,
                             mapping=MAPPING, allow_duplicate=True)
    return int(dataset.id)


def seed_run(engine, dataset_id: int, verdicts: Mapping[int, Sequence[int | None]],
             rounds: int, *, model: str = "fake", kind: str = "stability",
             status: str = "done", name: str = "", answers: Mapping[int, str] | None = None
             ) -> int:
    """A run over the dataset's items at the positions in `verdicts`; per round 1 right,
    0 wrong, None a failed call (error, no verdict). Rounds beyond a list are not stored."""
    from evalcore.dataset import load_items
    from evalcore.store import queries
    from evalcore.store.tables import utcnow

    items = {item.idx: item for item in load_items(engine, dataset_id)}
    chosen = [items[pos] for pos in sorted(verdicts)]
    start = utcnow() - timedelta(seconds=30)
    finished = status in queries.FINISHED
    calls = []
    for item in chosen:
        for r, v in enumerate(verdicts[item.idx]):
            failed = v is None
            calls.append({
                "run_id": None, "item_id": item.id, "round": r + 1, "stage": "answer",
                "model": model, "prompt": f"Q: {item.question}",
                "answer": None if failed else (answers or {}).get(item.idx, f"answer {item.idx}.{r + 1}"),
                "correct": None if failed else bool(v), "score": None if failed else float(v),
                "reason": None if failed else f"reason {item.idx}.{r + 1}",
                "error": "HTTP 500 from server" if failed else None,
                "latency_ms": 10.0 + r, "prompt_tokens": 5, "completion_tokens": 3,
                "attempts": 3 if failed else 1})
    spec = {"kind": kind, "dataset": str(dataset_id), "model": model, "rounds": rounds,
            "judge": "rules"}
    run = queries.create_run(
        engine, kind=kind, dataset_id=dataset_id, model=model, judge="rules", rounds=rounds,
        status=status, name=name, total=len(chosen) * rounds, done=len(calls),
        errors=sum(1 for c in calls if c["error"]), started_at=start,
        finished_at=utcnow() if finished else None, heartbeat_at=utcnow(),
        config={"spec": spec, "item_ids": [i.id for i in chosen],
                "models": {model: {"name": model, "kind": "openai",
                                   "api_key_env": "FAKE_API_KEY"}}})
    for call in calls:
        call["run_id"] = run.id
    queries.record_calls(engine, calls)
    return int(run.id)


def seed_robustness_run(engine, questions: Sequence[str], clean: Mapping[int, Sequence[int]],
                        attacked: Mapping[int, Sequence[int]], rounds: int, *,
                        level: str = "char", model: str = "fake", name: str = "",
                        dataset_ids: tuple[int, int] | None = None, status: str = "done"
                        ) -> tuple[int, tuple[int, int]]:
    """A robustness run over clean questions and their attacked copies at `level`: the
    verdicts of position p are `clean[p]` and `attacked[p]`. The attack pairs are written
    into the run's spec as the runner freezes them (attack item id = the position). Pass
    `dataset_ids` (clean, attacked) from an earlier call to share the items; returns
    (run id, dataset ids)."""
    from evalcore.dataset import load_items
    from evalcore.store import queries

    if dataset_ids is None:
        dataset_ids = (seed_dataset(engine, f"clean-{level}-{model}-{name}", questions),
                       seed_dataset(engine, f"attacked-{level}-{model}-{name}",
                                    [f"{q} (attacked)" for q in questions]))
    clean_items, attacked_items = (load_items(engine, d) for d in dataset_ids)
    verdicts = {**{c.idx: clean[c.idx] for c in clean_items if c.idx in clean},
                **{len(questions) + a.idx: attacked[a.idx] for a in attacked_items
                   if a.idx in attacked}}
    run_id = seed_run(engine, dataset_ids[0], {p: v for p, v in verdicts.items()
                                               if p < len(questions)},
                      rounds, model=model, kind="robustness", status=status, name=name)
    calls = [{"run_id": run_id, "item_id": a.id, "round": r + 1, "stage": "answer",
              "model": model, "prompt": a.question, "answer": f"attacked {a.idx}",
              "correct": bool(v), "score": float(v), "latency_ms": 12.0, "prompt_tokens": 6,
              "completion_tokens": 3}
             for a in attacked_items if a.idx in attacked for r, v in enumerate(attacked[a.idx])]
    queries.record_calls(engine, calls)
    run = queries.get_run(engine, run_id)
    config = dict(run.config)
    config["spec"] = {**config["spec"], "extra": {
        "attack_set_ids": [0], "pairs": [[c.idx, c.id, a.id, 0, level]
                                         for c, a in zip(clean_items, attacked_items)
                                         if c.idx in clean and a.idx in attacked]}}
    config["item_ids"] = config["item_ids"] + [a.id for a in attacked_items if a.idx in attacked]
    queries.update_run(engine, run_id, config=config)
    return run_id, dataset_ids


def scipy_paired_p(rates_a: Sequence[float], rates_b: Sequence[float]) -> float:
    """The paired test's p-value straight from scipy, by the documented rule of
    `metrics.robustness.paired_rate_test`: unchanged pairs dropped, exact distribution
    when at most 50 changed and no two |differences| tie, else the normal approximation."""
    from fractions import Fraction

    from scipy.stats import wilcoxon

    diffs = [Fraction(b).limit_denominator(1000) - Fraction(a).limit_denominator(1000)
             for a, b in zip(rates_a, rates_b)]
    moved = [d for d in diffs if d != 0]
    sizes = [abs(d) for d in moved]
    method = "exact" if len(moved) <= 50 and len(set(sizes)) == len(sizes) else "approx"
    return float(wilcoxon([float(d) for d in moved], method=method).pvalue)


def seed_bbq_run(engine, shared: Path, replies: Sequence[str], n: int = 12,
                 extracted: Mapping[int, str] | None = None) -> int:
    """A finished fairness run over the first `n` shared BBQ Physical_appearance items,
    answers cycling through `replies`; `extracted` stores an option for some positions
    (as the scorer does). Skips the test when the shared file is missing."""
    from evalcore.dataset import import_dataset, load_items
    from evalcore.store import queries
    from evalcore.store.tables import utcnow
    from tests.conftest import require

    source = shared / "bbq" / "Physical_appearance.jsonl"
    require(source.is_file(), f"{source} not found")
    head = b"".join(source.read_bytes().splitlines(keepends=True)[:n])
    dataset = import_dataset(engine, head, filename="bbq_head.jsonl", name="bbq-head",
                             format="bbq")
    items = load_items(engine, dataset.id)
    run = queries.create_run(engine, kind="fairness", dataset_id=dataset.id, model="fake",
                             rounds=1, status="done", total=len(items), done=len(items),
                             finished_at=utcnow(), config={"item_ids": [i.id for i in items]})
    queries.record_calls(engine, [
        {"run_id": run.id, "item_id": item.id, "round": 1, "stage": "answer", "model": "fake",
         "prompt": item.question, "answer": replies[k % len(replies)],
         "extracted": (extracted or {}).get(k)}
        for k, item in enumerate(items)])
    return int(run.id)


def end_run(engine, run_id: int, status: str = "done", error: str | None = None) -> None:
    """End a queued run as its worker would: claim its job and finish it with `status`
    (the job owns a run's state; `store.run_state` derives the run's status from it)."""
    from evalcore.store import jobs

    job = jobs.claim_job(engine, "test-worker", job_id=int(jobs.run_job(engine, run_id).id))
    jobs.finish_job(engine, jobs.Fence(int(job.id), int(job.token)), status, error=error)
