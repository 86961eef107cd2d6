"""queries.py against SQLite and PostgreSQL (same tests, `store` is parametrised)."""
from __future__ import annotations

from datetime import timedelta

import pytest

from evalcore.errors import RunError
from evalcore.store import queries as q
from evalcore.store import call_usage, run_items
from evalcore.store.tables import Call, utcnow


def _calls(run_id: int, item_ids: list[int], rounds: tuple[int, ...] = (1,),
           **extra: object) -> list[Call]:
    return [Call(run_id=run_id, item_id=i, round=r, **extra) for i in item_ids for r in rounds]


# ------------------------------------------------------------------ runs


def test_create_get_list_update_runs(store) -> None:
    first = q.create_run(store, kind="eval", model="m1", total=4, config={"rounds": 1})
    second = q.create_run(store, kind="stability", model="m2", rounds=3)
    assert first.id is not None and second.id is not None and first.id != second.id
    assert first.status == "queued"

    got = q.get_run(store, first.id)
    assert (got.kind, got.model, got.total, got.config) == ("eval", "m1", 4, {"rounds": 1})
    assert [r.id for r in q.list_runs(store)] == [second.id, first.id]  # newest first
    assert [r.id for r in q.list_runs(store, kind="eval")] == [first.id]
    assert [r.id for r in q.list_runs(store, limit=1)] == [second.id]

    started = utcnow()
    updated = q.update_run(store, first.id, status="running", started_at=started)
    assert updated.status == "running" and updated.started_at == started
    assert [r.id for r in q.list_runs(store, status="running")] == [first.id]


def test_missing_runs_and_unknown_fields_are_errors(store) -> None:
    with pytest.raises(RunError, match="run 999 not found"):
        q.get_run(store, 999)
    with pytest.raises(RunError, match="999"):
        q.update_run(store, 999, status="failed")
    run = q.create_run(store, kind="eval")
    with pytest.raises(ValueError, match="colour"):
        q.update_run(store, run.id, colour="red")
    with pytest.raises(ValueError, match="colour"):
        q.create_run(store, kind="eval", colour="red")


def test_request_cancel_only_stops_unfinished_runs(store) -> None:
    running = q.create_run(store, kind="eval", status="running")
    finished = q.create_run(store, kind="eval", status="done")
    assert q.request_cancel(store, running.id) is True
    assert q.get_run(store, running.id).cancel_requested is True
    assert q.request_cancel(store, finished.id) is False
    assert q.get_run(store, finished.id).cancel_requested is False
    with pytest.raises(RunError):
        q.request_cancel(store, 999)


def test_progress_of_a_finished_run(store) -> None:
    start = utcnow() - timedelta(hours=1)
    run = q.create_run(store, kind="eval", status="done", total=20, done=20, errors=2,
                       started_at=start, finished_at=start + timedelta(seconds=40))
    p = q.progress(store, run.id)
    assert (p["done"], p["total"], p["errors"], p["status"]) == (20, 20, 2, "done")
    assert p["rate"] == pytest.approx(20 / 40)
    assert p["eta"] is None and p["fraction"] == 1.0


def test_progress_of_a_running_run(store) -> None:
    start = utcnow() - timedelta(seconds=100)
    run = q.create_run(store, kind="eval", status="running", total=30, done=10, started_at=start)
    p = q.progress(store, run.id)
    elapsed_max = (utcnow() - start).total_seconds()
    assert 10 / elapsed_max <= p["rate"] <= 10 / 100
    assert p["eta"] == pytest.approx(20 / p["rate"])
    assert p["fraction"] == pytest.approx(1 / 3)


def test_progress_before_start_has_no_rate(store) -> None:
    run = q.create_run(store, kind="eval", total=5)
    p = q.progress(store, run.id)
    assert (p["done"], p["rate"], p["eta"], p["fraction"]) == (0, None, None, 0.0)


# ------------------------------------------------------------------ calls


