"""One result model under every view: a run's figure is computed once
(`report.run_figures`, from the kind's declared metrics) and every view reads that value.

For one figure of each kind (stability's mean success rate, robustness's PDR at the char
level, a BBQ suite's ambiguous-context bias, and the test-only kind "recall" of
`test_extra_kind.py`, registered here) the test reads the figure from the kind's own page
(AppTest), the Results page's leaderboard, `runs show --json`, compare, the leaderboard,
the trend, the gate and the trust report, and finds the one value. A page shows the
figure rounded: its text must be the one value rounded the same way, and where the page
also holds the number (a table cell) that number must be the value itself.

Where each kind's page shows it: Stability, the "Mean success rate" card; Robustness, the
"PDR" card of the char level and the per-level table's `pdr`; Fairness, the "Bias,
ambiguous" card and the BBQ table's ambiguous `bias_score` (signed: the figure is its
absolute value); Recall (`extra_kind_page.py`), the card it draws from the run's
`figure_metrics`. A page that computed the figure its own way is caught
(`test_a_page_computing_its_own_figure_is_caught`).
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from evalcore.kinds import metric_specs, register, unregister
from tests.fakes.stored_runs import seed_bbq_run, seed_dataset, seed_robustness_run, seed_run
from tests.pages.helpers import run_page
from tests.pages.test_extra_kind import RECALL

REPO = Path(__file__).resolve().parents[2]
QUESTIONS = [f"What is {i} + 2?" for i in range(8)]


@pytest.fixture()
def recall():
    yield register(RECALL)
    unregister(RECALL.name)


def _runs(engine, shared: Path) -> dict[str, tuple[str, str, list[int]]]:
    """kind -> (figure, dataset name, [baseline run, newest run]), two runs of each."""
    from evalcore.dataset import get_dataset

    ds = seed_dataset(engine, "sums", QUESTIONS)
    stab = [seed_run(engine, ds, {i: [1, 1, i % 3 == 0] for i in range(8)}, 3),
            seed_run(engine, ds, {i: [1, i % 2, None] for i in range(8)}, 3)]
    rds = seed_dataset(engine, "recalled", QUESTIONS)
    rec = [seed_run(engine, rds, {i: [i % 2, 0] for i in range(8)}, 2, kind=RECALL.name)
           for _ in range(2)]
    first, ids = seed_robustness_run(engine, QUESTIONS, {i: [1, 1] for i in range(8)},
                                     {i: [i % 2, 1] for i in range(8)}, 2)
    second, _ = seed_robustness_run(engine, QUESTIONS, {i: [1, i % 3 > 0] for i in range(8)},
                                    {i: [0, i % 2] for i in range(8)}, 2, dataset_ids=ids)
    fair = [seed_bbq_run(engine, shared, ["A", "B", "C"])]
    fair.append(_bbq_again(engine, fair[0], ["C", "A", "A", "B"]))
    clean = get_dataset(engine, ids[0]).name
    return {"stability": ("mean_success_rate", "sums", stab),
            "robustness": ("pdr_char", clean, [first, second]),
            "fairness": ("bbq_s_amb_abs", "bbq-head", fair),
            RECALL.name: ("recall_at_n", "recalled", rec)}


def _bbq_again(engine, run_id: int, replies: list[str]) -> int:
    """A second finished fairness run on the items of `run_id` (as `seed_bbq_run`)."""
    from evalcore.dataset import load_items
    from evalcore.store import queries
    from evalcore.store.tables import utcnow

    first = queries.get_run(engine, run_id)
    items = load_items(engine, first.dataset_id)
    run = queries.create_run(engine, kind="fairness", dataset_id=first.dataset_id,
                             model="fake", rounds=1, status="done", total=len(items),
                             done=len(items), finished_at=utcnow(),
                             config={"item_ids": [i.id for i in items]})
    queries.record_calls(engine, [
        {"run_id": run.id, "item_id": item.id, "round": 1, "stage": "answer",
         "model": "fake", "prompt": item.question, "answer": replies[k % len(replies)]}
        for k, item in enumerate(items)])
    return int(run.id)


def _gate_value(engine, run_id: int, name: str, better: str) -> float:
    from evalcore.report.gates import gate_any

    bound = f"{name}_max = 1e9" if better == "lower" else f"{name}_min = -1e9"
    check, = gate_any(engine, run_id, f"[absolute]\n{bound}\n").checks
    return check.value


class Shown(NamedTuple):
    """A figure as a kind's own page draws it."""

    text: str
    """The text of its card, rounded as the page rounds."""
    number: float | None
    """The number the page holds unrounded (a table cell), or None (a card only)."""


