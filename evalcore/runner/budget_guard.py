"""A run's spending limit: the cost so far (stored calls priced with the run's model
snapshots) plus each call as it returns; before a call is sent, its expected cost is
checked against the budget, and the run stops (cancelled, resumable with a higher
budget) instead of passing it. Unknown prices never stop a run."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from sqlalchemy.engine import Engine

from evalcore.metrics.cost import budget_exceeded, call_cost, prices_of, run_cost
from evalcore.store.run_reads import tokens_by_model

CHARS_PER_TOKEN = 4.0
"""Rough prompt tokens per character, for the expected cost of a call not yet sent."""


@dataclass
class Budget:
    limit: Optional[float]
    spent: Optional[float]
    reached: bool = False

    def allows(self, prompt: str, model: Any) -> bool:
        """Whether one more call of `model` with `prompt` stays within the limit."""
        if self.limit is None:
            return True
        expected = call_cost(int(len(prompt) / CHARS_PER_TOKEN) + 40, model.max_tokens or 256,
                             *prices_of(model))
        if budget_exceeded(self.spent, expected, self.limit):
            self.reached = True
        return not self.reached

    def add(self, reply: Any, model: Any) -> None:
        """Count a returned call (tokens as the provider reported them)."""
        if self.spent is None:  # no budget, or an unknown price: nothing to add up
            return
        cost = call_cost(reply.prompt_tokens, reply.completion_tokens, *prices_of(model))
        if cost is not None:
            self.spent += cost

    def reason(self) -> str:
        return (f"budget {self.limit:g} reached (spent {self.spent:.4f}); resume with a "
                "higher --budget to go on")


def run_budget(engine: Engine, run: Any, limit: Optional[float]) -> Budget:
    """The budget of `run` with what its stored calls already cost."""
    if limit is None:
        return Budget(None, None)

    tokens = tokens_by_model(engine, int(run.id))
    return Budget(limit, run_cost(tokens, run.config.get("models", {})))
