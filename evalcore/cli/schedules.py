"""`schedules add|list|pause|resume|delete|test-alert`: continuous monitoring from the
command line (`baseline` is in cli/baseline.py), through the same functions as the Monitoring page
(`evalcore.service.monitoring`, `evalcore.monitor.view`)."""
from __future__ import annotations

import argparse
from typing import Any

from evalcore.service.monitoring import (add_schedule, delete_schedule, edit_schedule,
                                         pause_schedule, test_alert)
from evalcore.service.schedules import every_label, get_schedule, parse_every
from evalcore.service.users import require_read
from evalcore.cli.common import acting_user, engine_and_settings, print_rows
from evalcore.kinds import get_kind
from evalcore.monitor import channels
from evalcore.monitor.runs import schedulable
from evalcore.monitor.view import monitoring, row_state

def _params(args: argparse.Namespace) -> dict[str, Any]:
    """The kind's run options from the generic flags (`EvalKind.schedule`)."""
    return get_kind(args.kind).schedule.params({
        "dataset": args.suite or args.dataset, "attack_sets": args.attack_set,
        "model": args.model, "rounds": args.rounds, "samples": args.samples,
        "limit": args.limit})


def _channels(args: argparse.Namespace) -> list[dict[str, Any]]:
    found = [channels.webhook(url, shape=args.webhook_shape) for url in args.webhook]
    found += [channels.webhook(url_env=name, shape=args.webhook_shape)
              for name in args.webhook_env]
    found += [channels.email(to, host=args.smtp_host or "", port=args.smtp_port or 0,
                             user=args.smtp_user or "", password_env=args.smtp_password_env or "",
                             sender=args.email_from or "", tls=args.smtp_tls)
              for to in args.email]
    return found


def _add(args: argparse.Namespace) -> int:
    engine, settings = engine_and_settings()
    every_s = parse_every(args.every) if args.every else None
    row = add_schedule(acting_user(engine), engine, args.kind, _params(args),
                       models_path=settings.models_path, every_s=every_s, cron=args.cron,
                       gate=args.gate, channels=_channels(args))
    print(f"schedule {row.id}: {args.kind} every {args.every or 'cron ' + args.cron}, "
          f"first run due {row.next_due_at:%Y-%m-%d %H:%M:%S} UTC (workers start it)")
    return 0


def _line(info: dict[str, Any]) -> str:
    target = info["params"].get("dataset") or info["params"].get("suite") or \
        info["params"].get("attack_set_ids")
    last = info["last"][-1] if info["last"] else None
    verdict = f"last {row_state(last)}" if last else "no run yet"
    nxt = "paused" if info["paused"] else f"next {info['next_due'][:19].replace('T', ' ')}"
    return (f"{info['id']:>4}  {info['kind']:<10} {str(target):<20} {info['params']['model']:<14}"
            f" every {info['every']:<8} {nxt:<25} runs {len(info['runs']):>3}  {verdict}")


