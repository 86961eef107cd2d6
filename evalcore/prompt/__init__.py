"""Prompts: role-task templates (zero- and few-shot, zh/en, per task type) and rendering."""
from evalcore.prompt.render import (TemplateError, check_template, format_choices, option_name,
                                    render_prompt)
from evalcore.prompt.templates import PLACEHOLDERS, STYLES, TEMPLATES, default_template

__all__ = ["PLACEHOLDERS", "STYLES", "TEMPLATES", "TemplateError", "check_template",
           "default_template", "format_choices", "option_name", "render_prompt"]
