"""The quality gate of every kind of run (fairness, stability, robustness): absolute
thresholds and regressions against a baseline run.

A gate config is TOML (see data/gate.example.toml)::

    [absolute]
    spd_max = 0.05            # <name>_max: metric <name> must be <= the value
    overall_min = 70          # <name>_min: metric <name> must be >= the value
    [relative]                # used with a baseline
    max_regression = 0.10     # no metric worse than the baseline by more than this share
    min_delta = 0.01          # ... and by more than this absolute amount (noise floor)

Metric names are the keys of a report's `gate_metrics` or of a run's figures; each kind
declares which way is better (`EvalKind.metrics`, read by `known_metrics`). A metric the run did not measure (no
answer gave a score, no labels) fails its check closed, since a CI gate must not pass a run it could not judge; `missing = "skip"` in
[absolute] reports it as "not measured" instead. A metric the report lists in
`gate_metrics["not_applicable"]` does not apply to that kind of run (SPD of a BBQ run,
BBQ scores of a counterfactual suite): its check is "not measured" too. A check that is
not measured is never counted as passed: the verdict (`gate_verdict`) is "pass" only when
at least one check was measured and every measured one held, so a gate whose checks all
miss the run says "not measured", never PASS. A relative check whose current value is
missing while the baseline has one fails (the run lost a figure the baseline had); its
`threshold` is the allowed bound (the baseline's value moved by the allowed regression),
its `baseline` the baseline's value. Pure: no I/O except reading the config file.
"""
from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal, Mapping, Optional, Union

import msgspec

from evalcore.errors import EvalcoreError
from evalcore.kinds import directions
from evalcore.metrics.tolerance import TOLERANCE, at_least, at_most
from evalcore.metrics.uncertainty import paired_variance, questions_needed


def known_metrics() -> dict[str, Literal["lower", "higher"]]:
    """Every gate-able figure and which way is better: what each kind of evaluation
    declares (`EvalKind.metrics`) and the common ones; a new kind's figures are gate-able
    without an edit here."""
    return directions(gated=True)  # type: ignore[return-value]


ALIASES = {"overall": "overall_score", "di": "disparate_impact",
           "toxicity": "toxicity_disparity", "stereotype": "stereotype_rate"}


class GateError(EvalcoreError):
    """A gate config cannot be used (message names the key and the known metrics)."""


Verdict = Literal["pass", "fail", "not measured", "inconclusive"]


class Check(msgspec.Struct, kw_only=True):
    """One line of the verdict. `counted` False: the check did not apply to the run or
    was skipped (`missing = "skip"`); it neither passes nor fails the gate."""

    name: str
    value: Optional[float]
    threshold: Optional[float]
    """The bound the value must keep: the config's for an absolute check, the baseline's
    value moved by the allowed regression for a relative one."""
    passed: bool
    detail: str = ""
    counted: bool = True
    baseline: float | None = None
    """A relative check's baseline value."""
    inconclusive: bool = False
    """The paired interval holds both no change and the allowed regression."""
    needed: int | None = None
    """Questions a paired comparison would need to settle an inconclusive check."""

    @property
    def status(self) -> Verdict:
        """"pass", "fail" (a measured value broke its bound), "inconclusive" or "not
        measured"."""
        if not self.counted or (not self.passed and self.value is None):
            return "not measured"
        if self.inconclusive:
            return "inconclusive"
        return "pass" if self.passed else "fail"


def gate_verdict(checks: list[Check]) -> Verdict:
    """"fail" when a measured value broke its bound; "inconclusive" when a relative check
    could not tell; "not measured" when a counted check had no value (failed closed) or no
    check was measured at all; else "pass"."""
    failed = [c for c in checks if c.counted and not c.passed and not c.inconclusive]
    if any(c.value is not None for c in failed):
        return "fail"
    if any(c.counted and c.inconclusive for c in checks):
        return "inconclusive"
    if failed or not any(c.counted and c.passed for c in checks):
        return "not measured"
    return "pass"


class GateResult(msgspec.Struct, kw_only=True):
    """passed = the verdict is "pass" (at least one check measured, none failed); checks in
    config order, absolute before relative.

    A stored or cached verdict (a dict) becomes one again through `evalcore.values.validated`,
    which also makes its checks `Check`s."""

    passed: bool
    checks: list[Check] = msgspec.field(default_factory=list)

    def failed(self) -> list[Check]:
        """Counted checks that did not pass (a broken bound, or a value missing)."""
        return [c for c in self.checks if c.counted and not c.passed]

    def not_counted(self) -> list[Check]:
        """Checks that did not apply or were skipped: neither passed nor failed."""
        return [c for c in self.checks if not c.counted]

    def verdict(self) -> Verdict:
        return gate_verdict(self.checks)

    def inconclusive(self) -> list[Check]:
        """Relative checks whose paired interval could not tell (`Check.inconclusive`)."""
        return [c for c in self.checks if c.counted and c.inconclusive]


