"""Prompt templates and rendering for every task type, in Chinese and English."""
from __future__ import annotations

import json
import re

import pytest

from evalcore.dataset.records import TASK_TYPES, Question
from evalcore.prompt import (PLACEHOLDERS, TEMPLATES, TemplateError, check_template,
                             default_template, format_choices, render_prompt)
from evalcore.errors import EvalcoreError

CJK = re.compile(r"[\u4e00-\u9fff]")

CHOICES = {"en": ["a cat", "a dog", "a fish"], "zh": ["一只猫", "一只狗", "一条鱼"]}
QUESTIONS = {"en": "Which pet can swim underwater all day?", "zh": "哪种宠物可以整天在水下游泳？"}


def _question(task: str, lang: str) -> Question:
    with_choices = task in ("choice", "multi_tf", "bias_choice")
    return Question(idx=0, question=QUESTIONS[lang], task_type=task, language=lang,
                    choices=CHOICES[lang] if with_choices else [],
                    reference=json.dumps([0, 0, 1]) if task == "multi_tf" else "2")


def test_every_task_type_has_both_languages() -> None:
    assert set(TEMPLATES) == set(TASK_TYPES)
    for task, by_lang in TEMPLATES.items():
        assert set(by_lang) == {"en", "zh"}, task


@pytest.mark.parametrize("task", TASK_TYPES)
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("style", ["zero", "few"])
def test_render_each_task_language_and_style(task: str, lang: str, style: str) -> None:
    q = _question(task, lang)
    prompt = render_prompt(q, style=style)
    assert q.question in prompt
    assert "{" not in prompt and "}" not in prompt
    instruction = TEMPLATES[task][lang]["instruction"]
    if lang == "zh":
        assert CJK.search(instruction)
    else:
        assert not CJK.search(instruction)
    if q.choices:
        label = "choice" if lang == "en" else "选项"
        for i, text in enumerate(q.choices):
            assert re.search(rf"{label} {i}[:：] ?{re.escape(text)}", prompt)
    examples = TEMPLATES[task][lang]["examples"]
    assert (examples in prompt) == (style == "few")
    assert len(render_prompt(q, style="few")) > len(render_prompt(q, style="zero"))


def test_multi_tf_prompt_says_how_many_flags() -> None:
    assert "3 numbers" in render_prompt(_question("multi_tf", "en"))
    assert "3 个数字" in render_prompt(_question("multi_tf", "zh"))


def test_choice_prompt_names_the_last_option_number() -> None:
    assert "from 0 to 2" in render_prompt(_question("choice", "en"))


def test_format_choices() -> None:
    assert format_choices(["x", "y"]) == "choice 0: x\nchoice 1: y"
    assert format_choices(["甲"], "zh") == "选项 0：甲"
    assert format_choices([]) == ""


def test_custom_template() -> None:
    q = _question("choice", "en")
    text = render_prompt(q, "Q: {question}\n{choices}\nReply 0-{last_choice} of {n_choices} "
                            "as {{\"answer\": N}}")
    assert text == (f"Q: {q.question}\nchoice 0: a cat\nchoice 1: a dog\nchoice 2: a fish\n"
                    "Reply 0-2 of 3 as {\"answer\": N}")


@pytest.mark.parametrize("template,message", [
    ("Answer {questoin}", r"unknown placeholder \{questoin\}"),
    ("Answer {question.meta}", r"unknown placeholder \{question.meta\}"),
    ("Answer {}", r"unknown placeholder \{\}"),
    ("Answer {question", "malformed"),
    ("Reply as JSON {\"a\": 1} to {question}", "unknown placeholder"),
    ("Just answer.", r"no \{question\} placeholder"),
])
def test_bad_templates_are_reported(template: str, message: str) -> None:
    with pytest.raises(TemplateError, match=message) as err:
        render_prompt(_question("open", "en"), template)
    assert isinstance(err.value, EvalcoreError)


def test_check_template_lists_placeholders() -> None:
    assert check_template("{question} {choices}") == ["question", "choices"]
    for task in TASK_TYPES:
        for lang in ("en", "zh"):
            for style in ("zero", "few"):
                assert set(check_template(default_template(task, lang, style))) <= set(PLACEHOLDERS)


def test_unknown_style_is_a_bug() -> None:
    with pytest.raises(ValueError, match="unknown prompt style"):
        default_template("open", "en", "three")  # type: ignore[arg-type]
