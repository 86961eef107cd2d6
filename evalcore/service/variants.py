"""A finished run asked again under other option orders and templates: queue it (a
checked action), check the options, read templates, what it would cost."""
from __future__ import annotations

from evalcore.actions.runs import queue_variants
from evalcore.runner.variants import check_options, read_templates, template_params, variants_cost
from evalcore.runner.variants import cost_line as variants_cost_line

__all__ = ["check_options", "queue_variants", "read_templates", "template_params",
           "variants_cost", "variants_cost_line"]