class GateConfig(msgspec.Struct, kw_only=True):
    """A checked gate config: only `load_gate_config` makes one from a file, text or dict
    (it names the file and key of what is wrong)."""

    absolute: dict[str, tuple[str, Literal["max", "min"], float]] = msgspec.field(
        default_factory=dict)
    """key -> (metric, max|min, threshold)."""
    max_regression: Optional[float] = None
    min_delta: float = 0.0
    missing: Literal["skip", "fail"] = "fail"
    on_inconclusive: Literal["fail", "pass"] = "fail"
    """What CI does with an inconclusive verdict ([relative] on_inconclusive)."""
    source: str = ""


def _metric_name(key: str, source: str) -> tuple[str, Literal["max", "min"]]:
    for suffix in ("_max", "_min"):
        if key.endswith(suffix):
            base = key[: -len(suffix)]
            metric = ALIASES.get(base, base)
            if metric in known_metrics():
                return metric, suffix[1:]  # type: ignore[return-value]
    raise GateError(f"{source}: [absolute] key {key!r} names no known metric; write "
                    f"<metric>_max or <metric>_min with a metric from: "
                    f"{', '.join(known_metrics())} "
                    f"(aliases: {', '.join(ALIASES)})")


def load_gate_config(source: Union[str, Path, Mapping[str, Any]]) -> GateConfig:
    """A gate config from a TOML file path, TOML text, or an already parsed dict (the
    CLI's --config). Text typed into a page goes to `gate_config_text`, which never opens
    a path: a web form must not read files on the server."""
    if isinstance(source, Mapping):
        return _gate_config(source, "gate config")
    text = str(source)
    path = Path(text) if text.strip() and "\n" not in text and len(text) < 4096 else None
    if path is not None and path.is_dir():
        raise GateError(f"gate config {path} is a directory; give a .toml file such as "
                        "data/gate.example.toml")
    if path is not None and path.suffix == ".toml" and not path.is_file():
        raise GateError(f"gate config {path} not found; copy data/gate.example.toml")
    if path is not None and path.is_file():
        return gate_config_text(gate_text(path.read_bytes(), str(path)), str(path))
    return gate_config_text(text)


def gate_text(data: bytes, name: str) -> str:
    """A gate file's bytes as text: TOML is UTF-8 (a byte-order mark is dropped); any
    other encoding is a GateError naming the file."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise GateError(f"{name}: not UTF-8 text (byte {exc.start + 1} of the file); TOML "
                        "files are UTF-8: save it as UTF-8") from None


def gate_config_text(text: str, name: str = "gate config") -> GateConfig:
    """A gate config from TOML text, never read as a file path."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise GateError(f"{name}: not valid TOML ({exc})") from None
    return _gate_config(data, name)


def _gate_config(data: Mapping[str, Any], name: str) -> GateConfig:
    unknown = set(data) - {"absolute", "relative"}
    if unknown:
        raise GateError(f"{name}: unknown section(s) {sorted(unknown)}; use [absolute] and "
                        "[relative]")
    absolute: dict[str, tuple[str, Literal["max", "min"], float]] = {}
    missing = "fail"
    for key, value in _section(data, "absolute", name).items():
        if key == "missing":
            if value not in ("skip", "fail"):
                raise GateError(f"{name}: [absolute] missing must be \"skip\" or \"fail\"")
            missing = value
            continue
        metric, kind = _metric_name(key, name)
        absolute[key] = (metric, kind, _number(value, f"[absolute] {key}", name))
    relative = _section(data, "relative", name)
    extra = set(relative) - {"max_regression", "min_delta", "on_inconclusive"}
    if extra:
        raise GateError(f"{name}: unknown [relative] key(s) {sorted(extra)}; use "
                        "max_regression, min_delta and on_inconclusive")
    on_inconclusive = relative.get("on_inconclusive", "fail")
    if on_inconclusive not in ("fail", "pass"):
        raise GateError(f"{name}: [relative] on_inconclusive must be \"fail\" or \"pass\"")
    share = relative.get("max_regression")
    return GateConfig(absolute=absolute, missing=missing, source=name,
                      on_inconclusive=on_inconclusive,
                      max_regression=None if share is None else _not_negative(
                          share, "[relative] max_regression", name),
                      min_delta=_not_negative(relative.get("min_delta", 0.0),
                                              "[relative] min_delta", name))


def _section(data: Mapping[str, Any], section: str, source: str) -> dict[str, Any]:
    """The `[section]` table; a GateError naming the file when it is something else
    (`absolute = 3` at the top of the file)."""
    table = data.get(section, {})
    if not isinstance(table, Mapping):
        raise GateError(f"{source}: [{section}] must be a table of keys (see "
                        f"data/gate.example.toml), not a {type(table).__name__}")
    return dict(table)


