"""The kinds of evaluation: one `EvalKind` per kind, each defined in one module of this
package that registers itself (`register`), the way job handlers do (`runner.jobs`).

This module sits at the bottom of the layers and imports nothing heavy, so every generic
module (run figures, gates, leaderboard, trust report, readiness, the Results page,
compare, the app's navigation, the CLI) looks a kind up here instead of naming it. A kind
module keeps its heavy imports inside its functions: the CLI's `--help` loads it.

The runner needs none of this: every kind is an ordinary run of (item, round) units,
executed by a job of kind "run". A new kind is one module here (or anywhere that calls
`register`) plus its page; see docs/kinds.md.
"""
from __future__ import annotations

import importlib
import os
import threading
from typing import TYPE_CHECKING, Any, Callable, Mapping, NamedTuple, Optional

from evalcore.errors import RunError
from evalcore.kinds._metric import Metric, MetricSpec, metric_list, ordered_specs

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

Figures = Callable[["Engine", Any, dict[str, Any], dict[str, Any]], Optional[dict[str, Any]]]
"""(engine, `RunOutcomes`, metrics, intervals) -> extra keys of the run's figures: adds the
kind's headline metrics (and their intervals) in place. A returned key "rated" (item ids)
limits the accuracy to those items (robustness: the clean ones)."""


class Export(NamedTuple):
    """One download of a run: a label, a file name (with {run} for the run id), a mime
    type and the function that makes the bytes."""

    label: str
    filename: str
    mime: str
    make: Callable[["Engine", int], bytes]


class Counting(NamedTuple):
    """How a run of the kind counts what has no verdict (`report.run_figures`)."""

    failure_policy: str = "as_wrong"
    """How rounds without a verdict count by default (`metrics.stability` FailurePolicy)."""
    counts_unasked: bool = False
    """Whether an item never answered still counts (as wrong, or without a rate)."""
    accuracy_needs_verdicts: bool = False
    """Whether accuracy is 'not measured' (None) when no round has a verdict, rather than 0."""


class Schedule(NamedTuple):
    """How a kind is scheduled (`evalcore.monitor`): its run options from a schedule's
    generic fields, and what the Monitoring page's form asks for."""

    params: Callable[[Mapping[str, Any]], dict[str, Any]]
    """The kind's `build` params from a schedule's generic fields (dataset, model, rounds,
    samples, limit, attack_sets); raises RunError naming the missing field."""
    target: str = "dataset"
    """What a schedule runs on: a "dataset", a fairness "suite" or "attack_sets"."""
    rounds_label: str = "Rounds per question"


class Gate(NamedTuple):
    """How a run of a kind is gated (`report.gates`, `metrics.gate`): the kind's default
    gate config and, when its figures are not what a gate checks, its own metrics."""

    config: str
    """The default gate config (path under the project root)."""
    metrics: Optional[Callable[..., dict[str, Any]]] = None
    """(engine, run_id, **options) -> the metrics a gate checks; default the run figures'."""
    on_results: bool = True
    """Whether the Results page shows the gate (a kind may show it on its own page)."""


class EvalKind(NamedTuple):
    """Everything one kind of evaluation differs by; the generic code reads only this.
    Immutable: a variant is `kind._replace(...)`, registered again.

    Every kind has the first five (name, title, page, report, build); the rest are
    optional parts with defaults that mean "not this kind's concern": figures and
    metrics of its own, a CLI command, exports, gates, option passes, schedules."""

    name: str
    title: str
    page: str
    """The page (path under the project) where a run of the kind is started and shown."""
    report: Callable[["Engine", int], dict[str, Any]]
    """The kind's full report of a stored run (its JSON export, its page's figures)."""
    build: Callable[["Engine", Mapping[str, Any]], tuple[Any, Optional[list[int]]]]
    """(engine, params) -> (`runner.plan.RunSpec`, item ids or None for the dataset's):
    the one spec builder the page form, the CLI flags and the demo all call."""
    exports: tuple[Export, ...] = ()
    icon: str = ":material/science:"
    order: int = 100
    """Where the kind is listed (navigation, pickers, the CLI): lowest first."""
    cli: Optional[Callable[[Any], None]] = None
    """`register(subparsers)` of the kind's CLI sub-command (named like the kind)."""
    cli_help: str = ""
    """The sub-command's line in the top-level `--help` (listed without importing `cli`)."""
    counting: Counting = Counting()
    """How rounds without a verdict and items never asked count (`Counting`)."""
    needs_references: bool = False
    """Whether a rules-judged run needs reference answers (`scorers.readiness`)."""
    figures: Optional[Figures] = None
    metrics: tuple[MetricSpec, ...] = ()
    """The kind's own figures (beyond `_metric.COMMON`): which way is better, whether each
    heads the run or has a leaderboard column, its label; gates, the leaderboard, the
    trend and the trust report read only this."""
    precedence: int = 0
    """Where two kinds of run on a dataset give one figure, the leaderboard shows the one
    of the kind with the highest precedence."""
    gate: Optional[Gate] = None
    """How a run of the kind is gated (`Gate`), or None if it has no default gate."""
    more_figures: Optional[Callable[["Engine", int], dict[str, Any]]] = None
    """Figures that need the stored answers (the trust report adds them to the headline)."""
    detail: Optional[Callable[["Engine", int], tuple[Optional[dict[str, Any]], list[str]]]] = None
    """(report or None, lines) that `runs show` adds for a run of the kind."""
    compare_pair: Optional[Callable[..., dict[str, Any]]] = None
    """(engine, run_a, run_b, top=...) -> the detailed comparison of two runs of the kind."""
    run_options: tuple[str, ...] = ()
    """The option passes a run of the kind accepts after its rounds ("option_order",
    "templates": `runner.variants`); the CLI's flags and the page's form come from here."""
    variant_items: Optional[Callable[[Any], list[int]]] = None
    """(run row) -> the items the option passes ask (None: all the run's items)."""
    schedule: Optional[Schedule] = None
    """How a schedule runs the kind (`Schedule`), or None if it cannot be scheduled."""


