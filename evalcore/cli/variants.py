"""The run options --option-order / --templates / --variant-seed of a kind's command
(declared by its `EvalKind.run_options`, flags from `cli.common.add_variant_args`): one
check, the cost said before the run starts, the pass asked after it, its lines printed.
Stability, robustness and fairness share this: one implementation of the options."""
from __future__ import annotations

import argparse
import sys
from typing import Any, Optional

from evalcore.service.jobs import run_job_here
from evalcore.service.variants import (check_options, queue_variants, read_templates,
                                       variants_cost, variants_cost_line)
from evalcore.cli.common import acting_user
from evalcore.prompt.variants import parse_option_order
from evalcore.report.variants import variant_lines


def settings(args: argparse.Namespace, kind: str) -> Optional[dict[str, Any]]:
    """{option_order, templates, seed} of the flags, checked before anything is created
    (a VariantError or RunError is one `error:` line), or None without them."""
    order, templates = getattr(args, "option_order", None), getattr(args, "templates", None)
    if not order and not templates:
        return None
    if order:
        parse_option_order(order)
    check_options(kind, order, templates)
    return {"option_order": order, "templates": read_templates(templates) if templates else [],
            "seed": args.variant_seed}


def announce(engine: Any, run_id: int, variants: Optional[dict[str, Any]],
             detach: bool) -> Optional[dict[str, Any]]:
    """Print the pass's extra calls before the run starts; with --detach queue the pass
    for a worker at once, like the run (the lines then go to stderr: stdout is the run's
    JSON). None (a warning said why) when it has nothing to ask: no choice item."""
    if variants is None:
        return None
    out = sys.stderr if detach else sys.stdout
    cost = variants_cost(engine, run_id, **variants)
    print(variants_cost_line(cost), file=out, flush=True)
    if not cost["calls"] + cost["stored"]:
        print("warning: no item of the run can be asked another way (option orders "
              "reorder choice and BBQ / CBBQ items only): nothing extra is asked", file=out,
              flush=True)
        return None
    if detach:
        queue(engine, run_id, variants)
    return variants


def queue(engine: Any, run_id: int, variants: dict[str, Any]) -> int:
    return queue_variants(acting_user(engine), engine, run_id, **variants)


def ask(engine: Any, run_id: int, variants: Optional[dict[str, Any]]) -> None:
    """After the run: ask the pass here (a job; what is stored is not asked again)."""
    if variants is not None:
        run_job_here(engine, queue(engine, run_id, variants))


def print_lines(figures: Optional[dict[str, Any]]) -> None:
    """Circular vs plain accuracy, position bias, slot followers, templates, and for
    BBQ / CBBQ the bias score on each order."""
    for line in variant_lines(figures or {}):
        print(line)
