"""What a run is asked to do (`RunSpec`) and which calls are still to make (`plan_units`).

The plan is derived, never stored: it is every (item, round) of the run minus the calls
the database already holds, so a resumed run can never send a stored call again.
"""
from __future__ import annotations

from typing import Annotated, Any, Iterable, Iterator, Literal, Optional

import msgspec

from evalcore.errors import RunError
from evalcore.values import validated

Schedule = Literal["sequential", "question", "round"]
"""How a run's (question, round) calls go out; all three keep every answer:

- `sequential` (sequential rounds per question, the method's recommended scheme): C
  questions in flight at once, and round k+1 of a question is sent only after round k's
  answer came back. With fewer questions than slots, slots stay idle: the method's cost.
- `question` (question-first order): one stream in question order; several rounds of a
  question may be in flight together, so every slot stays busy.
- `round` (round-first order): round 1 of every question first, then round 2 ...
"""


class RunSpec(msgspec.Struct, kw_only=True):
    """Everything needed to start (and later resume) an evaluation run.

    The constructor checks no ranges: a spec from a form, flags or a stored config is made
    by `run_spec`, which does."""

    kind: str = "stability"
    dataset: str
    """Dataset name (or numeric id as text)."""
    model: str
    """Model name from models.toml."""
    rounds: Annotated[int, msgspec.Meta(ge=1, le=100)] = 1
    judge: str = "rules"
    """`rules` (the task type's scorer) or the name of a judge model."""
    schedule: Schedule = "question"
    """`sequential`, `question` or `round` (see `Schedule`)."""
    prompt_style: Literal["zero", "few"] = "zero"
    template: Optional[str] = None
    """A custom prompt template (placeholders as in evalcore.prompt); None = the task type's default."""
    limit: Optional[Annotated[int, msgspec.Meta(ge=1)]] = None
    """Use only the first K items."""
    item_ids: Optional[list[int]] = None
    """Use only these items (after `limit`)."""
    concurrency: Optional[Annotated[int, msgspec.Meta(ge=1, le=1000)]] = None
    """Override the model's concurrency for this run."""
    temperature: Optional[Annotated[float, msgspec.Meta(ge=0, le=2)]] = None
    """Override the model's temperature for this run."""
    budget: Optional[Annotated[float, msgspec.Meta(gt=0)]] = None
    """Stop the run (cancelled, resumable) before its calls would cost more than this
    (in the currency of the models' `price_in` / `price_out`); None = no limit."""
    name: str = ""
    created_by: str = ""
    extra: dict = msgspec.field(default_factory=dict)
    """Kind-specific settings (e.g. attack set id) that the generic runner carries along."""


def run_spec(data: Any) -> RunSpec:
    """`data` (a form's / flags' fields, a stored run config's "spec") as a checked
    `RunSpec`: types, ranges (rounds 1-100, concurrency 1-1000, temperature 0-2, budget
    > 0, limit >= 1) and the schedule / prompt style. Raises RunError naming the field and
    what is allowed, never the value."""
    return validated(RunSpec, data, fail=lambda why: RunError(
        f"invalid run setting: {why} (see --help for allowed values)"))


Unit = tuple[int, int]
"""(item_id, round) of one answer call; round is 1-based."""


def plan_units(item_ids: Iterable[int], rounds: int, schedule: Schedule,
               done: set[Unit] | frozenset[Unit] = frozenset()) -> Iterator[Unit]:
    """The answer calls still to make, in dispatch order.

    Every worker pulls from this one ordered stream, so the model's slots stay full
    whatever the schedule, also when there are fewer questions than slots and at the
    tail of the run: `question` order only decides which calls go out first.
    """
    ids = list(item_ids)
    if schedule in ("question", "sequential"):
        pairs = ((i, r) for i in ids for r in range(1, rounds + 1))
    else:
        pairs = ((i, r) for r in range(1, rounds + 1) for i in ids)
    return (unit for unit in pairs if unit not in done)


def by_question(units: Iterable[Unit]) -> Iterator[tuple[int, list[int]]]:
    """(item_id, its rounds still to make, in order) from a question-ordered stream: what
    a worker of the `sequential` schedule takes at once."""
    current: Optional[int] = None
    rounds: list[int] = []
    for item_id, rnd in units:
        if item_id != current and rounds:
            yield current, rounds  # type: ignore[misc]
            rounds = []
        current = item_id
        rounds.append(rnd)
    if rounds:
        yield current, rounds  # type: ignore[misc]
