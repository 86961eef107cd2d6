"""How long a run will take, said before it starts: "N calls, about T on MODEL".

Why: one click on a big dataset with the embedded model is thousands of calls and hours;
the start forms and the CLI say so before anything is queued. The speed is measured, not
guessed: a model's calls per second come from its own stored calls of earlier runs (the
calls it has in flight at once, its concurrency, over the mean latency of its last
answered calls: Little's law; the mean, not the median, since a few slow calls hold a
slot as long as many fast ones; bounded by its requests-per-minute limit); a model never
run yet gets a default per kind. A judge's calls are added at the judge's own speed.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union

from sqlalchemy.engine import Engine

from evalcore.providers.base import ModelConfig
from evalcore.report.timing import format_seconds
from evalcore.store import queries
from evalcore.store.run_reads import recent_latencies
from evalcore.values import validated

SAMPLE_CALLS = 200
"""Stored calls of a model whose latencies make its measured speed (the most recent)."""
DEFAULT_LATENCY_S = {"local": 1.0, "ollama": 2.0, "openai": 2.0}
"""Seconds one call takes when the model has no stored call yet: the embedded SmolLM2
with its short answers takes ~0.2-1 s on a laptop core; a remote model ~1-3 s."""
LOCAL_DEFAULT_LIMIT = 20
"""The start forms' "first K items" on the local model: a first click is 20 x N calls
(a minute or two), not the whole dataset."""


@dataclass(frozen=True)
class Speed:
    """A model's speed: one call's latency, calls in flight, its rpm limit, and whether
    the latency was measured or assumed."""

    model: str
    latency_s: float
    slots: int
    rpm: int
    measured_calls: int
    """Stored calls the latency comes from (0 = the kind's default)."""

    @property
    def calls_per_second(self) -> float:
        """With every slot busy."""
        return self.rate(self.slots)

    def rate(self, calls: int) -> float:
        """Calls per second for a run of `calls`: fewer calls than slots leave slots idle."""
        rate = max(1, min(self.slots, calls)) / max(self.latency_s, 1e-3)
        return min(rate, self.rpm / 60.0) if self.rpm else rate


@dataclass(frozen=True)
class Estimate:
    """Calls and seconds of a run before it starts."""

    calls: int
    seconds: float
    model: str
    measured: bool
    judge_calls: int = 0

    def line(self) -> str:
        """'60 calls, about 45 s on local (measured on 120 earlier calls)'."""
        calls = f"{self.calls:,} calls" if not self.judge_calls else (
            f"{self.calls - self.judge_calls:,} calls + {self.judge_calls:,} judge calls")
        basis = "from its earlier runs" if self.measured else "no earlier run: a default speed"
        return f"{calls}, about {format_seconds(self.seconds)} on {self.model} ({basis})"


def _latencies(engine: Engine, model: str, sample: int = SAMPLE_CALLS) -> list[float]:
    """Seconds of the model's most recent answered calls (errors and waits left out)."""
    return [ms / 1000.0 for ms in recent_latencies(engine, model, sample) if ms > 0]


def model_speed(engine: Engine, model: ModelConfig, *,
                concurrency: Optional[int] = None) -> Speed:
    """`model`'s speed: in-flight calls / mean stored latency, at most its rpm."""
    latencies = _latencies(engine, model.name)
    latency = statistics.fmean(latencies) if latencies else DEFAULT_LATENCY_S.get(
        model.kind, DEFAULT_LATENCY_S["openai"])
    return Speed(model.name, latency, max(1, concurrency or model.concurrency), model.rpm,
                 len(latencies))


def estimate_calls(engine: Engine, model: ModelConfig, calls: int, *,
                   judge: Optional[ModelConfig] = None,
                   concurrency: Optional[int] = None) -> Estimate:
    """The estimate of `calls` answer calls on `model` (and as many judge calls on `judge`,
    counted after them: a conservative sum)."""
    def seconds(config: ModelConfig, n: int, slots: Optional[int]) -> tuple[float, bool]:
        speed = model_speed(engine, config, concurrency=slots)
        return (n / speed.rate(n) if n > 0 else 0.0), speed.measured_calls > 0

    total, measured = seconds(model, calls, concurrency)
    judge_calls = calls if judge is not None else 0
    if judge is not None:
        extra, judged = seconds(judge, judge_calls, None)
        total, measured = total + extra, measured and judged
    return Estimate(calls + judge_calls, total, model.name, measured, judge_calls)


def default_limit(model: Optional[ModelConfig], n_items: int) -> int:
    """A start form's default "first K items": LOCAL_DEFAULT_LIMIT on the local model
    (when the dataset is bigger), else 0 = all."""
    if model is not None and model.kind == "local" and n_items > LOCAL_DEFAULT_LIMIT:
        return LOCAL_DEFAULT_LIMIT
    return 0


def robustness_calls(engine: Engine, attack_set_ids: Sequence[Union[int, str]],
                     rounds: int) -> int:
    """Answer calls of a robustness run over these sets: (clean + attacked items) x rounds,
    a clean item attacked by several sets counted once (as `create_robustness_run` does)."""
    from evalcore.runner.robustness import robustness_pairs

    _, pairs = robustness_pairs(engine, attack_set_ids)
    items = len({p[1] for p in pairs}) + len({p[2] for p in pairs})
    return items * rounds


def _snapshot(snapshots: dict[str, Any], name: str) -> ModelConfig:
    """The model settings a run stored (a JSON column: checked), or the defaults."""
    if name in snapshots:
        return validated(ModelConfig, snapshots[name])
    return ModelConfig(name=name)


def estimate_run(engine: Engine, run_id: int) -> Estimate:
    """The estimate of a stored run's remaining calls (the CLI prints it before starting),
    from the model settings the run keeps."""
    run = queries.get_run(engine, run_id)
    config: dict[str, Any] = run.config or {}
    snapshots = config.get("models", {})
    spec = config.get("spec", {})
    model = _snapshot(snapshots, run.model)
    judge = None
    if run.judge != "rules":
        judge = _snapshot(snapshots, run.judge)
    return estimate_calls(engine, model, max(0, run.total - run.done), judge=judge,
                          concurrency=spec.get("concurrency"))
