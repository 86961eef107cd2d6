"""Turn a `Question` and a template into the prompt text sent to a model.

Options are always rendered "choice N: text" (Chinese: "选项 N：text") with the 0-based
N the reference uses, so the rules scorers can read an option number back.
"""
from __future__ import annotations

import string
from typing import Optional

from evalcore.dataset.records import Question
from evalcore.errors import EvalcoreError
from evalcore.prompt.templates import PLACEHOLDERS, Style, default_template

OPTION_NAMES = {"en": "choice {index}", "zh": "选项 {index}"}
"""How the prompt names option `index`; answers and references are shown the same way."""
CHOICE_LABELS = {"en": OPTION_NAMES["en"] + ": {text}", "zh": OPTION_NAMES["zh"] + "：{text}"}


class TemplateError(EvalcoreError):
    """A prompt template cannot be used (unknown placeholder, stray brace ...)."""


def option_name(index: int | str, language: str = "en") -> str:
    """Option `index` (0-based) as the prompt names it: "choice 3" / "选项 3". The reader
    of a report then sees the label the model was shown, not a letter to translate."""
    return OPTION_NAMES.get(language, OPTION_NAMES["en"]).format(index=index)


def format_choices(choices: list[str], language: str = "en") -> str:
    """Options one per line, numbered from 0 ('choice 0: ...' / '选项 0：...')."""
    label = CHOICE_LABELS.get(language, CHOICE_LABELS["en"])
    return "\n".join(label.format(index=i, text=text) for i, text in enumerate(choices))


def check_template(template: str) -> list[str]:
    """The placeholders a template uses; TemplateError if one is unknown or braces are broken.

    Checked before a run starts so a typo such as `{questoin}` is reported once, up front,
    instead of failing every call.
    """
    known = ", ".join("{" + name + "}" for name in PLACEHOLDERS)
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as exc:
        raise TemplateError(f"prompt template is malformed ({exc}); placeholders look like "
                            f"{{question}}, and literal braces are written {{{{ and }}}}") from None
    used: list[str] = []
    for field in fields:
        if field not in PLACEHOLDERS:
            shown = "{" + field + "}" if field else "{}"
            raise TemplateError(f"prompt template uses unknown placeholder {shown}; use "
                                f"{known} (write {{{{ and }}}} for literal braces)")
        used.append(field)
    if "question" not in used:
        raise TemplateError(f"prompt template has no {{question}} placeholder, so the model "
                            f"would never see the question; add it (available: {known})")
    return used


def render_prompt(question: Question, template: Optional[str] = None,
                  style: Style = "zero") -> str:
    """The prompt for `question`: its task/language default template, or `template`."""
    text = template if template is not None else default_template(
        question.task_type, question.language, style)
    check_template(text)
    values = {"question": question.question,
              "choices": format_choices(question.choices, question.language),
              "n_choices": len(question.choices),
              "last_choice": max(len(question.choices) - 1, 0)}
    return text.format(**values)
