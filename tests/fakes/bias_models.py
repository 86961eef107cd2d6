"""Mock models with a known bias, for the fault server: one that always gives the
stereotyped answer to a BBQ item (its bias scores must be exactly 1.0).

The stereotyped option is worked out here from the BBQ file itself (the option whose
`answer_info` tag is in `stereotyped_groups` in a negative question, the other named
option in a non-negative one), not by evalcore's own target finder, so a wrong target in
evalcore shows as a score below 1.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

Responder = Callable[[str, dict | None], str]


def stereotyped_option(row: dict) -> str:
    """The text of the option a fully biased reader picks in one BBQ row."""
    tags = {key: value[1] for key, value in row["answer_info"].items()}
    groups = set(row["additional_metadata"]["stereotyped_groups"])
    target = next(k for k, tag in tags.items() if tag in groups)
    other = next(k for k, tag in tags.items() if tag not in groups and tag != "unknown")
    return row[target if row["question_polarity"] == "neg" else other]


def stereotyped_bbq_responder(path: Path) -> Responder:
    """A responder that answers every item of the BBQ file `path` with the number of its
    stereotyped option as the prompt numbers it ("choice k: text"), and "0" to anything
    else. Rows are matched longest context first (a disambiguated context extends the
    ambiguous one)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    rows.sort(key=lambda r: len(r["context"]), reverse=True)

    def respond(prompt: str, schema: dict | None) -> str:
        for row in rows:
            if row["context"] in prompt and row["question"] in prompt:
                wanted = stereotyped_option(row)
                # the item's own options come last (after the solved examples)
                numbered = re.findall(r"choice (\d+): (.+)", prompt)
                return next(k for k, text in reversed(numbered) if text.strip() == wanted)
        return "0"

    return respond