def _number(value: Any, key: str, source: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise GateError(f"{source}: {key} must be a number, not {value!r}")
    return float(value)


def _not_negative(value: Any, key: str, source: str) -> float:
    """A share or noise floor: below 0 every regression check would read "within -100%"."""
    number = _number(value, key, source)
    if number < 0:
        raise GateError(f"{source}: {key} must be 0 or more (0.10 = 10% worse allowed), "
                        f"not {number:g}")
    return number


def metrics_of(report_or_metrics: Mapping[str, Any]) -> dict[str, Optional[float]]:
    """The flat metric dict of a fairness report (its `gate_metrics`) or a dict that is one."""
    flat = report_or_metrics.get("gate_metrics", report_or_metrics)
    known = known_metrics()
    return {k: (None if v is None else float(v)) for k, v in flat.items()
            if k in known and (v is None or isinstance(v, (int, float)))}


def evaluate_gate(report_or_metrics: Mapping[str, Any],
                  config: Union[GateConfig, str, Path, Mapping[str, Any]],
                  baseline: Optional[Mapping[str, Any]] = None, *,
                  paired: Optional[Mapping[str, Mapping[str, Any]]] = None) -> GateResult:
    """Check a run against the absolute thresholds and, given a baseline, the regressions.
    `paired`: {metric: the run minus its baseline on their shared questions
    (`metrics.uncertainty.paired_difference`)} for the metrics that are a mean of
    per-question rates; their regression checks can be inconclusive."""
    cfg = config if isinstance(config, GateConfig) else load_gate_config(config)
    metrics = metrics_of(report_or_metrics)
    flat = report_or_metrics.get("gate_metrics", report_or_metrics)
    not_applicable = set(flat.get("not_applicable") or ())
    checks: list[Check] = []
    for key, (metric, kind, limit) in cfg.absolute.items():
        value = metrics.get(metric)
        sign = "<=" if kind == "max" else ">="
        if metric in not_applicable:
            checks.append(Check(name=key, value=None, threshold=limit, passed=False,
                                counted=False, detail=f"not measured: {metric} does not "
                                                      "apply to this kind of run"))
            continue
        if value is None:
            skip = cfg.missing == "skip"
            checks.append(Check(name=key, value=None, threshold=limit, passed=False,
                                counted=not skip,
                                detail=f"{metric} not measured in this run"
                                       + (" (skipped)" if skip else "")))
            continue
        ok = at_most(value, limit) if kind == "max" else at_least(value, limit)
        broken = ">" if kind == "max" else "<"
        checks.append(Check(name=key, value=value, threshold=limit, passed=ok,
                            detail=f"{metric} {value:.4g} {sign if ok else broken} {limit:g}"
                                   + ("" if ok else " FAILED")))
    if baseline is not None:
        if cfg.max_regression is None:
            raise GateError(f"{cfg.source}: a baseline was given but [relative] max_regression "
                            "is not set; add it (e.g. max_regression = 0.10)")
        base = metrics_of(baseline)
        for metric, better in known_metrics().items():
            now, then = metrics.get(metric), base.get(metric)
            if then is None:
                continue
            allowed = max(cfg.max_regression * abs(then), cfg.min_delta)
            bound = then + allowed if better == "lower" else then - allowed
            if now is None:
                skip = cfg.missing == "skip"
                checks.append(Check(name=f"regression:{metric}", value=None, threshold=bound,
                                    baseline=then, passed=False, counted=not skip,
                                    detail=f"{metric} not measured in this run but "
                                           f"{then:.4g} in the baseline"))
                continue
            worse = (now - then) if better == "lower" else (then - now)
            ok = worse <= allowed + TOLERANCE
            check = Check(
                name=f"regression:{metric}", value=now, threshold=bound, baseline=then,
                passed=ok,
                detail=(f"{metric} {now:.4g} vs baseline {then:.4g}: "
                        + (f"worse by {worse:.4g} > allowed {allowed:.4g}" if not ok
                           else f"within {cfg.max_regression:.0%} (allowed {allowed:.4g})")))
            if paired and paired.get(metric):
                _judge_paired(check, paired[metric], allowed, better)
            checks.append(check)
    verdict = gate_verdict(checks)
    return GateResult(passed=verdict == "pass" or (
        verdict == "inconclusive" and cfg.on_inconclusive == "pass"), checks=checks)


def _judge_paired(check: Check, paired: Mapping[str, Any], allowed: float,
                  better: Literal["lower", "higher"]) -> None:
    """Mark `check` inconclusive when the paired 95% interval of (run - baseline) holds
    both no change and the allowed regression, with the questions a paired comparison
    of that size would need (80% power)."""
    ci = paired.get("diff_ci")
    if ci is None or allowed <= 0:
        return
    limit = -allowed if better == "higher" else allowed  # the regression in (run - baseline)
    low, high = min(ci), max(ci)
    if not (low <= 0 <= high and low <= limit <= high):
        return
    rounds = max(paired.get("rounds_a") or 1, paired.get("rounds_b") or 1)
    check.inconclusive = True
    check.needed = questions_needed(paired_variance(paired, rounds), allowed)
    check.detail += (f"; INCONCLUSIVE: on {paired['n']} shared questions the 95% interval "
                     f"of the change, {low * 100:+.1f} to {high * 100:+.1f} points, holds both "
                     f"no change and the allowed regression ({limit * 100:+.1f}); about "
                     f"{check.needed:,} questions would tell")
