"""`runs list | show | resume | export | cancel`."""
from __future__ import annotations

import argparse

from evalcore.service.runs import (cancel_run, delete_run, get_run, iter_call_rows, list_runs,
                                   resume_run, retry_failed, set_budget, waiting_text)
from evalcore.cli.common import (acting_user, add_exit_flags, engine_and_settings, print_json,
                                 print_rows, run_exit_code, run_with_progress)
from evalcore.errors import RunError
from evalcore.kinds import find_kind
from evalcore.report.export import write_calls_csv, write_json_rows
from evalcore.report.run_figures import figure_metrics, run_figures
from evalcore.report.timing import active_seconds, elapsed_seconds


def register(sub: argparse._SubParsersAction) -> None:
    runs = sub.add_parser("runs", help="list, inspect, resume or cancel runs")
    rsub = runs.add_subparsers(dest="runs_command", required=True, metavar="ACTION")

    p = rsub.add_parser("list", help="recent runs with status and progress")
    p.add_argument("--kind", help="only runs of this kind (stability, robustness, fairness)")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.set_defaults(func=_list)

    p = rsub.add_parser("show", help="one run's settings and progress")
    p.add_argument("run_id", type=int)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_show)

    p = rsub.add_parser("resume", help="finish a run that was cancelled or whose process died")
    p.add_argument("run_id", type=int)
    p.add_argument("--force", action="store_true",
                   help="resume even if another process seems to be running it")
    p.add_argument("--budget", type=float, metavar="COST",
                   help="a new spending limit for the run (e.g. one that stopped at its budget)")
    add_exit_flags(p)
    p.set_defaults(func=_resume)

    p.add_argument("--detach", action="store_true",
                   help="only queue it for a worker; print {\"run_id\": N} and return")

    p = rsub.add_parser("retry-failed", help="send a finished run's failed calls again "
                                             "(their earlier record is kept)")
    p.add_argument("run_id", type=int)
    p.add_argument("--detach", action="store_true", help="only queue it for a worker")
    add_exit_flags(p)
    p.set_defaults(func=_retry_failed)

    p = rsub.add_parser("export", help="write every call of a run to a JSON or CSV file "
                                       "(streamed: any run size in bounded memory)")
    p.add_argument("run_id", type=int)
    p.add_argument("--json", metavar="FILE", help="the run and its calls as JSON")
    p.add_argument("--csv", metavar="FILE", help="one row per call (UTF-8 with BOM)")
    p.set_defaults(func=_export)

    p = rsub.add_parser("cancel", help="ask a run to stop after its calls in flight")
    p.add_argument("run_id", type=int)
    p.set_defaults(func=_cancel)

    p = rsub.add_parser("delete", help="delete a run with its calls (not while it runs)")
    p.add_argument("run_id", type=int)
    p.set_defaults(func=_delete)


def run_dict(run) -> dict:  # noqa: ANN001 - a store Run row
    """The public view of a run row (its config holds env var names, never keys)."""
    return {"id": run.id, "kind": run.kind, "status": run.status, "name": run.name,
            "model": run.model, "judge": run.judge, "rounds": run.rounds,
            "done": run.done, "total": run.total, "errors": run.errors, "retries": run.retries,
            "created_by": run.created_by, "created_at": run.created_at,
            "started_at": run.started_at, "finished_at": run.finished_at, "error": run.error}


def _list(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    return print_rows(list_runs(engine, kind=args.kind, limit=args.limit), args.json,
                      run_dict, lambda r: f"{r.id:>5}  {r.kind:<11} {r.status:<10} "
                                          f"{r.done:>6}/{r.total:<6} err={r.errors:<4} "
                                          f"{r.model:<16} {r.created_at:%Y-%m-%d %H:%M}  {r.name}",
                      "no runs yet")


def _show(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()

    run = get_run(engine, args.run_id)

    data = run_dict(run) | {"active_s": active_seconds(engine, run.id),
                            "elapsed_s": elapsed_seconds(run),
                            "config": run.config.get("spec", {})}
    waiting = waiting_text(engine, run)  # a queued run: behind busy workers, or none
    if waiting:
        data["waiting"] = waiting

    kind = find_kind(run.kind)  # what the kind adds (stability: answer groups, entropy)
    report, lines = kind.detail(engine, run.id) if kind and kind.detail else (None, [])
    if args.json:  # the run's figures as every view reads them (`EvalKind.metrics`)
        data["metrics"] = [m._asdict() for m in figure_metrics(run_figures(engine, run.id))]
        print_json(data if report is None else data | {"report": report})
    else:
        for key, value in data.items():
            print(f"{key:>12}: {value}")
        for warning in (report or {}).get("warnings", []):
            print(f"{'warning':>12}: {warning}")
        for line in lines:
            print(line)
    return 0


def _resume(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    actor = acting_user(engine)
    if args.budget is not None:
        set_budget(actor, engine, args.run_id, args.budget)
    if args.detach:
        resume_run(actor, engine, args.run_id)
        print_json({"run_id": args.run_id})
        return 0
    resume_run(actor, engine, args.run_id, force=args.force, queue=False)
    status = run_with_progress(engine, args.run_id, force=args.force)
    print(f"run {args.run_id}: {status}")
    return run_exit_code(engine, args.run_id, status, args.max_error_rate)


def _retry_failed(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    moved, _job = retry_failed(acting_user(engine), engine, args.run_id)
    print(f"run {args.run_id}: {moved} failed call(s) will be sent again", flush=True)
    if args.detach:
        print_json({"run_id": args.run_id})
        return 0
    status = run_with_progress(engine, args.run_id)
    print(f"run {args.run_id}: {status}")
    return run_exit_code(engine, args.run_id, status, args.max_error_rate)


def _export(args: argparse.Namespace) -> int:
    if not (args.json or args.csv):
        raise RunError("runs export: give --json FILE and/or --csv FILE")
    engine, _ = engine_and_settings()
    run = get_run(engine, args.run_id)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            count = write_json_rows({"run": run_dict(run)}, "calls",
                                    iter_call_rows(engine, run.id), fh)
        print(f"run {run.id}: {count} calls written to {args.json}")
    if args.csv:
        with open(args.csv, "w", encoding="utf-8", newline="") as fh:
            count = write_calls_csv(engine, run.id, fh)
        print(f"run {run.id}: {count} calls written to {args.csv}")
    return 0


def _delete(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    run = delete_run(acting_user(engine), engine, args.run_id)
    print(f"run {args.run_id} ({run.kind}, {run.model}) deleted with its calls")
    return 0


def _cancel(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    cancel_run(acting_user(engine), engine, args.run_id)
    print(f"run {args.run_id}: cancel requested")
    return 0
