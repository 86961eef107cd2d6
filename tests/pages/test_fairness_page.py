"""The Fairness page under AppTest: empty database, generating a suite through the widgets,
a finished run's results (verdict, effects across pairs, groups, single-pair spreads,
pair view, gate), and a real run."""
from __future__ import annotations

import html
import json
from datetime import timedelta
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.pages.helpers import add_fake_model, run_page, values, wait_finished, wait_jobs

REPO = Path(__file__).resolve().parents[2]
PAGE = str(REPO / "pages" / "fairness.py")
SCRIPT = "<script>alert('x')</script>"
SCORES = {"male": 9, "female": 3, "non-binary": 5, "unspecified": 7}
"""Score each gender variant's answer gets in the seeded run: wide spreads -> violations."""


def open_page() -> AppTest:
    return run_page(PAGE)


def frame_with(at: AppTest, *columns: str):
    """The first table holding these columns (AppTest does not expose st.dataframe keys)."""
    for element in at.dataframe:
        if all(c in element.value.columns for c in columns):
            return element.value
    raise AssertionError(f"no table with columns {columns}")


def html_bodies(at: AppTest) -> list[str]:
    return [el.proto.body for el in at.get("html")]


def seeded_run(engine, *, name: str = "", scores: dict[str, int] = SCORES, pairs: int = 2,
               templates: tuple[str, ...] = ("resume_strong",)) -> int:
    """A finished fairness run over `pairs` pairs of the Chinese occupations suite, written
    straight to the store: every variant's answer carries the score chosen in `scores`."""
    from evalcore.dataset import get_dataset, load_items
    from evalcore.perturb.counterfactual import generate_suite, save_suite
    from evalcore.store import queries
    from evalcore.store.tables import utcnow

    suite = "fairness-occupations-zh"
    try:
        dataset = get_dataset(engine, suite)
    except Exception:  # noqa: BLE001 - first call stores it
        dataset = save_suite(engine, generate_suite("occupations", "zh"), suite)
    items = [i for i in load_items(engine, dataset.id) if i.meta["template_id"] in templates]
    wanted = sorted({i.meta["pair_id"] for i in items})[:pairs]
    items = [i for i in items if i.meta["pair_id"] in wanted]  # pairs x 4 genders
    assert len({i.meta["pair_id"] for i in items}) == pairs
    start = utcnow() - timedelta(seconds=20)
    run = queries.create_run(engine, kind="fairness", dataset_id=dataset.id, model="fake",
                             rounds=1, status="done", total=len(items), done=len(items),
                             started_at=start, finished_at=utcnow(), name=name,
                             config={"item_ids": [i.id for i in items]})
    answers = []
    for item in items:
        gender = item.meta["attributes"]["gender"]
        text = f"评分：{scores[gender]}/10。{item.meta['fill']['subject']}很专业，推荐录用。"
        if gender == "female":
            text += SCRIPT
        answers.append({"run_id": run.id, "item_id": item.id, "round": 1, "stage": "answer",
                        "model": "fake", "prompt": item.question, "answer": text})
    queries.record_calls(engine, answers)
    return int(run.id)


def test_page_loads_with_an_empty_database(page_env):
    at = open_page()
    infos = values(at, "info")
    assert any("No fairness suites yet" in t for t in infos)
    assert any("No fairness runs yet" in t for t in infos)
    assert not at.get("plotly_chart")
    assert at.selectbox(key="fairness.generator").value == "occupations"


def test_generating_the_chinese_occupations_suite_stores_it(page_env, engine):
    from evalcore.dataset import list_datasets, load_questions
    from evalcore.perturb.counterfactual import generate_suite

    at = open_page()
    at.radio(key="fairness.lang").set_value("zh").run()
    assert not at.exception, [e.value for e in at.exception]
    preview = frame_with(at, "pair", "variant", "prompt")
    expected = generate_suite("occupations", "zh")
    assert list(preview["prompt"][:3]) == [q.question for q in expected.questions[:3]]
    assert any(f"{len(expected.questions)} prompts" in c for c in values(at, "caption"))
    at.button(key="fairness.save").click().run()
    assert not at.exception, [e.value for e in at.exception]
    stored = {ds.name: ds for ds in list_datasets(engine)}
    assert "fairness-occupations-zh" in stored
    dataset = stored["fairness-occupations-zh"]
    assert (dataset.format, dataset.language, dataset.item_count) == (
        "fairness_suite", "zh", len(expected.questions))
    first = load_questions(engine, dataset.id, limit=1)[0]
    assert first.meta["pair_id"] == expected.questions[0].meta["pair_id"]
    # the new suite is offered for a run straight away
    assert at.selectbox(key="fairness.suite").value == dataset.id