def _card(at: Any, label: str, index: int = 0) -> str:
    """The text of the page's `index`-th card labelled `label`."""
    cards = [m.value for m in at.metric if m.label == label]
    assert len(cards) > index, f"the page draws no card {label!r} (#{index}): {cards}"
    return cards[index]


def _stability_page(run_id: int) -> Shown:
    at = run_page(str(REPO / "pages" / "stability.py"), {"stability.run_id": run_id})
    return Shown(_card(at, "Mean success rate"), None)


def _robustness_page(run_id: int) -> Shown:
    """The char level's PDR card and its row of the per-level table (same level order)."""
    at = run_page(str(REPO / "pages" / "robustness.py"), {"robustness.run_id": run_id})
    table = next(df.value for df in at.dataframe
                 if {"level", "pdr"} <= set(df.value.columns))
    row = list(table["level"]).index("char")
    return Shown(_card(at, "PDR", row), float(table["pdr"].iloc[row]))


def _fairness_page(run_id: int) -> Shown:
    """The BBQ ambiguous bias, signed on the page; the figure is its absolute value."""
    at = run_page(str(REPO / "pages" / "fairness.py"), {"fairness.run_id": run_id})
    table = next(df.value for df in at.dataframe
                 if {"context", "bias_score"} <= set(df.value.columns))
    score = table.set_index("context")["bias_score"]["ambiguous"]
    return Shown(_card(at, "Bias, ambiguous").lstrip("-"), abs(float(score)))


def _recall_page(run_id: int) -> Shown:
    at = run_page(str(REPO / "tests" / "pages" / "extra_kind_page.py"),
                  {f"{RECALL.name}.run_id": run_id})
    return Shown(_card(at, "recall at n"), None)


OWN_PAGE: dict[str, tuple[Callable[[int], Shown], Callable[[float], str]]] = {
    "stability": (_stability_page, "{:.1%}".format),
    "robustness": (_robustness_page, "{:.1%}".format),
    "fairness": (_fairness_page, "{:.3f}".format),
    RECALL.name: (_recall_page, "{:.1%}".format),
}
"""kind -> (its page's reading of the figure, how that page rounds it)."""


def _assert_page_shows(kind: str, shown: Shown, value: float) -> None:
    """The page shows the one value, rounded as it rounds, and holds it unrounded."""
    rounded = OWN_PAGE[kind][1](value)
    assert shown.text == rounded, (kind, shown, rounded)
    assert shown.number is None or shown.number == value, (kind, shown, value)


