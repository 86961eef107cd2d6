"""Schedules: add, edit, pause, delete, test an alert (checked actions), their intervals
(parsed, labelled) and reads."""
from __future__ import annotations

from evalcore.monitor.actions import (
    add_schedule,
    delete_schedule,
    edit_schedule,
    pause_schedule,
    test_alert,
)
from evalcore.store.schedules import every_label, get_schedule, list_schedules, parse_every

__all__ = ["add_schedule", "delete_schedule", "edit_schedule", "every_label", "get_schedule",
           "list_schedules", "parse_every", "pause_schedule", "test_alert"]
