"""The perturbation engine's functions, found by name, and its checks run in batches.

Attack sets call the engine through `engine_fn` so a missing function is one clear error
("update evalcore"), not an ImportError deep in a job.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

from evalcore.perturb.sets import AttackSetError
from evalcore.scorers.text import embedding_cosine_batch

if TYPE_CHECKING:
    from evalcore.dataset.records import Question

_ENGINE_HOMES = {"attack_questions": ("evalcore.perturb", "evalcore.perturb.attack"),
                 "check_attack": ("evalcore.perturb", "evalcore.perturb.guard"),
                 "make_translator": ("evalcore.perturb", "evalcore.perturb.sentence",
                                     "evalcore.perturb.translate")}


def engine_fn(name: str) -> Callable[..., Any]:
    """A function of the perturbation engine (evalcore.perturb), or a clear error."""
    for module in _ENGINE_HOMES[name]:
        try:
            found = getattr(importlib.import_module(module), name, None)
        except ImportError:
            continue
        if found is not None:
            return found
    raise AttackSetError(f"the perturbation engine has no {name} (evalcore.perturb); "
                         "update evalcore")


def check_many(pairs: Sequence[tuple["Question", str]], *, similarity: bool = True
               ) -> list[tuple[Optional[float], list[str]]]:
    """`check_attack` for many (clean question, attacked text) pairs, embeddings in one batch.

    Without `similarity` no embedding is computed (the slow part: see bench/attack_bench.py)
    and "low_similarity" is never flagged; the other checks still run.
    """
    check = engine_fn("check_attack")
    if not pairs:
        return []
    if not similarity:
        return [check(q, a, embed=False) for q, a in pairs]
    cosines = embedding_cosine_batch([a for _, a in pairs], [q.question for q, _ in pairs])
    return [check(q, a, similarity=c) for (q, a), c in zip(pairs, cosines)]
