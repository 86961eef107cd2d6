"""How long a run will take, said before it starts: "N calls, about T on MODEL".

Why: one click on a big dataset with the embedded model is thousands of calls and hours;
the start forms and the CLI say so before anything is queued. The speed is measured, not
guessed: a model's calls per second come from its own stored calls of earlier runs (the
calls it has in flight at once, its concurrency, over the mean latency of its last
answered calls: Little's law; the mean, not the median, since a few slow calls hold a
slot as long as many fast ones; bounded by its requests-per-minute limit); a model never
run yet gets its provider's default (`Provider.latency_s`). A judge's calls are added at
the judge's own speed. A measured estimate says how long the calls it learnt from were
(a demo's one-word answers say little about a long multiple-choice run).
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union

from sqlalchemy.engine import Engine

from evalcore.providers.base import ModelConfig
from evalcore.providers.catalog import provider_for
from evalcore.report.timing import format_seconds
from evalcore.store import queries
from evalcore.store.run_reads import recent_call_sizes, run_prompt_chars
from evalcore.values import validated

SAMPLE_CALLS = 200
"""Stored calls of a model whose latencies make its measured speed (the most recent)."""
SIMILAR_RATIO = 2.0
"""A stored call is "of a similar length" when its prompt is within this factor of the
planned prompts' mean length."""
MIN_SIMILAR = 5
"""Stored calls of a similar length needed before only they count."""


@dataclass(frozen=True)
class Speed:
    """A model's speed: one call's latency, calls in flight, its rpm limit, and whether
    the latency was measured or assumed."""

    model: str
    latency_s: float
    slots: int
    rpm: int
    measured_calls: int
    """Stored calls the latency comes from (0 = the provider's default)."""
    prompt_chars: int = 0
    """Mean prompt length of those calls (characters)."""
    reply_chars: int = 0
    """Mean reply length of those calls: short prompts and one-word replies are fast, so
    the estimate says what it learnt from."""
    similar: bool = False
    """Whether those calls were chosen for a prompt length like the planned ones."""

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
    basis: str = ""
    """The calls a measured speed comes from, e.g. "12 calls with ~90-character prompts
    and ~4-character replies"."""

    def line(self) -> str:
        """'60 calls, about 45 s on local (measured on 120 earlier calls)'."""
        calls = f"{self.calls:,} calls" if not self.judge_calls else (
            f"{self.calls - self.judge_calls:,} calls + {self.judge_calls:,} judge calls")
        basis = ("no earlier run: a default speed" if not self.measured else
                 f"from its earlier runs: {self.basis}" if self.basis else "from its earlier runs")
        return f"{calls}, about {format_seconds(self.seconds)} on {self.model} ({basis})"


def model_speed(engine: Engine, model: ModelConfig, *, concurrency: Optional[int] = None,
                prompt_chars: Optional[int] = None) -> Speed:
    """`model`'s speed: in-flight calls / mean stored latency, at most its rpm. With
    `prompt_chars` (the planned prompts' mean length), only stored calls of a similar
    length count when there are enough of them (MIN_SIMILAR)."""
    slots = max(1, concurrency or model.concurrency)
    calls = [c for c in recent_call_sizes(engine, model.name, SAMPLE_CALLS) if c[0] > 0]
    similar = [c for c in calls if prompt_chars and
               prompt_chars / SIMILAR_RATIO <= c[1] <= prompt_chars * SIMILAR_RATIO]
    if len(similar) >= MIN_SIMILAR:
        calls = similar
    if not calls:
        return Speed(model.name, provider_for(model).latency_s, slots, model.rpm, 0)
    latency = statistics.fmean(ms for ms, _, _ in calls) / 1000.0
    return Speed(model.name, latency, slots, model.rpm, len(calls),
                 round(statistics.fmean(p for _, p, _ in calls)),
                 round(statistics.fmean(a for _, _, a in calls)), calls is similar)


def estimate_calls(engine: Engine, model: ModelConfig, calls: int, *,
                   judge: Optional[ModelConfig] = None,
                   concurrency: Optional[int] = None,
                   prompt_chars: Optional[int] = None) -> Estimate:
    """The estimate of `calls` answer calls on `model` (and as many judge calls on `judge`,
    counted after them: a conservative sum); `prompt_chars` is the mean length of the
    prompts to send, when known (stored calls of a similar length are then preferred)."""
    def seconds(config: ModelConfig, n: int, slots: Optional[int],
                chars: Optional[int] = None) -> tuple[float, Speed]:
        speed = model_speed(engine, config, concurrency=slots, prompt_chars=chars)
        return (n / speed.rate(n) if n > 0 else 0.0), speed

    total, speed = seconds(model, calls, concurrency, prompt_chars)
    measured, basis = speed.measured_calls > 0, _basis(speed, prompt_chars)
    judge_calls = calls if judge is not None else 0
    if judge is not None:
        extra, judged = seconds(judge, judge_calls, None)
        total, measured = total + extra, measured and judged.measured_calls > 0
    return Estimate(calls + judge_calls, total, model.name, measured, judge_calls, basis)


def _basis(speed: Speed, prompt_chars: Optional[int]) -> str:
    """What the measured speed learnt from, in words (empty for a default speed)."""
    if not speed.measured_calls:
        return ""
    if speed.similar:
        return (f"{speed.measured_calls} calls of a similar length "
                f"(~{speed.prompt_chars}-character prompts)")
    these = (f"these prompts are ~{prompt_chars} characters" if prompt_chars
             else "longer ones take longer")
    return (f"{speed.measured_calls} calls with ~{speed.prompt_chars}-character prompts and "
            f"~{speed.reply_chars}-character replies; {these}")


def default_limit(model: Optional[ModelConfig], n_items: int) -> int:
    """A start form's default "first K items": the provider's `first_items` when the
    dataset is bigger (a slow embedded model starts small), else 0 = all."""
    first = provider_for(model).first_items if model is not None else 0
    return first if first and n_items > first else 0


def robustness_calls(engine: Engine, attack_set_ids: Sequence[Union[int, str]],
                     rounds: int) -> int:
    """Answer calls of a robustness run over these sets: (clean + attacked items) x rounds,
    a clean item attacked by several sets counted once (as `runner.robustness.robustness_spec` does)."""
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
                          concurrency=spec.get("concurrency"),
                          prompt_chars=run_prompt_chars(engine, run_id))
