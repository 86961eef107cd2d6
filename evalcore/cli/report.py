"""`report --model NAME [--include-demo] [--runs ID,...] --html PATH [--pdf PATH]`: the
trust report."""
from __future__ import annotations

import argparse
from pathlib import Path

from evalcore.cli.common import engine_and_settings
from evalcore.cli.leaderboard import run_ids
from evalcore.demo import DEMO_DATASET
from evalcore.errors import EvalcoreError
from evalcore.report.gates import default_gate_configs, default_gates
from evalcore.report.sections import to_stderr
from evalcore.report.trust import trust_report_html, write_pdf


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="one self-contained trust report (HTML, PDF) per model")
    p.add_argument("--model", help="the model (its latest finished run of each kind and dataset)")
    p.add_argument("--runs", default="", help="run ids instead (comma-separated)")
    p.add_argument("--include-demo", action="store_true",
                   help="with --model: also the runs on the demo's dataset (left out by "
                        "default: the first click on Home is no evidence about a model)")
    p.add_argument("--html", required=True, help="write the HTML report here")
    p.add_argument("--pdf", help="also print it to this PDF (headless chromium)")
    p.add_argument("--gate", action="append", default=[], metavar="KIND=TOML",
                   help="gate config per kind (default: data/gate*.example.toml)")
    p.set_defaults(func=_report)


def gate_configs(pairs: list[str]) -> dict[str, str]:
    """KIND=PATH options over the defaults in data/."""
    configs = default_gate_configs()
    for pair in pairs:
        kind, sep, path = pair.partition("=")
        if not sep or kind not in default_gates():
            raise EvalcoreError(f"--gate {pair!r}: write KIND=PATH with KIND one of "
                                f"{', '.join(default_gates())}")
        configs[kind] = path
    return configs


def _report(args: argparse.Namespace) -> int:
    if not args.model and not args.runs:
        raise EvalcoreError("give --model NAME or --runs ID,ID")
    engine, _ = engine_and_settings()

    text = trust_report_html(engine, model=args.model, runs=run_ids(args.runs),
                             gates=gate_configs(args.gate), on_failure=to_stderr,
                             leave_out=() if args.include_demo else (DEMO_DATASET,))
    Path(args.html).write_text(text, encoding="utf-8")
    print(f"wrote {args.html} ({len(text.encode('utf-8')) / 1e6:.1f} MB, self-contained)")
    if args.pdf:
        write_pdf(Path(args.html), Path(args.pdf))
        print(f"wrote {args.pdf}")
    return 0
