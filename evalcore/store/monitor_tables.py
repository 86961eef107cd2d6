"""The schema of continuous monitoring (migration 0020): schedules, one row per due time,
the stored baselines and alert deliveries.

Uniqueness does the work of locks here: one `schedule_run` per (schedule, due time), one
`alert_delivery` per (event, channel). Whoever inserts the row does the work; a second
worker (or one taking over after a crash) finds the row and never does it twice.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Optional

from sqlalchemy import JSON, Column, DateTime, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from evalcore.store.tables import NEVER_REUSE_IDS, utcnow


class Schedule(SQLModel, table=True):
    """A kind of run with its options, a period and a gate, run again and again."""

    __table_args__ = NEVER_REUSE_IDS

    id: Optional[int] = Field(default=None, primary_key=True)
    kind: str = Field(description="stability, robustness or fairness")
    params: dict[str, Any] = Field(default_factory=dict,
                                   sa_column=Column(JSON, nullable=False, default=dict))
    every_s: Optional[int] = Field(default=None, description="period in seconds, or None")
    cron: Optional[str] = Field(default=None, description="cron expression, or None")
    gate: dict[str, Any] = Field(default_factory=dict,
                                 sa_column=Column(JSON, nullable=False, default=dict))
    channels: list[Any] = Field(default_factory=list,
                                sa_column=Column(JSON, nullable=False, default=list))
    paused: bool = False
    next_due_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    created_by: str = ""
    created_at: datetime = Field(default_factory=utcnow,
                                 sa_column=Column(DateTime(timezone=True), nullable=False,
                                                  default=utcnow))


class ScheduleRun(SQLModel, table=True):
    """One due time of a schedule: the run it made, or why it made none (skipped)."""

    __tablename__ = "schedule_run"
    __table_args__ = (UniqueConstraint("schedule_id", "due_at", name="uq_schedule_due"),
                      NEVER_REUSE_IDS)

    id: Optional[int] = Field(default=None, primary_key=True)
    schedule_id: int = Field(index=True)
    due_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    status: str = Field(default="queued",
                        description="queued (its job makes the run), created, skipped")
    run_id: Optional[int] = Field(default=None, index=True)
    reason: Optional[str] = Field(default=None, sa_column=Column(Text))
    verdict: Optional[str] = Field(default=None,
                                   description="checking, pass, fail, not measured, run failed")
    checks: list[Any] = Field(default_factory=list,
                              sa_column=Column(JSON, nullable=False, default=list))
    baseline_id: Optional[int] = None
    created_at: datetime = Field(default_factory=utcnow,
                                 sa_column=Column(DateTime(timezone=True), nullable=False,
                                                  default=utcnow))


class Baseline(SQLModel, table=True):
    """A run marked as the baseline ("production") of its dataset and model; the newest
    row of a (dataset, model) is the one in force, the older ones are the trend's marks."""

    __table_args__ = NEVER_REUSE_IDS

    id: Optional[int] = Field(default=None, primary_key=True)
    dataset_id: int = Field(index=True)
    model: str = Field(index=True)
    run_id: int
    set_by: str = ""
    set_at: datetime = Field(default_factory=utcnow,
                             sa_column=Column(DateTime(timezone=True), nullable=False,
                                              default=utcnow))


class AlertDelivery(SQLModel, table=True):
    """One message of one event to one channel: inserted before sending, so a retry or a
    takeover after a crash finds it and never sends the message twice."""

    __tablename__ = "alert_delivery"
    __table_args__ = (UniqueConstraint("event", "channel", name="uq_alert_event_channel"),
                      NEVER_REUSE_IDS)

    id: Optional[int] = Field(default=None, primary_key=True)
    event: str = Field(description="e.g. run:12:gate, or test:<uuid> for a test alert")
    channel: str = Field(description="the channel's masked label, e.g. webhook slack ***")
    run_id: Optional[int] = Field(default=None, index=True)
    schedule_id: Optional[int] = Field(default=None, index=True)
    status: str = Field(default="sending",
                        description="sending, sent, failed, possibly delivered")
    attempts: int = 0
    error: Optional[str] = Field(default=None, sa_column=Column(Text))
    created_at: datetime = Field(default_factory=utcnow,
                                 sa_column=Column(DateTime(timezone=True), nullable=False,
                                                  default=utcnow))
    sent_at: Optional[datetime] = Field(default=None,
                                        sa_column=Column(DateTime(timezone=True)))
