"""evalcore: tell whether an LLM can be trusted.

The pipeline, one sub-package per stage: `dataset` -> `prompt` -> `providers` ->
`scorers` -> `store` -> `report`, driven by `runner` and summarised by `metrics`.
Pages and the CLI call the functions below; names are resolved lazily so that
`python -m evalcore --help` does not import pandas, aiohttp or SQLAlchemy.
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
    "get_engine": "evalcore.store.db",
    "import_dataset": "evalcore.dataset",
    "list_datasets": "evalcore.dataset",
    "RunSpec": "evalcore.runner.plan", "run_spec": "evalcore.runner.plan",
    "get_kind": "evalcore.kinds", "all_kinds": "evalcore.kinds",
    "create_run": "evalcore.runner.start",
    "start_run": "evalcore.runner.start",
    "cancel_run": "evalcore.runner.start",
    "run_in_foreground": "evalcore.runner.start",
    "get_runner": "evalcore.runner.background",
    "ModelConfig": "evalcore.providers.base",
    "ChatRequest": "evalcore.providers.base",
    "ChatReply": "evalcore.providers.base",
    "Question": "evalcore.dataset.records",
    "Score": "evalcore.scorers.base",
    "create_attack_set": "evalcore.perturb.generate", "import_attack_set": "evalcore.perturb.set_import",
    "make_attack_set": "evalcore.perturb.generate", "generate_attack_items": "evalcore.perturb.generate",
    "robustness_spec": "evalcore.runner.robustness",
    "create_robustness_run": "evalcore.runner.robustness",
    "robustness_report": "evalcore.report.robustness",
    "generate_suite": "evalcore.fairness", "create_fairness_run": "evalcore.fairness", "fairness_report": "evalcore.fairness", "evaluate_gate": "evalcore.fairness",
}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
