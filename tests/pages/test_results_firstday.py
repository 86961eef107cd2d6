"""The Results page as a new user met it on the first day: a re-judged run's calls read
as answers, a finished run's full progress bar drawn in the error colour, a run's times
without their zone (exports), and a card cut off at 1366 px."""
from __future__ import annotations

import colorsys
import tomllib
from pathlib import Path

from tests.fakes.stored_runs import seed_dataset, seed_run
from tests.pages.helpers import run_page, values

REPO = Path(__file__).resolve().parents[2]
PAGE = str(REPO / "pages" / "results.py")


def test_a_rejudged_runs_calls_are_counted_by_what_they_were_for(page_env, engine):
    from evalcore.store import queries, run_items
    from evalcore.store.tables import Call

    ds = seed_dataset(engine, "rj", [f"q{i}?" for i in range(3)])
    run_id = seed_run(engine, ds, {i: [1, 0] for i in range(3)}, 2, model="m")
    first = min(run_items.run_item_ids(engine, run_id))
    queries.record_calls(engine, [Call(run_id=run_id, item_id=first, round=r, stage="rejudge0:9",
                                       answer="x") for r in (1, 2)])
    at = run_page(PAGE)
    text = " ".join(values(at, "caption"))
    assert "6 answers, 2 re-judgements" in text, text
    assert "calls stored: 8 " not in text


def test_progress_bars_are_not_drawn_in_the_error_colour() -> None:
    """Streamlit's default accent (#FF4B4B) fills every progress bar: a finished run's
    100% bar looked like a failure. The accent must not be a red."""
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    colour = config.get("theme", {}).get("primaryColor", "#FF4B4B").lstrip("#")
    red, green, blue = (int(colour[i:i + 2], 16) / 255 for i in (0, 2, 4))
    hue = colorsys.rgb_to_hls(red, green, blue)[0] * 360
    assert 45 < hue < 315, f"primaryColor #{colour} is a red (hue {hue:.0f})"


def test_a_one_point_trend_reads_in_minutes_not_fractions_of_a_second() -> None:
    """Plotly zooms a single run's time to sub-second ticks ("18:07:21.0755")."""
    from datetime import UTC, datetime

    from evalcore.report.trend import trend_figure

    moment = datetime(2026, 12, 6, 18, 7, 21, 75500, tzinfo=UTC)
    point = {"created_at": moment, "value": 0.8, "low": 0.7, "high": 0.9, "run_id": 3,
             "baseline": False, "regression": False, "gate": None}
    fig = trend_figure({"series": {"m": [point]}, "metric": "success_rate",
                        "dataset": "d", "better": "higher", "baseline_marks": []})
    axis = fig.layout.xaxis
    assert axis.tickformat == "%Y-%m-%d %H:%M"
    low, high = (datetime.fromisoformat(str(v)).astimezone(UTC) for v in axis.range)
    assert (high - low).total_seconds() >= 3600 and low <= moment <= high


def test_compare_opens_on_two_runs_that_share_questions(page_env, engine):
    """The two newest runs were on different datasets: the first view was an error."""
    old = seed_dataset(engine, "old", [f"o{i}?" for i in range(3)])
    new = seed_dataset(engine, "new", [f"n{i}?" for i in range(3)])
    first = seed_run(engine, old, {i: [1, 0] for i in range(3)}, 2, model="a")
    second = seed_run(engine, old, {i: [1, 1] for i in range(3)}, 2, model="b")
    seed_run(engine, new, {i: [0, 0] for i in range(3)}, 2, model="c")
    at = run_page(PAGE, {"results.tab": "Compare"})
    assert at.multiselect(key="results.compare_runs").value == [first, second]
    assert not any("Cannot compare" in w for w in values(at, "warning"))
    assert len(next(df.value for df in at.dataframe if "shared_accuracy" in df.value.columns)) == 2


def test_compare_says_so_when_no_two_runs_share_a_dataset(page_env, engine):
    for name in ("x", "y"):
        ds = seed_dataset(engine, name, [f"{name}{i}?" for i in range(2)])
        seed_run(engine, ds, {i: [1] for i in range(2)}, 1)
    at = run_page(PAGE, {"results.tab": "Compare"})
    assert at.multiselect(key="results.compare_runs").value == []
    assert any("share a dataset" in t for t in values(at, "info"))
    assert not any("Cannot compare" in w for w in values(at, "warning"))


def test_a_run_deleted_in_another_tab_is_named_not_silently_replaced(page_env, engine):
    from evalcore.store import queries

    ds = seed_dataset(engine, "del", [f"q{i}?" for i in range(2)])
    older = seed_run(engine, ds, {0: [1], 1: [0]}, 1, model="a")
    newer = seed_run(engine, ds, {0: [0], 1: [0]}, 1, model="b")
    stability = str(REPO / "pages" / "stability.py")
    at = run_page(stability)
    at.selectbox(key="stability.pick").select(older).run()
    queries.delete_run(engine, older)  # another tab, or a colleague
    at.run()
    assert not at.exception
    assert any(f"Run #{older} no longer exists" in w and f"showing run #{newer}" in w
               for w in values(at, "warning"))

    results = run_page(PAGE)
    results.selectbox(key="results.pick").select(newer).run()
    queries.delete_run(engine, newer)
    seed_run(engine, ds, {0: [1], 1: [1]}, 1, model="c")
    results.run()
    assert any(f"Run #{newer} no longer exists" in w for w in values(results, "warning"))
