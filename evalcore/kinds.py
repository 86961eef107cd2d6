"""The kinds of evaluation, defined in one place: their report, exports and page. The runner needs none of this (every kind is an
ordinary run of (item, round) units, executed by a job of kind "run"); the Results page,
the exports and the CLI read it. A new kind of evaluation is one entry here plus its
report module and page.
"""
from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from evalcore.errors import RunError

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine


@dataclass(frozen=True)
class Export:
    """One download of a run: a label, a file name (with {run} for the run id), a mime
    type and the function that makes the bytes."""

    label: str
    filename: str
    mime: str
    make: Callable[["Engine", int], bytes]


@dataclass(frozen=True)
class EvalKind:
    """What the app and the CLI need to know about one kind of evaluation."""

    name: str
    title: str
    page: str
    """The page (path under the project) that shows a run of the kind in full."""
    report: Callable[["Engine", int], dict[str, Any]]
    exports: tuple[Export, ...] = field(default_factory=tuple)


def _json(data: dict[str, Any]) -> bytes:
    return json.dumps(data, ensure_ascii=False, indent=2, default=str).encode("utf-8")


def _stability_report(engine: "Engine", run_id: int) -> dict[str, Any]:
    from evalcore.report.stability import stability_report

    return stability_report(engine, run_id)


def _robustness_report(engine: "Engine", run_id: int) -> dict[str, Any]:
    from evalcore.report.robustness import robustness_report

    return robustness_report(engine, run_id)


def _fairness_report(engine: "Engine", run_id: int) -> dict[str, Any]:
    from evalcore.report.fairness import fairness_report

    return fairness_report(engine, run_id)


def _stability_csv(lang: str) -> Callable[["Engine", int], bytes]:
    def make(engine: "Engine", run_id: int) -> bytes:
        from evalcore.report.stability import write_run_csv

        buffer = io.StringIO(newline="")
        write_run_csv(engine, run_id, buffer, lang=lang)
        return buffer.getvalue().encode("utf-8")

    return make


def _report_json(report: Callable[["Engine", int], dict[str, Any]]
                 ) -> Callable[["Engine", int], bytes]:
    return lambda engine, run_id: _json(report(engine, run_id))


KINDS: dict[str, EvalKind] = {kind.name: kind for kind in (
    EvalKind("stability", "Stability", "pages/stability.py", _stability_report, (
                 Export("Stability CSV (中文表头)", "stability_run{run}_zh.csv", "text/csv",
                        _stability_csv("zh")),
                 Export("Stability CSV (English headers)", "stability_run{run}_en.csv",
                        "text/csv", _stability_csv("en")),
                 Export("Stability JSON", "stability_run{run}.json", "application/json",
                        _report_json(_stability_report)))),
    EvalKind("robustness", "Robustness", "pages/robustness.py", _robustness_report, (
                 Export("Robustness JSON", "robustness_run{run}.json", "application/json",
                        _report_json(_robustness_report)),)),
    EvalKind("fairness", "Fairness", "pages/fairness.py", _fairness_report, (
                 Export("Fairness JSON", "fairness_run{run}.json", "application/json",
                        _report_json(_fairness_report)),)),
)}


def get_kind(name: str) -> EvalKind:
    """The kind `name`; RunError listing the known ones otherwise."""
    try:
        return KINDS[name]
    except KeyError:
        raise RunError(f"unknown kind of run {name!r}; known: {', '.join(KINDS)}") from None
