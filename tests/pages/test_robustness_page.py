"""The Robustness page under AppTest: empty database, a finished run's results, starting a run.

The finished run is seeded: an attack set imported through the service, its items
approved, a robustness run created by `service.runs.create_run`, then calls with chosen
verdicts written to the store (no model server needed).
"""
from __future__ import annotations

import csv
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.pages.helpers import add_fake_model, run_page

REPO = Path(__file__).resolve().parents[2]
PAGE = str(REPO / "pages" / "robustness.py")
HEADER = ["id", "question", "segmented_text", "equation", "answer", "attacked_question",
          "attack_num", "synword_pairs"]
ROWS = [
    ["1", "小明有3个苹果，又买了4个，一共有多少个？", "", "x=3+4", "7",
     "小明有3个苹果，又购了4个，一共有几个？", "2", "{'买': '购', '多少': '几'}"],
    ["2", "一本书12元，买2本要多少元？", "", "x=12*2", "24",
     "一本书12元，购2本要几元？", "2", "{'买': '购', '多少': '几'}"],
    ["3", "5个人每人分3块糖，共要多少块？", "", "x=5*3", "15",
     "5个人每人分3块糖，共要几块？", "1", "{'多少': '几'}"],
    ["4", "10减去4等于多少？", "", "x=10-4", "6", "10减去4等于几？", "1", "{'多少': '几'}"],
]
ROUNDS = 2
VERDICTS = [([1, 1], [0, 0]), ([1, 1], [1, 0]), ([0, 0], [1, 1]), ([1, 1], [1, 1])]
"""(clean, attacked) round verdicts per row: r->w, r->w (a tie is wrong), w->r, both right."""


def open_page() -> AppTest:
    return run_page(PAGE)


def approved_set(engine, tmp_path) -> int:
    """The 4-row word-level set imported through the service, every item approved."""
    from evalcore.perturb.review import approve_unflagged
    from evalcore.perturb.set_import import import_attack_set

    path = tmp_path / "Small_underwordattack.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([HEADER, *ROWS])
    attack_set = import_attack_set(engine, path, check=False, name="small-word")
    assert approve_unflagged(engine, int(attack_set.id), reviewer="alice") == len(ROWS)
    return int(attack_set.id)


def finished_run(engine, settings, tmp_path) -> int:
    from tests.fakes.starters import start
    from evalcore.store import queries
    from tests.fakes.stored_runs import end_run

    set_id = approved_set(engine, tmp_path)
    add_fake_model(settings)
    run_id = start("robustness", engine, attack_set_ids=[set_id], model="fake", rounds=ROUNDS,
                                   models_path=settings.models_path)
    pairs = queries.get_run(engine, run_id).config["spec"]["extra"]["pairs"]
    assert len(pairs) == len(VERDICTS)
    calls = []
    for (_, clean_id, attacked_id, *_), (clean, attacked), row in zip(pairs, VERDICTS, ROWS):
        for item_id, verdicts, side in ((clean_id, clean, "clean"),
                                        (attacked_id, attacked, "attacked")):
            for r, v in enumerate(verdicts):
                calls.append({"run_id": run_id, "item_id": item_id, "round": r + 1,
                              "stage": "answer", "model": "fake", "prompt": "q",
                              "answer": f"{side} <b>{row[4] if v else 0}</b>",
                              "correct": bool(v), "score": float(v)})
    queries.record_calls(engine, calls)
    queries.update_run(engine, run_id, done=len(calls))
    end_run(engine, run_id, "done")
    return run_id


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_page_loads_with_an_empty_database(page_env):
    at = open_page()
    infos = [str(i.value) for i in at.info]
    assert any("No attack sets yet" in t for t in infos)
    assert any("No robustness runs yet" in t for t in infos)
    assert not at.get("plotly_chart")


