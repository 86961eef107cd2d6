"""`python -m evalcore audit list [--since] [--json]`: who changed what, and when."""
from __future__ import annotations

import argparse
from datetime import datetime, timedelta, timezone

from evalcore.service.users import require_read
from evalcore.auth.audit import event_info, list_events
from evalcore.cli.common import acting_user, bounded, engine_and_settings, print_json
from evalcore.errors import EvalcoreError


def parse_since(text: str) -> datetime:
    """'2026-11-24', '2026-11-24T08:00', or a span back from now: '30m', '12h', '7d'."""
    value = text.strip()
    units = {"m": "minutes", "h": "hours", "d": "days"}
    if value[-1:] in units and value[:-1].isdigit():
        return datetime.now(timezone.utc) - timedelta(**{units[value[-1]]: int(value[:-1])})
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise EvalcoreError(f"--since {text!r}: give a date (2026-11-24), a time "
                            "(2026-11-24T08:00, UTC) or a span back from now (30m, 12h, 7d)"
                            ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _list(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    require_read(acting_user(engine), engine, "audit list")
    since = parse_since(args.since) if args.since else None
    events = [event_info(e) for e in list_events(engine, since=since, actor=args.actor,
                                                 limit=args.limit)]
    if args.json:
        print_json(events)
        return 0
    for e in events:
        obj = f"{e['object_type']} {e['object_id']}".strip()
        print(f"{e['at'][:19].replace('T', ' ')}  {e['actor']:<28} {e['action']:<24} {obj}")
    if not events:
        print("no audit events" + (f" since {args.since}" if args.since else ""))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `audit` command."""
    parser = subparsers.add_parser("audit", help="the audit log: every state change, who, when")
    sub = parser.add_subparsers(dest="audit_command", required=True, metavar="ACTION")
    lst = sub.add_parser("list", help="events, newest first")
    lst.add_argument("--since", help="a date, a UTC time, or a span back from now (30m, 12h, 7d)")
    lst.add_argument("--actor", help="only this user's events (email)")
    lst.add_argument("--limit", type=bounded(1, 100_000, int), default=500,
                     help="at most this many events (default 500)")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(func=_list)
