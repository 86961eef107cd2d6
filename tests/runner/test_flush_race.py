"""A finished call is never lost between the runner's loop and its writer's thread.

The loop appends each finished call to the run's buffer; the writer stores the buffer
every FLUSH_INTERVAL_S in a worker thread. The buffer used to be swapped for an empty one
in that thread: a call finishing at that moment (`job.rows.append` bound to the old
list, then its row built) went into the list the thread had already stored, and was
lost: the run ended 'done' with 79 of its 80 calls (seen once in the kill -9 takeover
test). Here the thread's read of the buffer is held until the loop has bound `append`,
and the loop's append until the thread has stored that list: the interleaving the GIL
allowed at random, made certain."""
from __future__ import annotations

import threading

import pytest

from evalcore.runner import run as run_module
from evalcore.runner.plan import RunSpec
from evalcore.runner.start import store_run, run_in_foreground
from evalcore.store import queries
from tests.fakes.fault_server import FaultConfig, FaultServer
from tests.runner.conftest import add_model

pytestmark = pytest.mark.integration
WAIT_S = 3.0
"""Longest each side waits for the other (the fixed runner never makes either wait)."""


def test_a_call_finished_while_the_writer_takes_the_buffer_is_stored(engine, settings,
                                                                     dataset, monkeypatch):
    loop_thread = threading.current_thread()  # run_in_foreground runs its loop here
    reader_waits, bound, stored = threading.Event(), threading.Event(), threading.Event()

    class Buffer(list):
        """The run's first buffer: its `append`, looked up on the loop while a thread
        reads the buffer, waits until that thread has stored it."""

        def __getattribute__(self, name: str):  # noqa: ANN204
            if (name == "append" and threading.current_thread() is loop_thread
                    and reader_waits.is_set() and not bound.is_set()):
                bound.set()
                stored.wait(WAIT_S)
            return super().__getattribute__(name)

        def __iter__(self):  # noqa: ANN204
            yield from super().__iter__()
            if threading.current_thread() is not loop_thread:
                stored.set()  # the thread has read every row of it

    class Job(run_module._Job):
        @property
        def rows(self) -> list:
            if threading.current_thread() is not loop_thread and not reader_waits.is_set():
                reader_waits.set()
                bound.wait(WAIT_S)  # until a finished call's append is bound
            return self._buffer

        @rows.setter
        def rows(self, value: list) -> None:
            first = "_buffer" not in self.__dict__
            self.__dict__["_buffer"] = Buffer(value) if first else value

    monkeypatch.setattr(run_module, "_Job", Job)
    with FaultServer(FaultConfig(latency=0.3)) as server:
        add_model(settings, server, concurrency=2)
        run_id = store_run(engine, RunSpec(dataset=dataset, model="fake", rounds=2),
                           settings.models_path)  # 12 calls, 2 at a time: ~1.8 s
        assert run_in_foreground(engine, run_id) == "done"
    assert queries.count_calls(engine, run_id) == 12
    run = queries.get_run(engine, run_id)
    assert (run.done, run.total) == (12, 12)