def test_finished_run_shows_drop_flips_tests_and_fragile_questions(page_env, engine, tmp_path):
    run_id = finished_run(engine, page_env, tmp_path)
    at = open_page()
    assert at.session_state["robustness.run_id"] == run_id
    shown = metrics(at)
    clean = sum(sum(c) for c, _ in VERDICTS) / (len(VERDICTS) * ROUNDS)
    attacked = sum(sum(a) for _, a in VERDICTS) / (len(VERDICTS) * ROUNDS)
    assert shown["Accuracy clean"] == f"{clean:.1%}"
    assert shown["Accuracy attacked"] == f"{attacked:.1%}"
    assert shown["PDR"] == f"{1 - attacked / clean:.1%}"
    assert shown["Flips"] == "2 ↓ / 1 ↑"
    # the paired difference in words, with its 95% interval over the clean questions
    captions = [str(c.value) for c in at.caption]
    assert any(f"Attacked questions score {(clean - attacked) * 100:.1f} points lower, 95% CI"
               in c for c in captions), captions
    from scipy.stats import binomtest, wilcoxon

    assert shown["McNemar p"] == f"{binomtest(2, 3, 0.5).pvalue:.3g}"
    rates = [(sum(c) / ROUNDS, sum(a) / ROUNDS) for c, a in VERDICTS]
    # |differences| 1, 0.5, 1 are tied: the metric documents the normal approximation then
    expected_w = wilcoxon([c for c, _ in rates], [a for _, a in rates], zero_method="wilcox",
                          method="approx")
    assert shown["Paired p (Wilcoxon)"] == f"{expected_w.pvalue:.3g}"
    assert len(at.get("plotly_chart")) == 2

    tabs = [t.label for t in at.tabs]
    assert tabs == ["Right → wrong (2)", "Wrong → right (1)"]
    r2w = next(df.value for df in at.dataframe if "clean_answers" in df.value.columns)
    assert set(r2w["question"]) == {"Q1", "Q2"}  # labelled as in the dataset, every page

    # the most fragile question: its diff (escaped) and its answers per round
    markup = "".join(str(h.proto.body) for h in at.get("html"))
    assert "<del" in markup and "<ins" in markup and "购" in markup
    answers = next(df.value for df in at.dataframe if "clean answer" in df.value.columns)
    assert list(answers["round"]) == [1, 2]
    assert all(a.startswith("attacked <b>") for a in answers["attacked answer"])
    at.selectbox(key="robustness.question").select(1).run()
    assert not at.exception
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["JSON report"]


def test_starting_a_run_through_the_widgets_runs_clean_and_attacked(page_env, engine, tmp_path,
                                                                   runner_clients):
    from evalcore.store import queries
    from tests.fakes.fault_server import FaultConfig, FaultServer

    approved_set(engine, tmp_path)
    with FaultServer(FaultConfig(latency=0.01)) as server:
        add_fake_model(page_env, server.openai_url)
        at = open_page()
        at.selectbox(key="robustness.model").select("fake")
        at.number_input(key="robustness.rounds").set_value(2)
        at.button(key="robustness.start").click().run()
        assert not at.exception, [e.value for e in at.exception]
        run_id = at.session_state["robustness.run_id"]
        run = queries.get_run(engine, run_id)
        assert (run.kind, run.model, run.rounds) == ("robustness", "fake", 2)
        assert run.total == 2 * 2 * len(ROWS)  # clean + attacked, N rounds each
        deadline = time.monotonic() + 60
        while queries.get_run(engine, run_id).status not in queries.FINISHED:
            assert time.monotonic() < deadline, "the run did not finish"
            time.sleep(0.1)
        assert queries.get_run(engine, run_id).status == "done"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Accuracy clean" in metrics(at)


def test_a_set_with_nothing_approved_cannot_start_and_says_where_to_review(page_env, engine,
                                                                           tmp_path):
    from evalcore.perturb.set_import import import_attack_set

    path = tmp_path / "Unreviewed_underwordattack.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([HEADER, *ROWS])
    set_id = import_attack_set(engine, path, check=False, name="unreviewed").id
    at = open_page()
    picker = next(m for m in at.multiselect if m.label.startswith("Attack sets"))
    picker.set_value([set_id]).run()
    assert any(f"#{set_id}" in w.value and "Attacks page" in w.value for w in at.warning)
    assert at.button(key="robustness.start").disabled


def test_start_form_says_calls_and_time_before_the_run(page_env, engine, tmp_path):
    """4 approved pairs, 3 rounds (default) on local: (4 clean + 4 attacked) x 3 = 24
    calls, about 12 s at the default 1 s a call with 2 in flight."""
    approved_set(engine, tmp_path)
    at = open_page()
    lines = [str(m.value) for m in at.markdown]
    assert any("24 calls, about 12 s on local" in v for v in lines), lines
    captions = [str(c.value) for c in at.caption]
    assert "No finished robustness run of this dataset yet: the detectable effect is shown " \
           "after the first run." in captions, captions


def test_start_form_says_what_drop_the_run_could_detect(page_env, engine, tmp_path):
    """From the newest finished robustness run of the dataset: the spread of its per-pair
    differences, rescaled to the form's rounds (3) and its approved pairs (4)."""
    from evalcore.metrics.uncertainty import (detectable_effect, paired_difference,
                                              paired_variance, questions_needed)

    run_id = finished_run(engine, page_env, tmp_path)
    at = open_page()
    clean = {i: (sum(c), ROUNDS) for i, (c, _) in enumerate(VERDICTS)}
    attacked = {i: (sum(a), ROUNDS) for i, (_, a) in enumerate(VERDICTS)}
    var = paired_variance(paired_difference(clean, attacked), 3)
    assert detectable_effect(var, 4) > 1  # four pairs that move both ways tell nothing
    captions = [str(c.value).replace("\\", "") for c in at.caption]
    assert (f"With 4 attacked questions x 3 rounds this run can detect no change on the "
            f"0-100 scale (80% power, from the spread of run #{run_id}); telling 5 points "
            f"apart would take about {questions_needed(var, 0.05):,} attacked questions."
            in captions), captions
