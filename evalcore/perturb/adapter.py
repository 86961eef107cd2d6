"""The perturbation engine's checks run in batches (one embedding call per batch)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

from evalcore.perturb.guard import check_attack
from evalcore.scorers.text import embedding_cosine_batch

if TYPE_CHECKING:
    from evalcore.dataset.records import Question

def check_many(pairs: Sequence[tuple["Question", str]], *, similarity: bool = True
               ) -> list[tuple[Optional[float], list[str]]]:
    """`check_attack` for many (clean question, attacked text) pairs, embeddings in one batch.

    Without `similarity` no embedding is computed (the slow part: see bench/attack_bench.py)
    and "low_similarity" is never flagged; the other checks still run.
    """
    if not pairs:
        return []
    if not similarity:
        return [check_attack(q, a, embed=False) for q, a in pairs]
    cosines = embedding_cosine_batch([a for _, a in pairs], [q.question for q, _ in pairs])
    return [check_attack(q, a, similarity=c) for (q, a), c in zip(pairs, cosines)]