def test_every_view_reads_the_one_figure_of_each_kind(recall, page_env, engine,
                                                      shared_datasets, capsys):
    from evalcore.cli import main
    from evalcore.report.compare_runs import compare_runs
    from evalcore.report.leaderboard import leaderboard
    from evalcore.report.run_figures import interval_text, run_figures
    from evalcore.report.trend import trend, trend_figure
    from evalcore.report.trust import trust_report_html

    runs = _runs(engine, shared_datasets)
    for kind, (name, dataset, (base, run_id)) in runs.items():
        spec = metric_specs(kind)[name]
        figures = run_figures(engine, run_id)  # the one place the figure is computed
        value, interval = figures["metrics"][name], figures["intervals"].get(name)
        assert isinstance(value, float), (kind, name, value)
        seen = {}
        assert main(["runs", "show", str(run_id), "--json"]) == 0
        shown = json.loads(capsys.readouterr().out)["metrics"]
        seen["CLI JSON"] = next(m["value"] for m in shown if m["name"] == name)
        seen["compare"] = compare_runs(engine, [base, run_id])["runs"][1]["metrics"][name]
        row, = leaderboard(engine, dataset)["rows"]
        assert row["runs"][kind] == run_id
        seen["leaderboard"] = row[name]
        points = trend(engine, dataset, name)["series"]["fake"]
        seen["trend"] = next(p["value"] for p in points if p["run_id"] == run_id)
        seen["gate"] = _gate_value(engine, run_id, name, spec.better)
        at = run_page(str(REPO / "pages" / "results.py"), {"results.tab": "Leaderboard",
                                                          "results.board_dataset": dataset})
        table = next(df.value for df in at.dataframe if name in df.value.columns)
        seen["Results page"] = float(table[name].iloc[0])
        assert seen == dict.fromkeys(seen, value), (kind, name, seen)
        # the leaderboard and the trend carry the figure's interval; the trust report
        # shows it beside the figure, under the kind's label
        if interval is not None:
            assert (row[f"{name}_low"], row[f"{name}_high"]) == (interval["low"],
                                                                 interval["high"])
            point = next(p for p in points if p["run_id"] == run_id)
            assert (point["low"], point["high"]) == (interval["low"], interval["high"])
            bars = trend_figure(trend(engine, dataset, name)).data[0].error_y
            at_run = [p["run_id"] for p in points].index(run_id)
            assert (value - bars.arrayminus[at_run], value + bars.array[at_run]) == \
                pytest.approx((interval["low"], interval["high"]))
            assert f"{name} 95% interval" in table.columns
        page = trust_report_html(engine, runs=[run_id])
        assert interval_text(value, interval) in page
        assert interval is None or f"<td>{interval['method']}</td>" in page  # how it was made
        assert (spec.label or name.replace("_", " ")) in page
        # the kind's own page shows the same figure
        _assert_page_shows(kind, OWN_PAGE[kind][0](run_id), value)


def test_a_page_computing_its_own_figure_is_caught(recall, page_env, engine, shared_datasets,
                                                   monkeypatch):
    """If the Robustness page's report counted PDR its own way (here: the drop in
    points, not divided by the clean accuracy) or the Fairness page's BBQ scores were
    their own (halved), the comparison above fails for that kind."""
    import evalcore.report.fairness as fairness_report
    import evalcore.report.robustness as robustness_report
    from evalcore.report.run_figures import run_figures

    runs = _runs(engine, shared_datasets)
    truth = {kind: run_figures(engine, runs[kind][2][-1])["metrics"][runs[kind][0]]
             for kind in ("robustness", "fairness")}  # stored before the change
    real_summary, real_scores = robustness_report.robustness_summary, fairness_report.bias_scores

    def drop_in_points(outcomes):
        s = real_summary(outcomes)
        return s.__class__(**{**s.__dict__, "pdr": s.accuracy_clean - s.accuracy_attacked})

    def halved(items, fmt):
        scores = real_scores(items, fmt)
        scores["s_amb"] /= 2
        scores["ambiguous"] = {**scores["ambiguous"], "bias_score": scores["s_amb"]}
        return scores

    monkeypatch.setattr(robustness_report, "robustness_summary", drop_in_points)
    monkeypatch.setattr(fairness_report, "bias_scores", halved)
    for kind, value in truth.items():
        assert value, (kind, value)  # a change that would show
        shown = OWN_PAGE[kind][0](runs[kind][2][-1])  # the page draws, without an error
        with pytest.raises(AssertionError, match=kind):
            _assert_page_shows(kind, shown, value)