def test_record_call_writes_a_unit_once(store, item_ids) -> None:
    run = q.create_run(store, kind="eval")
    first = Call(run_id=run.id, item_id=item_ids[0], round=1, answer="first", correct=True)
    again = Call(run_id=run.id, item_id=item_ids[0], round=1, answer="second", correct=False)
    assert q.record_calls(store, [first]) == 1
    assert q.record_calls(store, [again]) == 0
    [stored] = q.run_calls(store, run.id)
    assert (stored.answer, stored.correct) == ("first", True)
    # another stage or round of the same item is another unit
    assert q.record_calls(store, [Call(run_id=run.id, item_id=item_ids[0], round=1,
                                     stage="judge")]) == 1
    assert q.record_calls(store, [{"run_id": run.id, "item_id": item_ids[0], "round": 2}]) == 1
    assert q.count_calls(store, run.id) == 3
    assert q.count_calls(store, run.id, stage="judge") == 1


def test_record_calls_counts_only_new_units(store, item_ids) -> None:
    run = q.create_run(store, kind="stability")
    assert q.record_calls(store, []) == 0
    assert q.record_calls(store, _calls(run.id, item_ids[:5], rounds=(1, 2))) == 10
    batch = _calls(run.id, item_ids[3:8], rounds=(1, 2))  # 4 already stored, 6 new
    batch.append(Call(run_id=run.id, item_id=item_ids[7], round=2))  # repeated in the batch
    assert q.record_calls(store, batch) == 6
    assert q.count_calls(store, run.id) == 16


def test_record_calls_keeps_every_field(store, item_ids) -> None:
    run = q.create_run(store, kind="eval")
    call = Call(run_id=run.id, item_id=item_ids[1], round=3, stage="judge", model="m",
                prompt="问题：1+1=?", answer="二", score=0.5, correct=False, reason="r",
                latency_ms=12.5, prompt_tokens=7, completion_tokens=2, error=None, attempts=3)
    q.record_calls(store, [call])
    [got] = q.run_calls(store, run.id)
    fields = [f for f in Call.model_fields if f not in {"id", "created_at"}]
    assert {f: getattr(got, f) for f in fields} == {f: getattr(call, f) for f in fields}
    assert abs((got.created_at - call.created_at).total_seconds()) < 1e-3


def test_executemany_stores_what_the_returning_insert_stores(store, item_ids) -> None:
    """The runner's executemany binds each value through its column type's processor: the
    rows read back exactly as those of SQLAlchemy's own INSERT (the counting path)."""
    from datetime import datetime, timezone

    east = timezone(timedelta(hours=8))
    values = [dict(item_id=item_ids[0], round=1, stage="answer", model="m", prompt="",
                   answer="答案是 42", score=1.0, correct=True, reason="matched", extracted="42",
                   latency_ms=3.25, prompt_tokens=9, completion_tokens=4, error=None, attempts=2,
                   created_at=datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=east)),
              dict(item_id=item_ids[1], round=2, stage="judge", model="j", prompt="p",
                   answer=None, score=None, correct=None, reason=None, extracted=None,
                   latency_ms=None, prompt_tokens=None, completion_tokens=None,
                   error="HTTP 500", attempts=1, created_at=utcnow())]
    many, counted = q.create_run(store, kind="stability"), q.create_run(store, kind="stability")
    assert q.record_calls(store, [{**v, "run_id": many.id} for v in values]) == 2
    assert q.record_calls(store, [{**v, "run_id": counted.id} for v in values],
                          count_progress=True) == 2
    assert q.get_run(store, counted.id).done == 2  # (the counting path's own update)

    def read(run_id: int) -> list[dict]:
        return [{k: v for k, v in row._mapping.items() if k not in ("id", "run_id")}
                for row in q.run_calls(store, run_id)]

    assert read(many.id) == read(counted.id)
    assert read(many.id)[0]["created_at"] == values[0]["created_at"]  # the instant, in UTC
    assert read(many.id)[0]["created_at"].utcoffset() == timedelta(0)