_REGISTRY: dict[str, EvalKind] = {}
_loaded = False
_loading = threading.RLock()  # the app's sessions and its warm-up thread look kinds up at once


def register(kind: EvalKind) -> EvalKind:
    """Make `kind` known to the app and the CLI (a second registration replaces the first)."""
    _REGISTRY[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """Forget a kind (tests that register one of their own)."""
    _REGISTRY.pop(name, None)


def _load() -> None:
    """Import every kind module of this package once: each registers itself."""
    global _loaded
    if _loaded:
        return
    with _loading:  # re-entrant: a kind module that looks a kind up while it loads
        if not _loaded:
            for entry in sorted(os.listdir(os.path.dirname(__file__))):
                if entry.endswith(".py") and not entry.startswith("_"):
                    importlib.import_module(f"{__name__}.{entry[:-3]}")
            _loaded = True


def all_kinds() -> dict[str, EvalKind]:
    """name -> kind, by `order` (then as registered)."""
    _load()
    return dict(sorted(_REGISTRY.items(), key=lambda item: item[1].order))


def kind_names() -> tuple[str, ...]:
    return tuple(all_kinds())


def metric_specs(name: Optional[str] = None) -> dict[str, MetricSpec]:
    """name -> spec of the figures of a run of kind `name` (the common ones and the
    kind's), or of every kind's when `name` is None; in listing order."""
    kinds = all_kinds()
    chosen = list(kinds.values()) if name is None else [k for k in (kinds.get(name),) if k]
    return ordered_specs(kind.metrics for kind in chosen)


def directions(gated: bool = False) -> dict[str, str]:
    """Every declared figure (only those a gate may check, when `gated`) and which way
    is better ("higher" / "lower")."""
    return {name: spec.better for name, spec in metric_specs().items()
            if spec.gated or not gated}


def run_metrics(kind: Optional[str], values: Mapping[str, Any],
                intervals: Mapping[str, Any]) -> list[Metric]:
    """The figures of one run of kind `kind` as `Metric`s (see `_metric.metric_list`)."""
    return metric_list(metric_specs(kind or ""), values, intervals)


def need(fields: Mapping[str, Any], name: str, flag: str, kind: str) -> Any:
    """`fields[name]`, or RunError saying which option a `kind` schedule lacks."""
    value = fields.get(name)
    if not value:
        raise RunError(f"a {kind} schedule needs {flag}")
    return value


def find_kind(name: Optional[str]) -> Optional[EvalKind]:
    """The kind `name`, or None for a name no module registered."""
    return all_kinds().get(name or "")


def get_kind(name: str) -> EvalKind:
    """The kind `name`; RunError listing the known ones otherwise."""
    kind = find_kind(name)
    if kind is None:
        raise RunError(f"unknown kind of run {name!r}; known: {', '.join(kind_names())}")
    return kind


def json_bytes(data: Mapping[str, Any]) -> bytes:
    """A report as the JSON every kind exports."""
    import json

    return json.dumps(data, ensure_ascii=False, indent=2, default=str).encode("utf-8")


def report_json(report: Callable[["Engine", int], dict[str, Any]]
                ) -> Callable[["Engine", int], bytes]:
    """The export function of a kind's JSON report."""
    return lambda engine, run_id: json_bytes(report(engine, run_id))
