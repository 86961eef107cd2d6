"""How a run's stored summary is written (`store.run_summary`): a long one over several
rows, written a piece at a time, read back whole; what JSON would change is not stored.
On SQLite and PostgreSQL (`store`)."""
from __future__ import annotations

import math

import msgspec
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from evalcore.store import queries, run_summary
from evalcore.store.tables import RunSummary
from tests.fakes.stored_runs import seed_dataset, seed_run

RUN_SUMMARY = RunSummary.__table__


def _finished_run(engine) -> object:  # type: ignore[no-untyped-def]
    ds = seed_dataset(engine, "rows", ["What is 1 + 1?", "What is 2 + 2?"])
    return queries.get_run(engine, seed_run(engine, ds, {0: [1, 0], 1: [1, 1]}, rounds=2))


def _rows(engine, run_id: int) -> dict[str, str]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        return dict(conn.execute(select(RUN_SUMMARY.c.name, RUN_SUMMARY.c.data)
                                 .where(RUN_SUMMARY.c.run_id == run_id)).all())


def _report(questions: int) -> dict:
    return {"run_id": 1, "stability_results": {
        str(q): {"question": f"What is {q} + {q}? 中文", "answer_groups": [
            {"answer": str(2 * q), "count": 3, "example": f"The answer is {2 * q}."}],
            "success_rate": q / 7} for q in range(questions)},
        "summary": {"mean": 0.5, "entropy_ranking": [str(q) for q in range(questions)]}}


def test_a_long_summary_is_stored_over_rows_and_read_back_whole(store, monkeypatch) -> None:
    engine = store
    run = _finished_run(engine)
    monkeypatch.setattr(run_summary, "CHUNK_CHARS", 500)
    data = _report(40)
    assert run_summary.summary(engine, run, "stability:x", lambda: data) == data
    rows = _rows(engine, run.id)
    parts = sorted(name for name in rows if name.startswith("stability:x"))
    assert len(parts) > 3 and parts[0] == "stability:x"
    text = "".join(rows[name] for name in parts)
    assert text == msgspec.json.encode(data).decode()  # the same text as one encode
    assert max(len(rows[name].encode()) for name in parts) < 500 + 400  # cut between values
    # read back (not computed again) equal
    assert run_summary.summary(engine, run, "stability:x", lambda: pytest.fail("computed")) \
        == data
    # a shorter one stored under the name leaves none of the longer one's rows behind
    key = run_summary.state_key(engine, run)
    run_summary.store(engine, run.id, "stability:x", key, {"short": 1})
    assert sorted(n for n in _rows(engine, run.id) if n.startswith("stability:x")) \
        == ["stability:x"]
    assert run_summary.stored(engine, run.id, "stability:x", key) == {"short": 1}


def test_a_summary_missing_a_row_is_computed_again(store, monkeypatch) -> None:
    engine = store
    run = _finished_run(engine)
    monkeypatch.setattr(run_summary, "CHUNK_CHARS", 500)
    data = _report(40)
    run_summary.summary(engine, run, "stability:x", lambda: data)
    with engine.begin() as conn:
        conn.execute(RUN_SUMMARY.delete().where(RUN_SUMMARY.c.name == "stability:x#00002"))
    key = run_summary.state_key(engine, run)
    assert run_summary.stored(engine, run.id, "stability:x", key) is None


def test_a_summary_missing_its_last_row_is_computed_again(store, monkeypatch) -> None:
    """The first row's state counts the rows: without it, a lost last row left a cut JSON
    text that every read failed to parse."""
    engine = store
    run = _finished_run(engine)
    monkeypatch.setattr(run_summary, "CHUNK_CHARS", 500)
    data = _report(40)
    run_summary.summary(engine, run, "stability:x", lambda: data)
    last = max(n for n in _rows(engine, run.id) if n.startswith("stability:x"))
    with engine.begin() as conn:
        conn.execute(RUN_SUMMARY.delete().where(RUN_SUMMARY.c.name == last))
    key = run_summary.state_key(engine, run)
    assert run_summary.stored(engine, run.id, "stability:x", key) is None
    assert run_summary.summary(engine, run, "stability:x", lambda: data) == data  # again


def test_a_reader_of_one_row_per_name_finds_no_summary_of_several(store, monkeypatch) -> None:
    """A process of an older version (one row per name, its state equal to the run's key)
    computes the figures again instead of parsing the first piece of several."""
    engine = store
    run = _finished_run(engine)
    monkeypatch.setattr(run_summary, "CHUNK_CHARS", 500)
    run_summary.summary(engine, run, "stability:x", lambda: _report(40))
    key = run_summary.state_key(engine, run)
    with engine.connect() as conn:
        first = conn.execute(select(RUN_SUMMARY.c.state).where(
            RUN_SUMMARY.c.run_id == run.id, RUN_SUMMARY.c.name == "stability:x")).scalar_one()
    assert first != key
    run_summary.store(engine, run.id, "stability:x", key, {"short": 1})  # one row: as before
    with engine.connect() as conn:
        assert conn.execute(select(RUN_SUMMARY.c.state).where(
            RUN_SUMMARY.c.run_id == run.id, RUN_SUMMARY.c.name == "stability:x")
        ).scalar_one() == key


def test_names_alike_keep_their_own_rows(store, monkeypatch) -> None:
    """`Stability:X` and `stability:x` (SQLite's LIKE ignores case) and a name with the
    LIKE wildcards in it are stored and read apart."""
    engine = store
    run = _finished_run(engine)
    monkeypatch.setattr(run_summary, "CHUNK_CHARS", 300)
    names = {"stability:x": _report(20), "Stability:X": _report(25),
             "stability:%_x": _report(30)}
    for name, data in names.items():
        run_summary.summary(engine, run, name, lambda data=data: data)
    for name, data in names.items():
        assert run_summary.summary(engine, run, name, lambda: pytest.fail("computed")) == data


def test_what_json_reads_back_different_is_not_stored(store) -> None:
    """Infinity would be written and fail to read back; NaN reads back unequal; numpy's
    float64 is the float it equals and is stored."""
    engine = store
    run = _finished_run(engine)
    for odd in ({"x": math.inf}, {"x": math.nan}, {"x": (1, 2)}, {1: "a"}, {"x": {1, 2}},
                {"x": np.int64(3)}):
        assert run_summary.summary(engine, run, "odd", lambda odd=odd: odd) is odd
        assert run_summary.summary(engine, run, "odd", lambda odd=odd: odd) is odd
        assert "odd" not in _rows(engine, run.id)
    plain = {"x": np.float64(0.25), "y": [True, None, "z"]}
    run_summary.summary(engine, run, "plain", lambda: plain)
    assert run_summary.summary(engine, run, "plain", lambda: pytest.fail("computed")) == plain


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**53, 2**53) | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30)


@settings(max_examples=200, deadline=None)
@given(JSON, st.integers(1, 40))
def test_the_rows_joined_are_the_json_of_the_summary(data, size) -> None:
    text = "".join(run_summary.chunks(data, size))
    assert text == msgspec.json.encode(data).decode()
    assert run_summary.reads_back_equal(data)
    assert msgspec.json.decode(text) == data
