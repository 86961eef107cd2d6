"""Importing an attacked file is a job: the file is checked when it is queued, its bytes
wait in the database, any worker imports it all or nothing, and a takeover finds what an
earlier attempt stored instead of importing twice."""
from __future__ import annotations

import csv
import io

import pytest

from evalcore.perturb import set_import
from evalcore.perturb.sets import AttackSetError, DuplicateAttackFileError, list_attack_sets
from evalcore.runner.attack import create_import_job
from evalcore.runner.start import run_job_here
from evalcore.store.jobs import get_job, list_jobs
from evalcore.store.tables import Dataset, Upload

HEADER = ["id", "question", "segmented_text", "equation", "answer", "attacked_question",
          "attack_num", "synword_pairs"]
ROWS = [[str(k), f"小明有{k}个苹果，又买了{k}个，一共有多少个？", "", f"x={k}+{k}", str(2 * k),
         f"小明有{k}个苹果，又买了{k}个，总共有多少个？", "1", "{'一共': '总共'}"]
        for k in range(1, 8)]
NAME = "Apples_underwordattack.csv"


def _bytes(rows: list[list[str]] = ROWS) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer).writerows([HEADER, *rows])
    return buffer.getvalue().encode("utf-8")


def _count(engine, table) -> int:  # noqa: ANN001
    with engine.connect() as conn:
        return len(conn.execute(table.__table__.select()).fetchall())


def test_the_job_imports_the_file_reports_progress_and_drops_the_upload(engine) -> None:
    job_id = create_import_job(engine, _bytes(), filename=NAME, similarity=False,
                               created_by="ana")
    queued = get_job(engine, job_id)
    assert (queued.kind, queued.status, queued.total, queued.created_by) == (
        "attack_import", "queued", 7, "ana")
    assert _count(engine, Upload) == 1 and list_attack_sets(engine) == []
    seen: list[tuple[int, int]] = []
    assert run_job_here(engine, job_id, on_progress=lambda d, t: seen.append((d, t))) == "done"
    job = get_job(engine, job_id)
    (made,) = list_attack_sets(engine)
    assert job.result == {"attack_set_id": made.id, "items": 7}
    assert (job.done, job.total) == (7, 7) and seen[-1] == (7, 7)
    assert (made.name, made.level, made.origin, made.created_by, made.params["job_id"]) == (
        "Apples_underwordattack", "word", "imported", "ana", job_id)
    assert _count(engine, Upload) == 0


def test_progress_comes_in_steps_of_check_batch(engine, monkeypatch) -> None:
    monkeypatch.setattr(set_import, "CHECK_BATCH", 3)
    seen: list[tuple[int, int]] = []
    job_id = create_import_job(engine, _bytes(), filename=NAME, similarity=False)
    run_job_here(engine, job_id, on_progress=lambda d, t: seen.append((d, t)))
    assert seen == [(3, 7), (6, 7), (7, 7)]


@pytest.mark.parametrize("data,filename,error", [
    (b"question,answer\n1+1,2\n", "plain.csv", "not an attacked file"),
    (_bytes(), "apples.csv", "does not say the attack level"),
])
def test_a_file_that_cannot_be_imported_is_refused_before_anything_is_queued(
        engine, data, filename, error) -> None:
    with pytest.raises(AttackSetError, match=error):
        create_import_job(engine, data, filename=filename)
    assert list_jobs(engine) == [] and _count(engine, Upload) == 0


def test_the_same_file_again_is_refused_at_once_unless_allowed(engine) -> None:
    run_job_here(engine, create_import_job(engine, _bytes(), filename=NAME, similarity=False))
    with pytest.raises(DuplicateAttackFileError):
        create_import_job(engine, _bytes(), filename=NAME)
    assert len(list_jobs(engine)) == 1
    again = create_import_job(engine, _bytes(), filename=NAME, similarity=False,
                              allow_duplicate=True)
    assert run_job_here(engine, again) == "done"
    assert [s.name for s in list_attack_sets(engine)] == [
        "Apples_underwordattack", "Apples_underwordattack-2"]


def test_a_takeover_finds_the_set_an_earlier_attempt_stored(engine) -> None:
    """The worker died after the import committed and before the job was marked done:
    the next attempt returns that set and imports nothing twice."""
    job_id = create_import_job(engine, _bytes(), filename=NAME, similarity=False,
                               allow_duplicate=True)
    first = set_import.import_attack_set(engine, _bytes(), filename=NAME, check=False,
                                   allow_duplicate=True, job_id=job_id)
    datasets = _count(engine, Dataset)
    assert run_job_here(engine, job_id) == "done"
    assert [s.id for s in list_attack_sets(engine)] == [first.id]
    assert get_job(engine, job_id).result["attack_set_id"] == first.id
    assert _count(engine, Dataset) == datasets and _count(engine, Upload) == 0


def test_a_fence_that_refuses_leaves_nothing_written(engine) -> None:
    """The import is one transaction behind the job's fence: a worker whose lease was
    taken over writes no dataset, no set and no item."""
    def lost(conn) -> None:  # noqa: ANN001
        raise RuntimeError("lease lost")

    with pytest.raises(RuntimeError, match="lease lost"):
        set_import.import_attack_set(engine, _bytes(), filename=NAME, similarity=False, fence=lost)
    assert list_attack_sets(engine) == [] and _count(engine, Dataset) == 0


def test_a_cancelled_import_stores_nothing_and_drops_the_upload(engine, monkeypatch) -> None:
    import time

    from evalcore.store.jobs import cancel_job

    monkeypatch.setattr(set_import, "CHECK_BATCH", 1)
    job_id = create_import_job(engine, _bytes(), filename=NAME, similarity=False)

    def slow(done: int, total: int) -> None:  # the checks take a while; the user cancels
        if done == 1:
            cancel_job(engine, job_id)
        time.sleep(0.3)

    assert run_job_here(engine, job_id, on_progress=slow) == "cancelled"
    assert list_attack_sets(engine) == [] and _count(engine, Dataset) == 0
    assert _count(engine, Upload) == 0


def test_two_imports_queued_together_each_get_a_free_name(engine) -> None:
    first = create_import_job(engine, _bytes(), filename=NAME, similarity=False)
    second = create_import_job(engine, _bytes(), filename=NAME, similarity=False,
                               allow_duplicate=True)
    assert run_job_here(engine, first) == "done" and run_job_here(engine, second) == "done"
    assert sorted(s.name for s in list_attack_sets(engine)) == [
        "Apples_underwordattack", "Apples_underwordattack-2"]


def test_a_name_already_taken_is_refused_before_anything_is_queued(engine) -> None:
    run_job_here(engine, create_import_job(engine, _bytes(), filename=NAME, name="mine",
                                           similarity=False))
    with pytest.raises(AttackSetError, match="'mine' already exists"):
        create_import_job(engine, _bytes(), filename=NAME, name="mine", allow_duplicate=True)
    assert len(list_jobs(engine)) == 1


def test_the_bytes_are_stored_with_their_job_or_not_at_all(engine, monkeypatch) -> None:
    from evalcore.store import jobs

    def refuse(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise RuntimeError("the queue is unavailable")

    monkeypatch.setattr(jobs, "create_job", refuse)
    with pytest.raises(RuntimeError, match="unavailable"):
        create_import_job(engine, _bytes(), filename=NAME)
    assert _count(engine, Upload) == 0
