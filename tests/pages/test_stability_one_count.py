"""A stability run's per-question figures are counted once: the 0..N distribution and
the stability classes the Stability page shows, the ones `runs show --json` prints and
the run's result (`report.run_figures`: what compare, the leaderboard and the gate read)
are the same numbers, for a judged run whose judge failed on some rounds (a judge error
is a round without a verdict everywhere, not a wrong answer in some views)."""
from __future__ import annotations

import json
import re
from pathlib import Path

from tests.fakes.stored_runs import seed_dataset
from tests.pages.helpers import run_page

REPO = Path(__file__).resolve().parents[2]
ROUNDS = 3
JUDGE_FAILED = "judge error: no 0/1 verdict in judge reply: 'maybe'"
# per item, per round: 1 / 0 the judge's verdict, "judge" a judge reply without a
# verdict, "http" a judge call that failed, "answer" an answer call that failed
ROUNDS_OF = [[1, 1, 1], [1, "judge", 1], [0, "http", 1], ["answer", 1, 0], [0, 0, 0],
             [1, 0, 1], [1, 1, 0], ["judge", "judge", "judge"]]


def _judged_run(engine) -> int:  # type: ignore[no-untyped-def]
    """A finished stability run judged by a model, with the rounds of `ROUNDS_OF`."""
    from evalcore.dataset import load_items
    from evalcore.store import queries
    from evalcore.store.tables import utcnow

    ds = seed_dataset(engine, "judged", [f"What is {i} + 2?" for i in range(len(ROUNDS_OF))])
    items = load_items(engine, ds)
    spec = {"kind": "stability", "dataset": str(ds), "model": "fake", "rounds": ROUNDS,
            "judge": "judge-model"}
    run = queries.create_run(
        engine, kind="stability", dataset_id=ds, model="fake", judge="judge-model",
        rounds=ROUNDS, status="done", total=len(items) * ROUNDS,
        done=len(items) * ROUNDS, finished_at=utcnow(),
        config={"spec": spec, "item_ids": [i.id for i in items],
                "models": {m: {"name": m, "kind": "openai", "api_key_env": "FAKE_API_KEY"}
                           for m in ("fake", "judge-model")}})
    calls = []
    for item, rounds in zip(items, ROUNDS_OF):
        for rnd, outcome in enumerate(rounds, start=1):
            base = {"run_id": run.id, "item_id": item.id, "round": rnd, "prompt": "",
                    "latency_ms": 10.0, "prompt_tokens": 5, "completion_tokens": 3}
            failed_answer = outcome == "answer"
            calls.append({**base, "stage": "answer", "model": "fake",
                          "answer": None if failed_answer else f"answer {rnd}",
                          "error": "HTTP 500 from server" if failed_answer else None})
            if failed_answer:
                continue
            verdict = outcome if outcome in (0, 1) else 0
            calls.append({**base, "stage": "judge", "model": "judge-model",
                          "answer": None if outcome == "http" else '{"score": 1}',
                          "correct": bool(verdict), "score": float(verdict),
                          "reason": ("judge error: HTTP 500" if outcome == "http"
                                     else JUDGE_FAILED if outcome == "judge" else "ok"),
                          "error": "HTTP 500 from server" if outcome == "http" else None})
    queries.record_calls(engine, calls)
    return int(run.id)


def _page_bins(at) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """{"j": questions} of the Stability page's distribution cards, "incomplete" too."""
    html = next(md.value for md in at.markdown if "right</div>" in md.value)
    cards = re.findall(r'font-size:0.8em">([^<]+)</div><div[^>]*>(\d+)</div>', html)
    return {label.split("/")[0]: int(count) for label, count in cards}


def test_page_cli_json_and_result_model_count_the_same_questions(page_env, engine,
                                                                  capsys) -> None:
    from evalcore.cli import main
    from evalcore.metrics.stability import summary_from_counts
    from evalcore.report.run_figures import load_outcomes, run_figures

    run_id = _judged_run(engine)
    # the run's result: the counts every figure of the run is computed from
    outcomes = load_outcomes(engine, run_id)
    model = summary_from_counts(outcomes.tallies(), ROUNDS)
    figures = run_figures(engine, run_id)
    assert figures["distribution"] == [model.distribution_counts[str(j)]
                                       for j in range(ROUNDS + 1)]
    # item 1 (two right, one judge reply without a verdict) sits in no bin; the last
    # item (the judge never gave a verdict) has no class
    assert model.distribution_counts == {"0": 1, "1": 0, "2": 2, "3": 1}
    assert (model.incomplete, model.unanswered) == (4, 1)
    assert model.classes == {"perfect": 2, "high": 0, "unstable": 4, "severe": 0,
                             "failed": 1}

    assert main(["runs", "show", str(run_id), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    report = shown["report"]
    assert report["distribution"]["distribution_counts"] == model.distribution_counts
    assert report["distribution"]["incomplete"] == model.incomplete
    assert report["summary"]["classes"] == model.classes
    assert report["summary"]["errored_rounds"] == model.errored_rounds == 6
    metrics = {m["name"]: m["value"] for m in shown["metrics"]}
    rated = sum(model.classes.values())
    assert metrics["perfect_share"] == model.distribution_counts[str(ROUNDS)] / rated
    assert metrics["flaky_share"] == (model.classes["high"] + model.classes["unstable"]
                                      + model.classes["severe"]) / rated
    assert metrics["mean_success_rate"] == report["summary"]["mean"] == model.mean

    at = run_page(str(REPO / "pages" / "stability.py"), {"stability.run_id": run_id})
    assert _page_bins(at) == {**model.distribution_counts, "incomplete": model.incomplete}
    # the class chart's line: "2 perfect (100%), 0 high (>= 80%), ..."
    line = next(c.value for c in at.caption if re.match(r"\d+ perfect ", c.value))
    shown_classes = {part.split()[1]: int(part.split()[0]) for part in line.split(", ")}
    assert shown_classes == model.classes
    std = next(m.value for m in at.metric if m.label == "Std of rates")
    assert std == f"{report['summary']['std']:.3f}"