def test_a_call_needs_an_existing_run_and_item(store, item_ids) -> None:
    from sqlalchemy.exc import IntegrityError

    with pytest.raises(IntegrityError):
        q.record_calls(store, [Call(run_id=12345, item_id=item_ids[0], round=1)])


def test_done_units_and_failed_calls(store, item_ids) -> None:
    run = q.create_run(store, kind="eval")
    other = q.create_run(store, kind="eval")
    q.record_calls(store, _calls(run.id, item_ids[:3]))
    q.record_calls(store, _calls(run.id, item_ids[3:5], error="timeout after 3 attempts"))
    q.record_calls(store, _calls(other.id, item_ids))

    assert q.done_units(store, run.id) == {(i, 1, "answer") for i in item_ids[:5]}
    assert q.done_units(store, run.id, include_failed=False) == {
        (i, 1, "answer") for i in item_ids[:3]}
    assert len(q.done_units(store, other.id)) == len(item_ids)


def test_run_calls_and_iter_calls_stream_in_unit_order(store, item_ids) -> None:
    run = q.create_run(store, kind="stability", rounds=3)
    calls = _calls(run.id, item_ids, rounds=(3, 1, 2))
    calls.reverse()
    q.record_calls(store, calls)
    expected = sorted((i, r, "answer") for i in item_ids for r in (1, 2, 3))

    listed = [(c.item_id, c.round, c.stage) for c in q.run_calls(store, run.id)]
    streamed = [(c.item_id, c.round, c.stage) for c in q.iter_calls(store, run.id, batch=5)]
    assert listed == expected
    assert streamed == expected
    assert list(q.iter_calls(store, run.id, stage="judge")) == []


def test_iter_calls_can_stream_while_the_run_writes(store, item_ids) -> None:
    """An export reading a run must not block (or be blocked by) the runner's writes."""
    run = q.create_run(store, kind="eval")
    q.record_calls(store, _calls(run.id, item_ids[:6]))
    stream = q.iter_calls(store, run.id, batch=2)
    seen = [next(stream)]
    assert q.record_calls(store, _calls(run.id, item_ids[6:])) == len(item_ids) - 6
    q.update_run(store, run.id, done=1)
    seen.extend(stream)
    assert 6 <= len(seen) <= len(item_ids)
    assert q.count_calls(store, run.id) == len(item_ids)


def test_record_calls_can_count_progress_in_the_same_transaction(store, item_ids) -> None:
    run = q.create_run(store, kind="eval", total=len(item_ids))
    other = q.create_run(store, kind="eval")
    batch = _calls(run.id, item_ids[:4]) + _calls(run.id, item_ids[4:6], error="HTTP 500")
    batch += _calls(other.id, item_ids[:1])
    assert q.record_calls(store, batch, count_progress=True) == 7
    assert q.record_calls(store, batch, count_progress=True) == 0  # repeats count nothing
    assert q.record_calls(store, [Call(run_id=run.id, item_id=item_ids[6], round=1)],
                          count_progress=True) == 1
    got, got_other = q.get_run(store, run.id), q.get_run(store, other.id)
    assert (got.done, got.errors) == (7, 2)
    assert (got_other.done, got_other.errors) == (1, 0)
    assert got.heartbeat_at is not None


# ------------------------------------------------------------------ what the runner and reports read


def _dataset_of(engine, item_id: int) -> int:  # type: ignore[no-untyped-def]
    from sqlmodel import select

    from evalcore.store.tables import Item

    with engine.connect() as conn:
        return conn.execute(select(Item.dataset_id).where(Item.id == item_id)).scalar_one()


def test_dataset_item_ids_are_in_file_order(store, make_items) -> None:
    first = make_items(store, 4, name="first")
    second = make_items(store, 3, name="second")
    assert run_items.dataset_item_ids(store, _dataset_of(store, second[0])) == second
    assert run_items.dataset_item_ids(store, _dataset_of(store, second[0]), limit=2) == second[:2]
    assert run_items.dataset_item_ids(store, _dataset_of(store, first[0])) == first


