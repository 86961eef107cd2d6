"""Keeping watch over a model (checked actions): add, edit, pause and delete a schedule,
send a test alert, set the baseline run later runs are compared with."""
from __future__ import annotations

from evalcore.monitor.actions import (
    add_schedule,
    delete_schedule,
    edit_schedule,
    pause_schedule,
    set_baseline,
    test_alert,
)

__all__ = ["add_schedule", "delete_schedule", "edit_schedule", "pause_schedule",
           "set_baseline", "test_alert"]
