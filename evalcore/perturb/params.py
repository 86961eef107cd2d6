"""Check an attack's parameter values before any work is queued.

`attack.resolve_params` refuses unknown keys; a known key with a value the engine cannot
use (`{"ops": ["explode"]}`) used to pass and fail later in the worker, with a traceback in
its log and "generation failed" on the page. Here it is refused at submit, in one line
naming the key, the value and what is allowed (the page and the CLI show that line).
"""
from __future__ import annotations

from typing import Any

from evalcore.errors import EvalcoreError
from evalcore.perturb.char import CHAR_OPS
from evalcore.perturb.sentence import LANGUAGE_NAMES
from evalcore.perturb.swap_judge import judge_config


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _ops(value: Any) -> bool:
    return (isinstance(value, list) and bool(value)
            and all(isinstance(op, str) and op in CHAR_OPS for op in value))


def _count(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool)
                             and value >= 1)


def _share(value: Any) -> bool:
    return _is_number(value) and 0.0 <= value <= 1.0


def _pivot(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value in LANGUAGE_NAMES)


def _model_name(value: Any) -> bool:
    return value is None or (isinstance(value, str) and bool(value.strip()))


RULES: dict[str, tuple[Any, str]] = {
    "ops": (_ops, f"a non-empty list of {', '.join(CHAR_OPS)}"),
    "insertions": (_count, "null (the method's rule) or a whole number >= 1"),
    "replacements": (_count, "null (the method's rule) or a whole number >= 1"),
    "min_similarity": (_share, "a number from 0 to 1"),
    "threshold": (_share, "a number from 0 to 1"),
    "similarity": (lambda v: isinstance(v, bool), "true or false"),
    "swap_judge": (_model_name, ("null (the embedded check) or the name of a model in "
                                 "the models file")),
    "pivot": (_pivot, f"null (the other language) or one of {', '.join(LANGUAGE_NAMES)}"),
}
"""Per parameter: the test of a usable value and, for the message, what is allowed."""


def check_param_values(level: str, params: dict[str, Any]) -> None:
    """Raise, naming the key, its value and the allowed ones, at the first unusable value."""
    import json

    for key, value in params.items():
        usable, allowed = RULES.get(key, (lambda _: True, ""))
        if not usable(value):
            raise EvalcoreError(f"{level} attack param {key}={json.dumps(value)} is not "
                                f"allowed; use {allowed}")


def check_swap_judge(params: dict[str, Any] | None, models_path: Any) -> None:
    """A word attack's `swap_judge` must name a model of the models file: refused at submit
    in one line naming it, not in the worker after the set was made."""
    name = (params or {}).get("swap_judge")
    if name:
        judge_config(str(name), models_path)


def parse_params(text: str | None) -> dict[str, Any]:
    """Attack parameters from the JSON a user typed (page text area, CLI `--params`)."""
    import json

    try:
        params = json.loads(text or "{}")
    except json.JSONDecodeError as exc:
        raise EvalcoreError(f"attack parameters are not valid JSON ({exc}); write e.g. "
                            '{"ops": ["insert"]} or {}') from None
    if not isinstance(params, dict):
        raise EvalcoreError('attack parameters must be a JSON object, e.g. {"ops": ["insert"]}')
    return params
