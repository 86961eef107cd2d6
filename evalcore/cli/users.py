"""`python -m evalcore users add|list|set-role`: who may do what in team mode."""
from __future__ import annotations

import argparse

from evalcore.service.users import add_user, require_read, set_role
from evalcore.auth.users import list_users, user_info
from evalcore.cli.common import acting_user, engine_and_settings, print_json

ROLE_HELP = ("viewer, evaluator, reviewer or admin; worker for the workers' service "
             "account (runs `python -m evalcore worker`, nothing else)")


def _add(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    user = add_user(acting_user(engine), engine, args.email, args.role, args.name or "")
    print(f"added {user.email} as {user.role}")
    return 0


def _list(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    require_read(acting_user(engine), engine, "users list")
    users = [user_info(u) for u in list_users(engine)]
    if args.json:
        print_json(users)
        return 0
    if not users:
        print("no users yet: `python -m evalcore users add EMAIL --role ROLE`, or sign in")
    for u in users:
        seen = (u["last_seen"] or "never")[:16].replace("T", " ")
        print(f"{u['email']:<32} {u['role']:<10} {u['name']:<24} last seen {seen}")
    return 0


def _set_role(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    user = set_role(acting_user(engine), engine, args.email, args.role)
    print(f"{user.email} is now {user.role}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `users` command and its sub-commands."""
    parser = subparsers.add_parser("users", help="team mode: list users, add them, set roles")
    sub = parser.add_subparsers(dest="users_command", required=True, metavar="ACTION")
    add = sub.add_parser("add", help="add a user with a role (admins only)")
    add.add_argument("email")
    add.add_argument("--role", required=True, help=ROLE_HELP)
    add.add_argument("--name", help="display name (default: the email)")
    add.set_defaults(func=_add)
    lst = sub.add_parser("list", help="everyone who signed in or was added, with their role")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(func=_list)
    role = sub.add_parser("set-role", help="change a user's role (admins only)")
    role.add_argument("email")
    role.add_argument("role", help=ROLE_HELP)
    role.set_defaults(func=_set_role)
