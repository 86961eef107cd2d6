"""Schedules' reads: their intervals (parsed, labelled) and the list the sidebar and the
Monitoring page show. Changing one is `service.monitoring` (it loads the alert channels,
which a page's first paint does not need)."""
from __future__ import annotations

from evalcore.store.schedules import every_label, get_schedule, list_schedules, parse_every

__all__ = ["every_label", "get_schedule", "list_schedules", "parse_every"]
