"""The perturbation engine's checks run in batches (one embedding call per batch)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

from evalcore.perturb.attack import _option_similarities, option_flags
from evalcore.perturb.guard import DEFAULT_SIMILARITY_THRESHOLD, FLAG_UNCHANGED, check_attack
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


def with_option_checks(checked: Sequence[tuple[Optional[float], list[str]]],
                       questions: Sequence["Question"], choices: Sequence[Sequence[str]], *,
                       similarity: bool = True) -> list[tuple[Optional[float], list[str]]]:
    """`check_many` results with attacked options checked too, as the engine's own word
    attack does: an item whose options changed is not "unchanged", each changed option is
    held to the same guard (numbers, names, e5 similarity to its original), and the
    item's similarity is the lowest of its question's and its changed options'.

    `choices[n]` are the attacked options of `questions[n]` (empty: none were attacked)."""
    option_sims = _option_similarities(list(questions), [list(c) for c in choices], similarity)
    out = []
    for (sim, flags), question, options, sims in zip(checked, questions, choices, option_sims):
        if not options or list(options) == list(question.choices):
            out.append((sim, flags))
            continue
        kept = [f for f in flags if f != FLAG_UNCHANGED]
        kept += [f for f in option_flags(question, list(options), sims,
                                         DEFAULT_SIMILARITY_THRESHOLD) if f not in kept]
        changed = [s for s in sims if s is not None]
        out.append((min([sim, *changed]) if sim is not None and changed else sim, kept))
    return out
