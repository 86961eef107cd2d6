"""evalcore: tell whether an LLM can be trusted.

The pipeline, one sub-package per stage: `dataset` -> `prompt` -> `providers` ->
`scorers` -> `store` -> `report`, driven by `runner` and summarised by `metrics`.
Code that uses evalcore as a library calls the functions below, the same door pages and
the CLI go through (`evalcore.service`: one module per concept, the checked actions and
the reads); a run starts one way, `create_run(actor, engine, kind, params, models_path)`.
Names are resolved lazily so that `python -m evalcore --help` does not import pandas,
aiohttp or SQLAlchemy.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A package's `__getattr__` (PEP 562) that imports a name's module on first use:
    `exports` maps each public name to its module, so importing the package stays cheap."""
    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__


_EXPORTS = {
    "load_settings": "evalcore.config",
    "Settings": "evalcore.config",
    "get_engine": "evalcore.service.database",
    "local_actor": "evalcore.auth.identity",
    "import_dataset": "evalcore.service.datasets",
    "list_datasets": "evalcore.dataset",
    "RunSpec": "evalcore.runner.plan", "run_spec": "evalcore.runner.plan",
    "get_kind": "evalcore.kinds", "all_kinds": "evalcore.kinds",
    "create_run": "evalcore.service.runs",
    "cancel_run": "evalcore.service.runs",
    "get_run": "evalcore.service.runs",
    "list_runs": "evalcore.service.runs",
    "run_in_foreground": "evalcore.service.runs",
    "get_runner": "evalcore.service.workers",
    "ModelConfig": "evalcore.providers.base",
    "ChatRequest": "evalcore.providers.base",
    "ChatReply": "evalcore.providers.base",
    "Question": "evalcore.dataset.records",
    "Score": "evalcore.scorers.base",
    "queue_attack": "evalcore.service.attacks",
    "queue_attack_import": "evalcore.service.attacks",
    "robustness_spec": "evalcore.runner.robustness",
    "robustness_report": "evalcore.report.robustness",
    "generate_suite": "evalcore.fairness", "fairness_report": "evalcore.fairness", "evaluate_gate": "evalcore.fairness",
}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