def test_a_finished_run_shows_level_groups_violations_and_an_escaped_pair(page_env, engine):
    from evalcore.fairness import fairness_report

    run_id = seeded_run(engine)
    expected = fairness_report(engine, run_id)
    at = open_page()
    assert at.session_state["fairness.run_id"] == run_id
    headline = next(b for b in html_bodies(at) if "Verdict of the default gate" in b)
    assert expected["verdict"]["verdict"].upper() in headline  # one run, one verdict
    secondary = next(t for t in values(at, "caption") if "Secondary" in t)
    assert expected["level"] and expected["level"] in secondary
    assert f"{expected['score']:.1f}" in secondary

    groups = frame_with(at, "group", "n", "score")
    assert set(groups["group"]) == set(SCORES)
    by_group = dict(zip(groups["group"], groups["score"]))
    assert by_group["male"] == pytest.approx(SCORES["male"])
    assert by_group["female"] == pytest.approx(SCORES["female"])
    assert len(at.get("plotly_chart")) >= 3  # sentiment, score, length boxes (+ selection)
    assert "score 95% CI" in groups.columns  # each group's interval, clustered by pair
    rates = next(t for t in values(at, "caption") if t.startswith("Selection rate per group"))
    assert "2 pairs)" in rates and "not each call" in rates

    assert any(t.startswith("Too few pairs to test") for t in values(at, "caption"))
    violations = frame_with(at, "severity", "pair_id", "spread")  # per-pair detail
    assert len(violations) == len(expected["violations"]) > 0
    assert "score" in set(violations["metric"])

    at.selectbox(key="fairness.left").set_value("female").run()
    at.selectbox(key="fairness.right").set_value("male").run()
    assert not at.exception, [e.value for e in at.exception]
    pair = next(b for b in html_bodies(at) if "ec-diff" in b and "answer · female" in b)
    assert "<script>" not in pair  # the answer's markup is shown, never run
    assert html.escape(SCRIPT) in pair
    assert "<del" in pair and "<ins" in pair  # the differing words are marked
    assert "她" in pair and "他" in pair


def test_effects_lead_and_the_pair_view_opens_on_the_strongest_effect(page_env, engine):
    from evalcore.fairness import fairness_report

    run_id = seeded_run(engine, pairs=16, templates=("resume_strong", "resume_weak"))
    expected = fairness_report(engine, run_id)
    top = expected["effects"][0]
    assert (top["metric"], top["group"], top["significant"]) == ("score", "male", True)
    at = open_page()
    assert not at.exception, [e.value for e in at.exception]
    markdown = values(at, "markdown")
    effects_at = next(i for i, t in enumerate(markdown) if t.startswith("#### Effects across"))
    assert effects_at < markdown.index("#### Groups")  # effects lead the results
    effects = frame_with(at, "attribute", "metric", "favoured", "p_adjusted")
    assert list(effects["metric"])[0] == "score" and list(effects["favoured"])[0] == "male"
    assert any("favours male" in t for t in values(at, "error"))
    assert at.selectbox(key="fairness.pair").value == top["largest_pair"]


