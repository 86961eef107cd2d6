"""Baselines: the stored run a dataset and model are compared with (setting one is
`service.monitoring.set_baseline`)."""
from __future__ import annotations

from evalcore.store.baselines import baseline_for_run, baseline_info, baselines_in_force

__all__ = ["baseline_for_run", "baseline_info", "baselines_in_force"]