def _list(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    require_read(acting_user(engine), engine, "schedules list")
    return print_rows(monitoring(engine), args.json, lambda info: info, _line,
                      "no schedules yet: `python -m evalcore schedules add stability "
                      "--every 1d --dataset D --model M`")


def _pause(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    row = pause_schedule(acting_user(engine), engine, args.id, args.schedules_command == "pause")
    state = "paused" if row.paused else f"resumed, next run due {row.next_due_at:%H:%M:%S} UTC"
    print(f"schedule {row.id} {state}")
    return 0


def _edit(args: argparse.Namespace) -> int:
    engine, settings = engine_and_settings()
    chans = _channels(args) if (args.webhook or args.webhook_env or args.email) else None
    options = {k: v for k, v in (("model", args.model), ("rounds", args.rounds),
                                 ("samples", args.samples), ("limit", args.limit)) if v}
    options = {k: v for k, v in options.items() if k in ("model", "limit")
               or k in get_schedule(engine, args.id).params}  # rounds or samples: the kind's
    row = edit_schedule(acting_user(engine), engine, args.id, models_path=settings.models_path,
                        every_s=parse_every(args.every) if args.every else None,
                        cron=args.cron, gate=args.gate,
                        channels=[] if args.no_alerts else chans, params=options or None)
    print(f"schedule {row.id}: every {every_label(row.every_s, row.cron)}, next run due "
          f"{row.next_due_at:%Y-%m-%d %H:%M:%S} UTC")
    return 0


def _delete(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    delete_schedule(acting_user(engine), engine, args.id)
    print(f"schedule {args.id} deleted (its runs stay)")
    return 0


def _test_alert(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    results = test_alert(acting_user(engine), engine, args.id)
    if not results:
        print(f"schedule {args.id} has no alert channel (--webhook, --email)")
    for r in results:
        print(f"{r['status']:<7} {r['channel']}" + (f": {r['error']}" if r["error"] else ""))
    return 0 if all(r["status"] == "sent" for r in results) else 1


def _channel_flags(parser: argparse.ArgumentParser) -> None:
    """--webhook, --webhook-env, --webhook-shape, --email and the SMTP settings."""
    parser.add_argument("--webhook", action="append", default=[], metavar="URL",
                     help="POST alerts here (shown masked)")
    parser.add_argument("--webhook-env", action="append", default=[], metavar="NAME",
                     help="environment variable holding a secret webhook URL")
    parser.add_argument("--webhook-shape", choices=("plain", "slack", "feishu"), default="plain",
                     help="JSON shape of the webhook body (default plain)")
    parser.add_argument("--email", action="append", default=[], metavar="ADDR",
                     help="e-mail alerts to ADDR over SMTP (EVALCORE_SMTP_* settings)")
    parser.add_argument("--smtp-host", help="SMTP host (default EVALCORE_SMTP_HOST or localhost)")
    parser.add_argument("--smtp-port", type=int, help="SMTP port (default EVALCORE_SMTP_PORT, 25)")
    parser.add_argument("--smtp-user", help="SMTP login (default EVALCORE_SMTP_USER)")
    parser.add_argument("--smtp-password-env", metavar="NAME",
                     help="environment variable holding the SMTP password")
    parser.add_argument("--email-from", help="sender address (default EVALCORE_SMTP_FROM)")
    parser.add_argument("--smtp-tls", choices=("none", "starttls", "ssl"), default="none")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `schedules` command."""
    p = sub.add_parser("schedules", help="runs that repeat (every N s/m/h/d or cron), gated "
                                         "and alerted")
    ss = p.add_subparsers(dest="schedules_command", required=True, metavar="ACTION")
    add = ss.add_parser("add", help="add a schedule (evaluators and up)")
    add.add_argument("kind", choices=schedulable(), help="the kind of run to repeat")
    when = add.add_mutually_exclusive_group(required=True)
    when.add_argument("--every", help="period: 10s, 5m, 1h, 1d")
    when.add_argument("--cron", help='cron expression in UTC, e.g. "0 6 * * *"')
    add.add_argument("--dataset", help="dataset (stability)")
    add.add_argument("--suite", help="fairness suite (fairness)")
    add.add_argument("--attack-set", type=int, action="append", default=[],
                     help="attack set id (robustness; repeatable)")
    add.add_argument("--model", required=True, help="model name (see `models list`)")
    add.add_argument("--rounds", type=int, default=1, help="rounds per question (default 1)")
    add.add_argument("--samples", type=int, default=1, help="fairness samples (default 1)")
    add.add_argument("--limit", type=int, help="only the first N items")
    add.add_argument("--gate", help="gate TOML (default: the regression checks of the kind's "
                     "data/gate*.example.toml against the stored baseline)")
    _channel_flags(add)
    add.set_defaults(func=_add)
    edit = ss.add_parser("edit", help="change a schedule's period, options, gate or channels")
    edit.add_argument("id", type=int)
    period = edit.add_mutually_exclusive_group()
    period.add_argument("--every", help="new period: 10s, 5m, 1h, 1d")
    period.add_argument("--cron", help="new cron expression (UTC)")
    edit.add_argument("--model", help="new model")
    edit.add_argument("--rounds", type=int)
    edit.add_argument("--samples", type=int)
    edit.add_argument("--limit", type=int)
    edit.add_argument("--gate", help="new gate TOML")
    _channel_flags(edit)
    edit.add_argument("--no-alerts", action="store_true", help="remove every channel")
    edit.set_defaults(func=_edit)
    lst = ss.add_parser("list", help="schedules with next due time, runs and verdicts")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(func=_list)
    for name, func, text in (("pause", _pause, "pause a schedule"),
                             ("resume", _pause, "resume a paused schedule"),
                             ("delete", _delete, "delete a schedule (its runs stay)"),
                             ("test-alert", _test_alert, "send a test message to its channels")):
        one = ss.add_parser(name, help=text)
        one.add_argument("id", type=int)
        one.set_defaults(func=func)