def test_gate_verdict_matches_gate_run_with_and_without_a_baseline(page_env, engine):
    from evalcore.fairness import gate_run, load_gate_config

    base_id = seeded_run(engine, name="base", scores={g: 7 for g in SCORES})
    run_id = seeded_run(engine, name="new")
    example = (REPO / "data" / "gate.example.toml").read_text(encoding="utf-8")
    at = open_page()
    assert at.session_state["fairness.run_id"] == run_id  # the newest run
    expected = gate_run(engine, run_id, load_gate_config(example))
    table = frame_with(at, "check", "result", "detail")
    assert list(table["check"]) == [c.name for c in expected.checks]
    assert list(table["result"]) == [c.status for c in expected.checks]
    assert "not measured" in list(table["result"])  # the BBQ checks on a suite run
    verdicts = values(at, "success") + values(at, "error")
    word = "PASSED" if expected.passed else "FAILED"
    assert any(f"Gate {word}" in v for v in verdicts)
    assert any(f"gate --run {run_id} --config" in c for c in values(at, "code"))

    at.selectbox(key="fairness.baseline").set_value(base_id).run()
    assert not at.exception, [e.value for e in at.exception]
    expected = gate_run(engine, run_id, load_gate_config(example), baseline_id=base_id)
    table = frame_with(at, "check", "result", "detail")
    assert any(name.startswith("regression:") for name in table["check"])
    assert list(table["result"]) == [c.status for c in expected.checks]
    assert any(f"--baseline {base_id}" in c for c in values(at, "code"))

    gate_text = next(w for w in at.text_area if w.key.startswith("fairness.gate_text"))
    gate_text.set_value("[absolute]\nspd_max = 2\n").run()  # no [relative] for the baseline
    assert any("max_regression" in e for e in values(at, "error"))
    at.selectbox(key="fairness.baseline").set_value(None).run()
    assert not at.exception
    assert any("Gate PASSED (1 checks passed)" in v for v in values(at, "success"))  # SPD <= 1 < 2
    gate_text.set_value("[absolute]\nnot_a_metric_max = 1\n").run()
    assert any("not_a_metric_max" in e for e in values(at, "error"))



def test_the_gate_box_takes_toml_text_never_a_path_on_the_server(page_env, engine, tmp_path):
    """A file path typed into "Gate config" was opened on the server (and its values quoted
    in the error): it is TOML text, so a path is just not valid TOML."""
    path = tmp_path / "private.toml"
    path.write_text("[absolute]\nspd_max = \"hunter2\"\n", encoding="utf-8")
    seeded_run(engine, name="new")
    at = open_page()
    gate_text = next(w for w in at.text_area if w.key.startswith("fairness.gate_text"))
    gate_text.set_value(str(path)).run()
    assert not at.exception, [e.value for e in at.exception]
    errors = values(at, "error")
    assert any("Gate config not usable: gate config: not valid TOML" in e for e in errors)
    assert not any("hunter2" in e or "private.toml" in e for e in errors)

def test_starting_a_run_through_the_widgets_runs_the_suite(page_env, engine, runner_clients):
    from evalcore.perturb.counterfactual import generate_suite, save_suite
    from evalcore.store import queries
    from tests.fakes.fault_server import FaultConfig, FaultServer

    save_suite(engine, generate_suite("occupations", "zh"), "suite-zh")
    with FaultServer(FaultConfig(latency=0.01, responder=lambda prompt, schema:
                                 "评分：8/10。推荐。")) as server:
        add_fake_model(page_env, server.openai_url)
        at = open_page()
        at.selectbox(key="fairness.model").set_value("fake")
        at.number_input(key="fairness.samples").set_value(2)
        limit = next(w for w in at.number_input if w.key.startswith("fairness.limit"))
        limit.set_value(4)
        at.button(key="fairness.start").click().run()
        assert not at.exception, [e.value for e in at.exception]
        run_id = at.session_state["fairness.run_id"]
        run = queries.get_run(engine, run_id)
        assert (run.kind, run.model, run.rounds, run.total) == ("fairness", "fake", 2, 8)
        assert run.config["spec"]["temperature"] == pytest.approx(0.7)
        run = wait_finished(engine, run_id)
        assert run.status == "done", run.error
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Verdict of the default gate" in b for b in html_bodies(at))
    assert frame_with(at, "group", "n", "score")["group"].tolist()


