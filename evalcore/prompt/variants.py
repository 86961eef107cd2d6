"""The same choice item asked another way: its options in another order, or under another
prompt template. Pure: a variant is a `Question` (and a template) the runner sends as is.

- Option order (`--option-order`): `circular` asks every rotation of the options (n
  orders for n options, MMBench's CircularEval); `shuffle:N` asks N seeded shuffles
  besides the original order. The reference index follows its option.
- Templates (`--templates zero,few,FILE`): 2 to 6 role-task templates: the built-in
  zero- and few-shot ones of `prompt.templates`, or a file with placeholders as in
  `prompt.render` (its name is the file's stem).
"""
from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import msgspec

from evalcore.dataset.records import Question
from evalcore.errors import EvalcoreError
from evalcore.prompt.render import check_template

MAX_SHUFFLES = 24
REORDERED_TASKS = ("choice", "bias_choice")
"""Task types whose options another order shows (BBQ / CBBQ keep their own three; the
reference, the target and the unknown option move with their options)."""
MIN_TEMPLATES, MAX_TEMPLATES = 2, 6


class VariantError(EvalcoreError):
    """An option-order or template setting that cannot be used (says what to write)."""


def parse_option_order(text: str) -> tuple[str, int]:
    """("circular", 0) or ("shuffle", N) from the CLI / page setting."""
    value = (text or "").strip().lower()
    if value == "circular":
        return "circular", 0
    head, _, count = value.partition(":")
    if head == "shuffle" and count.isdigit() and 1 <= int(count) <= MAX_SHUFFLES:
        return "shuffle", int(count)
    raise VariantError(f"option order {text!r} is not circular or shuffle:N "
                       f"(N from 1 to {MAX_SHUFFLES}), e.g. --option-order shuffle:3")


def orders(n: int, option_order: str, seed: int = 0, key: int = 0) -> list[list[int]]:
    """The option orders to ask an item with `n` options, the original first; order[s]
    is the original index of the option shown in slot s. Shuffles are seeded by `seed`
    and the item's `key`, so a resumed pass asks the same ones; they are distinct and
    never the original order (a call per order: at most n! - 1 of them, 5 for BBQ)."""
    if n < 2:
        return [list(range(n))]
    mode, count = parse_option_order(option_order)
    if mode == "circular":
        return [[(s + k) % n for s in range(n)] for k in range(n)]
    rng = random.Random(f"{seed}:{key}")
    identity = tuple(range(n))
    if math.factorial(n) <= 5040:  # up to 7 options: draw from the orders themselves
        others = [p for p in itertools.permutations(range(n)) if p != identity]
        return [list(identity)] + [list(p) for p in rng.sample(others, min(count, len(others)))]
    seen, out = {identity}, [list(identity)]
    while len(out) <= count:  # n! > 5040 orders: a repeat is rare, skipped
        perm = list(range(n))
        rng.shuffle(perm)
        if tuple(perm) not in seen:
            seen.add(tuple(perm))
            out.append(perm)
    return out


def reordered(question: Question, order: list[int]) -> Question:
    """`question` with its options shown in `order` and the reference index moved with
    its option (a non-index reference is kept as it is)."""
    choices = [question.choices[i] for i in order]
    reference = question.reference
    ref = (reference or "").strip()
    if ref.isdigit() and int(ref) < len(order):
        reference = str(order.index(int(ref)))
    return msgspec.structs.replace(question, choices=choices, reference=reference)


@dataclass(frozen=True)
class Template:
    """One prompt template of a comparison: its name, text (None: the task's built-in
    for `style`) and style."""

    name: str
    text: Optional[str]
    style: str = "zero"


def parse_templates(value: str, base: Optional[Path] = None) -> list[Template]:
    """`zero,few,FILE` -> Templates (2 to 6, names unique); a FILE is read and checked."""
    names = [v.strip() for v in (value or "").split(",") if v.strip()]
    if not MIN_TEMPLATES <= len(names) <= MAX_TEMPLATES:
        raise VariantError(f"--templates needs {MIN_TEMPLATES} to {MAX_TEMPLATES} templates "
                           f"separated by commas (zero, few or a file), got {len(names)}")
    out: list[Template] = []
    for name in names:
        if name in ("zero", "few"):
            out.append(Template(name, None, name))
            continue
        path = Path(name) if base is None or Path(name).is_absolute() else base / name
        if not path.is_file():
            raise VariantError(f"template {name!r} is not zero, few or a readable file")
        text = path.read_text(encoding="utf-8")
        check_template(text)
        out.append(Template(path.stem, text, "zero"))
    if len({t.name for t in out}) != len(out):
        raise VariantError("two templates have one name; rename a file")
    return out
