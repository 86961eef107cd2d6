"""`jobs list | show | requeue | cancel`: the queue of long work."""
from __future__ import annotations

import argparse

from evalcore.service.jobs import cancel_job, get_job, list_jobs, requeue_job
from evalcore.cli.common import acting_user, engine_and_settings, print_json, print_rows


def register(sub: argparse._SubParsersAction) -> None:
    jobs = sub.add_parser("jobs", help="list, inspect, requeue or cancel queued work")
    jsub = jobs.add_subparsers(dest="jobs_command", required=True, metavar="ACTION")
    p = jsub.add_parser("list", help="recent jobs with status, owner and progress")
    p.add_argument("--status", nargs="+", help="only jobs with these statuses")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_list)
    p = jsub.add_parser("show", help="one job")
    p.add_argument("job_id", type=int)
    p.set_defaults(func=_show)
    p = jsub.add_parser("requeue", help="queue a failed, cancelled or abandoned job again")
    p.add_argument("job_id", type=int)
    p.set_defaults(func=_requeue)
    p = jsub.add_parser("cancel", help="ask a job to stop (a queued one stops at once)")
    p.add_argument("job_id", type=int)
    p.set_defaults(func=_cancel)


def job_dict(job) -> dict:  # noqa: ANN001 - a store Job row
    """The public view of a job row."""
    return {"id": job.id, "kind": job.kind, "status": job.status, "label": job.label,
            "run_id": job.run_id, "owner": job.owner, "attempts": job.attempts,
            "done": job.done, "total": job.total, "lease_expires_at": job.lease_expires_at,
            "created_by": job.created_by, "created_at": job.created_at,
            "started_at": job.started_at, "finished_at": job.finished_at,
            "error": job.error, "result": job.result}


def _list(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    return print_rows(list_jobs(engine, status=args.status or (), limit=args.limit), args.json,
                      job_dict, lambda j: f"{j.id:>5}  {j.kind:<15} {j.status:<10} try "
                                          f"{j.attempts}  {j.owner or '-':<32} {j.label}",
                      "no jobs yet")


def _show(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    print_json(job_dict(get_job(engine, args.job_id)))
    return 0


def _requeue(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    requeue_job(acting_user(engine), engine, args.job_id)
    print(f"job {args.job_id}: queued")
    return 0


def _cancel(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    done = cancel_job(acting_user(engine), engine, args.job_id)
    print(f"job {args.job_id}: " + ("cancel requested" if done else "already finished"))
    return 0