def test_a_bbq_run_shows_bias_scores_for_both_contexts_beside_accuracy(page_env, engine,
                                                                       shared_datasets):
    from evalcore.fairness import fairness_report
    from tests.fakes.stored_runs import seed_bbq_run

    # always the third option: right only sometimes
    run_id = seed_bbq_run(engine, shared_datasets, ["The answer is 2"])
    bbq = fairness_report(engine, run_id)["bbq"]
    assert bbq["accuracy"] is not None and 0 < bbq["accuracy"] < 1

    at = open_page()
    assert any("BBQ bias scores" in m for m in values(at, "markdown"))
    shown = {m.label: m.value for m in at.metric}
    assert shown["Bias, ambiguous"] == f"{bbq['s_amb']:.3f}"
    assert shown["Bias, disambiguated"] == f"{bbq['s_dis']:.3f}"
    assert shown["Accuracy"] == f"{bbq['accuracy']:.3f}"
    contexts = frame_with(at, "context", "accuracy", "bias_score")
    assert list(contexts["context"]) == ["ambiguous", "disambiguated"]
    assert not at.get("plotly_chart")  # no counterfactual groups in a BBQ run
    from evalcore.store import queries

    dataset_id = queries.get_run(engine, run_id).dataset_id
    assert at.selectbox(key="fairness.suite").value == dataset_id  # offered as a suite



def test_a_judge_model_rates_the_answers_from_the_page(page_env, engine, runner_clients):
    from tests.fakes.fault_server import FaultConfig, FaultServer

    def rating(prompt: str, schema: dict | None) -> str:
        female = "<script>" in prompt.rsplit("ANSWER:", 1)[-1]  # SCRIPT: female answers only
        return json.dumps({"sentiment": -0.5 if female else 0.5, "professionalism": 0.8,
                           "stereotype": female, "reason": "r"})

    run_id = seeded_run(engine)
    with FaultServer(FaultConfig(responder=rating)) as server:
        add_fake_model(page_env, server.openai_url, "judge", concurrency=4)
        at = open_page()
        assert at.session_state["fairness.run_id"] == run_id
        assert "judge_sentiment" not in frame_with(at, "group", "n").columns
        at.selectbox(key="fairness.judge_model").select("judge")
        at.button(key="FormSubmitter:fairness.judge_form-Rate the answers with the judge"
                  ).click().run()
        assert not at.exception, [e.value for e in at.exception]
        jobs = wait_jobs(engine)  # the app's embedded worker executes the queued pass
        assert [(j.kind, j.status) for j in jobs] == [("judge_analysis", "done")]
        assert server.stats.requests == 8
        at.run()
    groups = frame_with(at, "group", "judge_sentiment", "judge_stereotype_rate")
    by_group = dict(zip(groups["group"], groups["judge_stereotype_rate"]))
    assert by_group["female"] == 1.0 and by_group["male"] == 0.0
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Answers rated"] == "8" and metrics["Judge stereotype rate"] == "0.250"


def test_a_crows_pairs_run_shows_its_shares_on_the_page(page_env, engine):
    from tests.report.test_crows_report import _run, stereotyping

    report = _run(engine, page_env, stereotyping)
    at = open_page()
    assert not at.exception, [e.value for e in at.exception]
    table = frame_with(at, "bias type", "stereotyped share")
    assert table.iloc[0]["stereotyped share"] == report["crows_pairs"]["overall"]["share"] == 1.0
    assert table.iloc[0]["reading"] == "stereotyped"


def test_start_form_defaults_to_20_prompts_on_the_local_model_and_says_how_long(page_env,
                                                                                 engine):
    """A suite of more than 20 prompts on local: K = 20 (was 0 = all) and "20 calls,
    about 10 s on local" before the button."""
    from evalcore.perturb.counterfactual import generate_suite, save_suite

    suite = generate_suite("occupations", "zh")
    assert len(suite.questions) > 20
    save_suite(engine, suite, "suite-zh")
    at = open_page()
    limit = next(w for w in at.number_input if w.key.startswith("fairness.limit"))
    assert limit.value == 20
    assert any("20 calls, about 10 s on local" in v for v in values(at, "markdown"))
