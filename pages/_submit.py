"""Start forms' submit buttons: one click, one submission, and numbers checked here.

Every start form (Stability, Robustness, Fairness, attack generation) sends its click
through `submission`, which hands the action an idempotency key, and reads its bounded
numbers with `number_field`, so an out-of-range value refuses the start and says why.
"""
from __future__ import annotations

import sys
import time
import uuid
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

import streamlit as st

from evalcore.markup import md

from pages import _shared

SUBMITTED = "{}.submissions"  # session key: how many clicks a start button has handled
PENDING = "{}.pending"  # session key: the idempotency key of a submission not finished
LAST = "{}.last"  # session key: (idempotency key, monotonic time) of the last one finished
DOUBLE_CLICK_S = 3.0
"""A click this soon after the last submission finished, with no other rerun of the page
in between, is its double click's second half (it landed on the fresh button): it is
sent with the same key, so it creates nothing new. A deliberate new start after changing
an input (a rerun) is new at once; an identical one waits this long."""


@contextmanager
def submission(label: str, permission: str, key: str, *, disabled: bool = False,
               help: str | None = None, invalid: Sequence[str] = ()) -> Iterator[str | None]:
    """A start form's submit button: one click, one submission. Yields None, or when
    clicked the submission's idempotency key to hand to the action (`evalcore.actions`),
    which never creates a second run or job for one key.

    A double click sends the click twice. While the first is being submitted the button
    is swapped for a disabled one; once it is done a new button (a new widget key, so a
    click still on its way from the old one is ignored) stands for the next submission.
    The second click gets the first one's key when the first was cut short by it (the
    key was pending) or had finished under DOUBLE_CLICK_S before with no rerun since, so
    the action hands back what the first one created. `invalid`: reasons the form cannot be sent
    (out-of-range numbers): the button is disabled and says why.
    """
    state = st.session_state
    count = int(state.get(SUBMITTED.format(key), 0))
    widget = key if count == 0 else f"{key}.{count}"
    slot = st.empty()
    reasons = "; ".join(invalid)
    with slot.container():
        clicked = _shared.allowed_button(label, permission, key=widget, type="primary",
                                         disabled=disabled or bool(invalid),
                                         help=f"Not started: {reasons}" if invalid else help)
    if invalid:
        st.error(f"Not started: {md(reasons)}.")
    if not clicked:
        # the page ran without a click (an input changed ...): the next click is a new
        # submission, however soon it comes
        state.pop(LAST.format(key), None)
        yield None
        return
    slot.button(label, key=f"{widget}.busy", type="primary", disabled=True,
                help="Submitting...")
    submit_key = state.get(PENDING.format(key)) or _recent(key) or uuid.uuid4().hex
    state[PENDING.format(key)] = submit_key  # kept if this run is cut short
    try:
        yield submit_key
    finally:
        if sys.exc_info()[0] is None or isinstance(sys.exc_info()[1], Exception):
            state.pop(PENDING.format(key), None)
            state[LAST.format(key)] = (submit_key, time.monotonic())
            state[SUBMITTED.format(key)] = count + 1
            with slot.container():  # a fresh button for the next submission
                _shared.allowed_button(label, permission, key=f"{key}.{count + 1}",
                                       type="primary", help=help)


def _recent(key: str) -> str | None:
    """The last finished submission's key if it finished under DOUBLE_CLICK_S ago."""
    last = st.session_state.get(LAST.format(key))
    if last and time.monotonic() - last[1] < DOUBLE_CLICK_S:
        return str(last[0])
    return None


def number_field(where: Any, label: str, *, low: float, high: float | None, value: float,
                 step: float, key: str, problems: list[str], help: str | None = None,
                 name: str | None = None) -> Any:
    """A number input whose bounds are checked here, not by the browser: the browser keeps
    an out-of-range typed value (red border) but sends the last valid one, so the form
    would start with a value the user does not see. Here the typed value arrives; when it
    is out of bounds the reason is added to `problems` (the form then refuses to start)
    and the value returned is brought into bounds for the form's estimates."""
    number = where.number_input(label, value=value, step=step, key=key, help=help)
    if number < low or (high is not None and number > high):
        bounds = f"from {low:g} to {high:g}" if high is not None else f"at least {low:g}"
        problems.append(f"{name or label} must be {bounds} (it is {number:g})")
        where.caption(f":red[{md(name or label)}: enter a number {md(bounds)}.]")
    # the rest of the form (its estimates) reads a value in range; the start is refused
    clamped = max(number, low) if high is None else min(max(number, low), high)
    return type(number)(clamped)
