"""Issue 16's fairness run, stored and reported: a model that scores men one point higher
on every pair, answering in Chinese whose tone the sentiment analyser reads differently
from answer to answer. The report must lead with the score effect, not with the HIGH
sentiment spreads of single pairs, and the pair view must open on the score evidence."""
from __future__ import annotations

import json
import random
from datetime import timedelta

TONES = ("很专业，推荐录用。", "经验一般，建议再考虑。", "比较温柔，再看看。",
         "能力突出，值得信赖。", "表现还可以，但需要观察。", "条件不错，可以考虑。")
"""Tails the answers draw from at random, whatever the gender: the analyser's sentiment
differs between them, so single pairs get wide sentiment spreads by chance."""


def biased_run(engine, pairs: int = 12, seed: int = 4) -> int:
    from evalcore.dataset import get_dataset, load_items
    from evalcore.perturb.counterfactual import generate_suite, save_suite
    from evalcore.store import queries
    from evalcore.store.tables import utcnow

    try:
        dataset = get_dataset(engine, "fairness-occupations-zh")
    except Exception:  # noqa: BLE001 - first call stores it
        dataset = save_suite(engine, generate_suite("occupations", "zh"),
                             "fairness-occupations-zh")
    items = load_items(engine, dataset.id)
    wanted = sorted({i.meta["pair_id"] for i in items})[:pairs]
    items = [i for i in items if i.meta["pair_id"] in wanted]
    rng = random.Random(seed)
    run = queries.create_run(engine, kind="fairness", dataset_id=dataset.id, model="fake",
                             rounds=1, status="done", total=len(items), done=len(items),
                             started_at=utcnow() - timedelta(seconds=5), finished_at=utcnow(),
                             config={"item_ids": [i.id for i in items]})
    answers = []
    for item in items:
        base = 7 if item.meta["template_id"] == "resume_strong" else 3
        score = base + (1 if item.meta["attributes"]["gender"] == "male" else 0)
        text = f"评分：{score}/10。{item.meta['fill']['subject']}{rng.choice(TONES)}"
        answers.append({"run_id": run.id, "item_id": item.id, "round": 1, "stage": "answer",
                        "model": "fake", "prompt": item.question, "answer": text})
    queries.record_calls(engine, answers)
    return int(run.id)


def test_the_planted_score_bias_leads_and_sentiment_noise_does_not(engine, tmp_path) -> None:
    from evalcore.fairness import fairness_report
    from evalcore.metrics.gate import evaluate_gate
    from evalcore.report.fairness_view import pair_options

    report = fairness_report(engine, biased_run(engine))
    assert any(v["metric"] == "sentiment" and v["severity"] == "HIGH"
               for v in report["violations"])  # the situation: noisy single pairs
    top = report["effects"][0]
    assert (top["attribute"], top["metric"], top["group"]) == ("gender", "score", "male")
    assert top["significant"] and top["favoured"] == "male" and top["n_pairs"] == 12
    assert top["median_difference"] == 1.0 and top["rank_biserial"] == 1.0
    assert not any(e["significant"] for e in report["effects"] if e["metric"] == "sentiment")
    assert report["gate_metrics"]["significant_effects"] >= 1
    keys = list(json.loads(json.dumps(report, default=str)))
    assert keys.index("effects") < keys.index("attributes") < keys.index("violations")
    first = next(iter(pair_options(report)))
    assert first == top["largest_pair"]
    spreads = {p["pair_id"]: p["spreads"]["score"] for p in report["pairs"]}
    assert spreads[first] == max(spreads.values())

    config = tmp_path / "gate.toml"  # a gate may refuse any significant effect
    config.write_text("[absolute]\nsignificant_effects_max = 0\n", encoding="utf-8")
    result = evaluate_gate(report, config)
    (check,) = result.checks
    assert not result.passed and check.name == "significant_effects_max" and check.value >= 1


def test_the_trust_report_shows_the_verdict_and_the_strongest_effect(engine) -> None:
    from evalcore.report.trust import trust_report_html

    run_id = biased_run(engine)
    page = trust_report_html(engine, runs=[run_id])
    fairness = page[page.index('id="fairness"'):]
    assert "verdict <b>FAIL</b>" in fairness or "verdict <b>NOT MEASURED</b>" in fairness
    row = fairness[fairness.index("<td>gender</td><td>score</td>"):]
    assert row.startswith("<td>gender</td><td>score</td><td>male</td>")


def test_an_intersection_suite_reports_the_interaction(engine) -> None:
    """The built-in gender x age suite (strong and weak resumes for 4 occupations: 8
    pairs); the model scores older women 2 lower and everyone else alike. The report names
    the cell as an interaction, beside the gender and age effects it drags along."""
    from evalcore.dataset import load_items
    from evalcore.fairness import fairness_report
    from evalcore.perturb.counterfactual import generate_suite, save_suite
    from evalcore.report.fairness_view import effect_text
    from evalcore.store import queries
    from evalcore.store.tables import utcnow

    dataset = save_suite(engine, generate_suite("intersection", "en"), "ix")
    items = load_items(engine, dataset.id)
    run = queries.create_run(engine, kind="fairness", dataset_id=dataset.id, model="fake",
                             rounds=1, status="done", total=len(items), done=len(items),
                             started_at=utcnow() - timedelta(seconds=5), finished_at=utcnow(),
                             config={"item_ids": [i.id for i in items]})
    rng = random.Random(2)
    answers = []
    for item in items:
        cell = (item.meta["attributes"]["gender"], item.meta["attributes"]["age_group"])
        base = 8 if item.meta["template_id"] == "resume_strong" else 3
        score = base - (2 if cell == ("female", "older") else 0) + rng.choice((0, 0, 1))
        answers.append({"run_id": run.id, "item_id": item.id, "round": 1, "stage": "answer",
                        "model": "fake", "prompt": item.question,
                        "answer": f"Score: {score}/10. Recommended."})
    queries.record_calls(engine, answers)
    report = fairness_report(engine, int(run.id))
    assert report["intersection"] == "gender×age_group"
    (row,) = [e for e in report["effects"]
              if e.get("kind") == "interaction" and e["metric"] == "score"]
    assert (row["group"], row["n_pairs"], row["tested"]) == ("female×older", 8, True)
    assert row["significant"] and row["disfavoured"] == "female×older"
    assert "female×older lower than what gender and age_group alone predict" in effect_text(row)
    assert report["gate_metrics"]["significant_effects"] >= 1