def test_run_questions_follow_the_runs_item_list(store, item_ids) -> None:
    from evalcore.dataset.records import Question

    chosen = [item_ids[5], item_ids[1], item_ids[3]]
    run = q.create_run(store, kind="stability", config={"item_ids": chosen})
    questions = run_items.run_questions(store, run.id)
    assert list(questions) == chosen
    assert all(isinstance(v, Question) for v in questions.values())
    assert [v.question for v in questions.values()] == ["q5", "q1", "q3"]
    assert questions[item_ids[1]].choices == ["A", "B"]


def test_run_questions_default_to_the_whole_dataset(store, item_ids) -> None:
    run = q.create_run(store, kind="eval", dataset_id=_dataset_of(store, item_ids[0]))
    assert list(run_items.run_questions(store, run.id)) == item_ids
    orphan = q.create_run(store, kind="eval", config={"item_ids": [item_ids[0], 99999]})
    with pytest.raises(RunError, match="no longer in the database"):
        run_items.run_questions(store, orphan.id)


def test_unjudged_answers_are_what_a_resume_still_judges(store, item_ids) -> None:
    run = q.create_run(store, kind="stability")
    a, b, c, d = item_ids[:4]
    q.record_calls(store, [
        Call(run_id=run.id, item_id=a, round=1, answer="judged"),
        Call(run_id=run.id, item_id=a, round=1, stage="judge", correct=True),
        Call(run_id=run.id, item_id=b, round=2, answer="waiting"),
        Call(run_id=run.id, item_id=b, round=1, answer="waiting too"),
        Call(run_id=run.id, item_id=c, round=1, error="HTTP 500"),  # failed: nothing to judge
        Call(run_id=run.id, item_id=d, round=1, answer=None),
    ])
    assert q.unjudged_answers(store, run.id) == [(b, 1, "waiting too"), (b, 2, "waiting")]


def test_call_stats_say_what_each_call_was_for(store, item_ids) -> None:
    """A re-judged run's "calls 570" read as 570 answers: the stages are counted apart."""
    run = q.create_run(store, kind="stability")
    stages = ["answer", "answer", "judge", "answer#7", "rejudge0:3", "rejudge1:3",
              "analysis", "meaning:1-2", "variant:order1"]
    q.record_calls(store, [Call(run_id=run.id, item_id=item_ids[0], round=i + 1, stage=stage,
                                latency_ms=10.0 * (i + 1))
                           for i, stage in enumerate(stages)])
    stats = call_usage.call_stats(store, run.id)
    assert stats["by_pass"] == {"answer": 2, "judge": 1, "retried": 1, "rejudge": 2,
                                "analysis": 1, "meaning": 1, "variant": 1}
    assert stats["calls"] == len(stages)
    assert stats["mean_latency_ms"] == pytest.approx(50.0)


def test_call_stats_sum_a_runs_calls(store, item_ids) -> None:
    run = q.create_run(store, kind="eval")
    other = q.create_run(store, kind="eval")
    q.record_calls(store, [
        Call(run_id=run.id, item_id=item_ids[0], round=1, prompt_tokens=10, completion_tokens=5,
             latency_ms=100.0),
        Call(run_id=run.id, item_id=item_ids[1], round=1, prompt_tokens=20, completion_tokens=1,
             latency_ms=300.0),
        Call(run_id=run.id, item_id=item_ids[2], round=1, error="timeout"),
        Call(run_id=other.id, item_id=item_ids[0], round=1, prompt_tokens=1000),
    ])
    stats = call_usage.call_stats(store, run.id)
    by_pass = stats.pop("by_pass")
    assert stats == {"calls": 3, "errors": 1, "tokens": 36, "prompt_tokens": 30,
                     "completion_tokens": 6, "mean_latency_ms": pytest.approx(200.0)}
    assert by_pass["answer"] == 3 and sum(by_pass.values()) == 3
    empty = call_usage.call_stats(store, q.create_run(store, kind="eval").id)
    assert empty["calls"] == 0 and empty["tokens"] == 0 and empty["mean_latency_ms"] is None


