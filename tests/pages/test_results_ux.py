"""The Results page as issue 16 found it: downloads that never hang, the status as a
word (not a cut-off card, no "ETA done" on a cancelled run), active time beside elapsed
after a pause, and no "+0.0%" rise."""
from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from tests.fakes.stored_runs import seed_dataset, seed_run
from tests.pages.helpers import run_page, values

REPO = Path(__file__).resolve().parents[2]
PAGE = str(REPO / "pages" / "results.py")


def test_downloads_are_ready_bytes_that_do_not_rerun_the_page(page_env, engine):
    ds = seed_dataset(engine, "dl", [f"q{i}?" for i in range(3)])
    seed_run(engine, ds, {i: [1, 0] for i in range(3)}, 2, model="m")
    at = run_page(PAGE)
    buttons = at.get("download_button")
    assert len(buttons) == 4
    for button in buttons:
        proto = button.proto
        # a deferred (callable) download loses its file on the next rerun: issue 16
        assert not proto.deferred_file_id and proto.url, proto.label
        assert proto.ignore_rerun, proto.label  # a click does not rerun the page
        assert not proto.disabled, proto.label
    first = [b.proto.url for b in buttons]
    at.run()  # a rerun hands the same content the same URL
    assert [b.proto.url for b in at.get("download_button")] == first


def test_an_export_with_nothing_to_export_is_disabled_and_says_why(page_env, engine):
    from evalcore.store import queries

    ds = seed_dataset(engine, "empty", ["q?"])
    queries.create_run(engine, kind="stability", dataset_id=ds, model="m", rounds=2,
                       status="cancelled", total=2)
    at = run_page(PAGE)
    by_label = {b.proto.label: b.proto for b in at.get("download_button")}
    assert not by_label["Raw calls CSV"].disabled
    json_button = by_label["Stability JSON"]
    assert json_button.disabled and "Not available yet" in json_button.help


def test_a_cancelled_run_shows_its_status_word_and_no_eta(page_env, engine):
    ds = seed_dataset(engine, "cancel", [f"q{i}?" for i in range(4)])
    seed_run(engine, ds, {0: [1, 1], 1: [0]}, 2, model="m", status="cancelled")
    at = run_page(PAGE)
    labels = [m.label for m in at.metric]
    assert "Status" not in labels and "ETA" not in labels, labels
    assert any("orange-badge[cancelled]" in m for m in values(at, "markdown"))
    assert not any("ETA" in c for c in values(at, "caption"))


def test_a_resumed_run_shows_active_time_beside_elapsed(page_env, engine):
    from evalcore.dataset import load_items
    from evalcore.store import queries
    from evalcore.store.tables import utcnow

    ds = seed_dataset(engine, "paused", ["q0?", "q1?"])
    items = load_items(engine, ds)
    start = utcnow() - timedelta(minutes=30)
    resumed = start + timedelta(minutes=10, seconds=12)
    run = queries.create_run(engine, kind="stability", dataset_id=ds, model="m", rounds=1,
                             status="done", total=2, done=2, started_at=start,
                             finished_at=resumed + timedelta(seconds=30),
                             config={"item_ids": [i.id for i in items]})
    queries.record_calls(engine, [
        {"run_id": run.id, "item_id": item.id, "round": 1, "stage": "answer", "model": "m",
         "prompt": "p", "answer": "1", "correct": True, "score": 1.0,
         "latency_ms": latency * 1000, "created_at": at}
        for item, at, latency in ((items[0], start + timedelta(seconds=1), 1),
                                  (items[1], resumed + timedelta(seconds=30), 30))])
    at = run_page(PAGE)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Active time"] == "31 s"
    assert any("Time active 31 s (elapsed 10 m 42 s)" in c for c in values(at, "caption"))


def test_a_change_that_rounds_to_zero_has_no_delta() -> None:
    from pages._shared import change_delta

    assert change_delta(None) is None
    assert change_delta(0.0) is None and change_delta(-0.0) is None
    assert change_delta(0.0004) is None and change_delta(-0.0004) is None  # "+0.0%", "-0.0%"
    assert change_delta(0.012) == "+1.2%" and change_delta(-0.05) == "-5.0%"
