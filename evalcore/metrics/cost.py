"""What calls cost: prices per million input/output tokens (a model entry's `price_in`,
`price_out`) times the tokens the provider reported.

Pure functions: the report code passes token totals and the prices frozen in a run's
model snapshots (`run.config["models"]`), the pages and the runner pass the prices of
the model entry. A model without a price gives None (unknown), never 0, so a free-looking
row cannot hide a missing price.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Optional

PER = 1_000_000
"""Prices are quoted per million tokens."""


def prices_of(entry: Mapping[str, Any] | Any) -> tuple[Optional[float], Optional[float]]:
    """(price_in, price_out) of a model entry: a ModelConfig or its snapshot dict."""
    get = entry.get if isinstance(entry, Mapping) else (lambda k, d=None: getattr(entry, k, d))
    return get("price_in", None), get("price_out", None)


def call_cost(prompt_tokens: Optional[int], completion_tokens: Optional[int],
              price_in: Optional[float], price_out: Optional[float]) -> Optional[float]:
    """Cost of one call; None when a price is unknown. Missing token counts count as 0."""
    if price_in is None or price_out is None:
        return None
    return ((prompt_tokens or 0) * price_in + (completion_tokens or 0) * price_out) / PER


def run_cost(tokens_by_model: Mapping[str, tuple[int, int]],
             models: Mapping[str, Any]) -> Optional[float]:
    """Cost of a run: {model name: (prompt tokens, completion tokens)} priced with the
    model entries in `models` (snapshots or ModelConfigs). None when any model that
    used tokens has no price: a partial sum would understate the cost."""
    total = 0.0
    for name, (prompt, completion) in tokens_by_model.items():
        if not prompt and not completion:
            continue
        entry = models.get(name)
        cost = call_cost(prompt, completion, *prices_of(entry)) if entry is not None else None
        if cost is None:
            return None
        total += cost
    return total


def estimate_cost(prompt_lengths: Iterable[int], rounds: int, *, price_in: Optional[float],
                  price_out: Optional[float], completion_tokens: int = 256,
                  chars_per_token: float = 4.0, prompt_overhead: int = 40,
                  judge: Optional[tuple[Optional[float], Optional[float]]] = None
                  ) -> dict[str, Any]:
    """The cost before a run starts: items x rounds x expected tokens.

    Prompt tokens come from each item's prompt length (characters / `chars_per_token`,
    plus `prompt_overhead` for the template; use ~1.5 for Chinese text); each answer is
    assumed to use `completion_tokens` (the model's max_tokens is the upper bound).
    A judge model (its prices) reads prompt + answer and writes a short verdict.
    """
    lengths = list(prompt_lengths)
    prompt = sum(int(n / chars_per_token) + prompt_overhead for n in lengths) * rounds
    completion = completion_tokens * len(lengths) * rounds
    cost = call_cost(prompt, completion, price_in, price_out)
    judge_cost = None
    if judge is not None:
        judge_cost = call_cost(prompt + completion, 32 * len(lengths) * rounds, *judge)
        cost = None if cost is None or judge_cost is None else cost + judge_cost
    return {"calls": len(lengths) * rounds, "prompt_tokens": prompt,
            "completion_tokens": completion, "judge_cost": judge_cost, "cost": cost}


def budget_exceeded(spent: Optional[float], next_call: Optional[float],
                    budget: Optional[float]) -> bool:
    """Whether making one more call would pass a run's budget (the runner's stop rule).
    Unknown costs or no budget never stop a run."""
    if budget is None or spent is None or next_call is None:
        return False
    return spent + next_call > budget
