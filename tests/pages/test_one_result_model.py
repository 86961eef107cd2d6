"""One result model under every view: a run's figure is computed once
(`report.run_figures`, from the kind's declared metrics) and every view reads that value.

For one figure of each kind (stability's mean success rate, robustness's PDR at the char
level, a BBQ suite's ambiguous-context bias, and the test-only kind "recall" of
`test_extra_kind.py`, registered here) the test reads the figure from the Results page's
leaderboard (AppTest; the Stability page's card too), `runs show --json`, compare, the
leaderboard, the trend, the gate and the trust report, and finds the one value.
"""
from __future__ import annotations

import json
from pathlib import Path

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
        seen["page"] = float(table[name].iloc[0])
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

    # the Stability page's card shows the same mean success rate
    name, _, (_, run_id) = runs["stability"]
    value = run_figures(engine, run_id)["metrics"][name]
    at = run_page(str(REPO / "pages" / "stability.py"), {"stability.run_id": run_id})
    card = next(m for m in at.metric if m.label == "Mean success rate")
    assert card.value == f"{value:.1%}"
