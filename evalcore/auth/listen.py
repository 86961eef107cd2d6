"""Which network address the app may listen on: loopback for the single user, anything
else only with sign-in.

Without sign-in (`EVALCORE_AUTH=none`) whoever reaches the port is the one local user with
every right (import, delete, run paid models), so `make run` listens on 127.0.0.1 unless
told otherwise, and an address other machines can reach is refused until people sign in.

`python -m evalcore.auth.listen ADDRESS` checks an address (exit 2 with one line when
refused); `scripts/run_app.sh` calls it before it starts anything.
"""
from __future__ import annotations

import ipaddress
import sys
from collections.abc import Mapping

from evalcore.auth.config import auth_config
from evalcore.errors import EvalcoreError

DEFAULT_ADDRESS = "127.0.0.1"
"""Where the app listens when EVALCORE_ADDRESS is not set: this machine only."""


def is_loopback(address: str) -> bool:
    """Whether only this machine can reach `address` ("localhost", 127.x.x.x, ::1)."""
    host = address.strip().strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name or an empty string (all interfaces): reachable by others


def check_listen_address(address: str, env: Mapping[str, str] | None = None) -> str:
    """`address` if the app may listen there; raises naming the fix when it may not."""
    if is_loopback(address) or auth_config(env).team:
        return address
    shown = address or "(all interfaces)"
    raise EvalcoreError(
        f"EVALCORE_ADDRESS={shown}: other machines could use evalcore with no sign-in and "
        f"every right; keep {DEFAULT_ADDRESS} (unset EVALCORE_ADDRESS), or turn sign-in on "
        "first (EVALCORE_AUTH=oidc or header: README.md, 'Deploy for a team')")


def main(argv: list[str]) -> int:
    """Exit 0 when the app may listen on argv[0], else 2 with the reason on stderr."""
    address = argv[0] if argv else DEFAULT_ADDRESS
    try:
        check_listen_address(address)
    except EvalcoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
