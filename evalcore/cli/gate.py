"""`gate`: check a stored run of any kind against a gate config (and a baseline run) for CI."""
from __future__ import annotations

import argparse
import json

from evalcore.cli import EXIT_GATE_FAILED, EXIT_NOT_MEASURED, EXIT_OK
from evalcore.cli.common import engine_and_settings
from evalcore.metrics.gate import load_gate_config
from evalcore.report.gates import check_word, gate_any, verdict_line, verdict_of
from evalcore.service.baselines import baseline_for_run


def register(sub: argparse._SubParsersAction) -> None:
    g = sub.add_parser("gate", help="check a run (any kind) against a gate config; exit 1 fail, "
                       "4 not measured")
    g.add_argument("--run", type=int, required=True, help="the run to check")
    g.add_argument("--baseline", type=int, help="a baseline run for the [relative] checks "
                   "(default: the stored baseline of the run's dataset and model, "
                   "`baseline set RUN`)")
    g.add_argument("--config", required=True, help="gate TOML (see data/gate.example.toml)")
    g.add_argument("--threshold", type=float, default=7.0, help="decision threshold (default 7)")
    g.add_argument("--json", help="write the verdict JSON here")
    g.set_defaults(func=_gate)


def _gate(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    config = load_gate_config(args.config)
    baseline = args.baseline
    if baseline is None and config.max_regression is not None:
        baseline = baseline_for_run(engine, args.run)
        if baseline is not None:
            print(f"baseline: run {baseline} (the stored baseline of its dataset and model)")
    result = gate_any(engine, args.run, config, baseline_id=baseline,
                      threshold=args.threshold)
    for check in result.checks:
        print(f"{check_word(check)}  {check.name:<28} {check.detail}")
    print(f"gate: {verdict_line(result)}")
    if args.json:
        import msgspec

        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({**msgspec.to_builtins(result), "verdict": verdict_of(result),
                       "statuses": {c.name: c.status for c in result.checks}}, fh,
                      indent=2)
    verdict = verdict_of(result)
    if verdict == "inconclusive":  # the config says what CI does with it
        print(f"gate: inconclusive, counted as {config.on_inconclusive} ([relative] "
              "on_inconclusive)")
        return EXIT_OK if config.on_inconclusive == "pass" else EXIT_GATE_FAILED
    return {"pass": EXIT_OK, "fail": EXIT_GATE_FAILED}.get(verdict, EXIT_NOT_MEASURED)