def test_iter_call_rows_join_items_in_item_round_stage_order(store, item_ids) -> None:
    run = q.create_run(store, kind="stability", rounds=2)
    calls = [Call(run_id=run.id, item_id=i, round=r, stage=s, answer=f"{i}/{r}/{s}")
             for i in reversed(item_ids[:3]) for r in (2, 1) for s in ("judge", "answer")]
    q.record_calls(store, calls)
    rows = list(q.iter_call_rows(store, run.id, batch=4))
    assert [(r["item_idx"], r["round"], r["stage"]) for r in rows] == [
        (idx, r, s) for idx in range(3) for r in (1, 2) for s in ("answer", "judge")]
    first = rows[0]
    assert first["question"] == "q0" and first["choices"] == ["A", "B"]
    assert first["answer"] == f"{item_ids[0]}/1/answer"
    assert "prompt" not in first and "item_id" in first


# ------------------------------------------------------------------ browsing items


def test_list_items_pages_and_searches_in_the_database(store) -> None:
    """The Datasets page's browser: one page of rows plus the matching count."""
    from evalcore.dataset import import_dataset

    lines = ["id,question,answer"] + [f"K{n},Question {n} about apples,{n * 2}"
                                      for n in range(1, 121)]
    lines += ["X1,100% sure_thing?,yes", "x2,Plain one,APPLE pie"]
    dataset = import_dataset(store, "\n".join(lines).encode(), filename="apples.csv",
                             mapping={"question": "question", "reference": "answer"})
    rows, total = run_items.list_items(store, dataset.id, offset=50, limit=50)
    assert total == 122 and len(rows) == 50
    assert [r["number"] for r in rows] == list(range(51, 101))
    assert rows[0]["question"] == "Question 51 about apples" and rows[0]["reference"] == "102"
    rows, total = run_items.list_items(store, dataset.id, offset=100, limit=50)
    assert total == 122 and [r["number"] for r in rows][-1] == 122
    # case-insensitive substring of the question or the reference
    _, total = run_items.list_items(store, dataset.id, search="APPLES")
    assert total == 120
    rows, total = run_items.list_items(store, dataset.id, search="apple pie")
    assert (total, [r["number"] for r in rows]) == (1, [122])
    # the file's own id column, and the item's number
    rows, total = run_items.list_items(store, dataset.id, search="k11")
    assert total == 11 and rows[0]["question"] == "Question 11 about apples"  # K11, K110..K119
    rows, _ = run_items.list_items(store, dataset.id, search="121")
    assert [r["number"] for r in rows] == [121]
    # LIKE wildcards are plain characters
    rows, total = run_items.list_items(store, dataset.id, search="0% sure_")
    assert (total, [r["number"] for r in rows]) == (1, [121])
    _, total = run_items.list_items(store, dataset.id, search="_")
    assert total == 1
    assert run_items.list_items(store, dataset.id, search="nothing like this") == ([], 0)


def test_list_items_searches_the_options_too(store) -> None:
    """An option's words find its item, in English and in Chinese (stored JSON escapes)."""
    from evalcore.dataset import import_dataset

    lines = ["question,opt_a,opt_b,answer", "Which fruit?,Pear,Quince,A",
             "哪个是水果？,苹果,石头,A", "Which colour?,Red,Blue,B"]
    dataset = import_dataset(store, "\n".join(lines).encode(), filename="options.csv",
                             mapping={"question": "question", "reference": "answer",
                                      "choices": ["opt_a", "opt_b"], "task_type": "choice"})
    rows, total = run_items.list_items(store, dataset.id, search="quince")
    assert (total, [r["number"] for r in rows]) == (1, [1])
    rows, total = run_items.list_items(store, dataset.id, search="石头")
    assert (total, [r["number"] for r in rows]) == (1, [2])
