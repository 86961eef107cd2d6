"""Schedules: their intervals (parsed, labelled) and reads."""
from __future__ import annotations

from evalcore.store.schedules import every_label, get_schedule, list_schedules, parse_every

__all__ = ["every_label", "get_schedule", "list_schedules", "parse_every"]
