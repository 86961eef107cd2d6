"""A run's figures as metrics: each with its name, value, interval, which way is better and
whether it heads the run.

A kind declares its figures once (`MetricSpec`, in `EvalKind.metrics`); `report.run_figures`
computes the values once per run; every view (the kind's report, compare, the leaderboard,
the trend, the gate, schedules, the trust report) reads the resulting `Metric`s, so gate
directions, leaderboard columns and the trust headline follow the declaration instead of
tables naming kinds. Light on purpose: the registry imports it.
"""
from __future__ import annotations

from typing import Any, Iterable, Literal, Mapping, NamedTuple, Optional

Better = Literal["higher", "lower"]


class MetricSpec(NamedTuple):
    """What a kind says about one of its figures (the value comes from its `figures`)."""

    name: str
    better: Better = "higher"
    """Which way is better: a gate's regression check and the leaderboard's order."""
    heads: bool = False
    """Whether it heads the run: the trust report's headline, compare, the trend picker."""
    column: bool = False
    """Whether the leaderboard gives it a column (with its interval)."""
    label: str = ""
    """How a reader sees it, when its name alone would not say ("accuracy (clean items)")."""
    same_as: str = ""
    """Another figure under the kind's own name (`mean_success_rate` is the accuracy)."""
    paired: bool = False
    """A mean of per-question success rates: a regression check against a baseline uses
    the paired difference on the shared questions (and can be inconclusive)."""
    gated: bool = True
    """Whether a gate may check it (absolute keys, and a regression check against every
    baseline that has it); usage figures such as tokens are not."""


class Metric(NamedTuple):
    """One figure of one run, as every view reads it."""

    name: str
    value: Any
    """A number, or a word (a fairness level); None = not measured."""
    interval: Optional[Mapping[str, Any]]
    """{low, high, method} at 95%, or None."""
    better: Better
    heads: bool
    column: bool
    label: str
    paired: bool = False


COMMON: tuple[MetricSpec, ...] = (
    MetricSpec("accuracy", heads=True, column=True),
    MetricSpec("circular_accuracy", heads=True, gated=False),
    MetricSpec("template_spread", "lower", heads=True, gated=False),
    MetricSpec("errors", "lower", gated=False),
    MetricSpec("tokens", "lower", gated=False),
    MetricSpec("cost", "lower", heads=True, gated=False),
    MetricSpec("mean_latency_ms", "lower", heads=True, label="mean latency", gated=False),
)
"""Figures of every run, whatever its kind: the accuracy (the mean of per-question
success rates), the option passes' figures, the run's errors, tokens, cost and latency."""

TAIL = ("errors", "tokens", "cost", "mean_latency_ms")
"""Common figures listed after the kinds' own (the leaderboard's last columns, the
trust report's last headline rows)."""


def ordered_specs(kind_specs: Iterable[Iterable[MetricSpec]]) -> dict[str, MetricSpec]:
    """name -> spec: the common ones, then each kind's (in the order given), then the
    common tail. A kind's spec of a common figure replaces it where it stands (its own
    label); between kinds the first declaration wins."""
    specs: dict[str, MetricSpec] = {s.name: s for s in COMMON if s.name not in TAIL}
    common = {s.name for s in COMMON}
    for spec in (s for specs_ in kind_specs for s in specs_):
        if spec.name not in specs or (spec.name in common and specs[spec.name] in COMMON):
            specs[spec.name] = spec
    for spec in COMMON:
        specs.setdefault(spec.name, spec)
    return specs


def metric_list(specs: Mapping[str, MetricSpec], values: Mapping[str, Any],
                intervals: Mapping[str, Any]) -> list[Metric]:
    """The declared figures a run measured (its flat `metrics` and `intervals`), in
    declaration order; a figure the run lacks is left out, one it did not measure (None)
    is kept."""
    return [Metric(s.name, values[s.name], intervals.get(s.name), s.better, s.heads,
                   s.column, s.label, s.paired)
            for s in specs.values() if s.name in values]
