"""Waiting for what a test asserts, never for a fixed time.

A test that sleeps a fixed time and then asserts on stored state passes on an idle
machine and fails under load (three xdist workers, chromium and servers on two cores):
the state arrives, only later. Poll the condition itself with a deadline that fits a
loaded machine instead; the deadline only bounds a failure, a pass returns at once.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import pytest

T = TypeVar("T")


def wait_for(condition: Callable[[], T], timeout: float, what: str,
             explain: Callable[[], str] | None = None, every: float = 0.05) -> T:
    """`condition()`'s first true value; fail after `timeout` seconds naming `what`, with
    `explain()` (what the processes were doing) in the message when given."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}"
                        + (f"\n{explain()}" if explain else ""))
        time.sleep(every)


def still(condition: Callable[[], bool], seconds: float, what: str,
          every: float = 0.05) -> None:
    """Fail if `condition()` turns false within `seconds`: for claims that something does
    NOT happen (a second run is not created), checked after the thing that could cause it
    has been handled. Under load this can only pass wrongly, never fail wrongly."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not condition():
            pytest.fail(f"no longer true: {what}")
        time.sleep(every)
