"""Cost before a run starts, for the pages and the CLI: a dataset's items x rounds x the
tokens expected from its prompt lengths, priced with the model entries (`metrics.cost`).

Characters per token: ~1.5 for Chinese, ~4 for other languages (the dataset's
language). Each answer is expected to use `EXPECTED_COMPLETION` tokens, or the model's
max_tokens when that is lower (the most it can write).
"""
from __future__ import annotations

from typing import Any, Optional

from sqlalchemy.engine import Engine

from evalcore.dataset import get_dataset
from evalcore.metrics.cost import estimate_cost, prices_of
from evalcore.store.datasets import item_texts

EXPECTED_COMPLETION = 256
CHARS_PER_TOKEN = {"zh": 1.5}
DEFAULT_CHARS_PER_TOKEN = 4.0


def prompt_lengths(engine: Engine, dataset: str | int, limit: Optional[int] = None) -> list[int]:
    """Character lengths of a dataset's questions (with their options), in file order."""
    ds = get_dataset(engine, dataset)
    return [len(q or "") + sum(len(str(c)) + 4 for c in (choices or []))
            for q, choices in item_texts(engine, int(ds.id), limit)]  # type: ignore[arg-type]


def estimate_run_cost(engine: Engine, dataset: str | int, model: Any, rounds: int, *,
                      limit: Optional[int] = None, judge: Any = None) -> dict[str, Any]:
    """The estimate shown before a run: calls, tokens and cost (None without prices).

    `model` and `judge` are model entries (ModelConfig or snapshot dicts)."""
    language = get_dataset(engine, dataset).language
    max_tokens = (model.get("max_tokens") if isinstance(model, dict)
                  else getattr(model, "max_tokens", None))
    price_in, price_out = prices_of(model)
    return estimate_cost(
        prompt_lengths(engine, dataset, limit), rounds, price_in=price_in, price_out=price_out,
        completion_tokens=min(EXPECTED_COMPLETION, max_tokens or EXPECTED_COMPLETION),
        chars_per_token=CHARS_PER_TOKEN.get(language, DEFAULT_CHARS_PER_TOKEN),
        judge=prices_of(judge) if judge is not None else None)
