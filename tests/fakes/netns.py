"""Hosts on one machine: network namespaces on a bridge the test owns, links it can cut.

`Hosts(["a", "b"])` makes a bridge with a private /24 in this (the database's) namespace
and one namespace per host, each joined to the bridge by a veth pair: host `a` is
10.231.N.2, `b` 10.231.N.3, the bridge 10.231.N.1 (N picked free for this run; every
name carries a random token, so two runs never share a device). A process in a host runs
with `hosts.command("a", ...)` (`ip netns exec`); a server on the bridge address is
reached from every host, and nothing in a host reaches anything else (the namespaces have
no other route). `cut("a")` downs a's port on the bridge: its packets are dropped, as on
a pulled cable, until `restore("a")`. `close()` removes everything and is safe to call
twice or after a half-made setup.
"""
from __future__ import annotations

import os
import random
import shutil
import subprocess
import uuid

IP = shutil.which("ip") or "/usr/sbin/ip"
TC = shutil.which("tc") or "/usr/sbin/tc"
SUBNET_PREFIX = "10.231"


def unavailable() -> str | None:
    """Why namespaces cannot be made here (None if they can): not root, no `ip`, or
    the kernel refuses (a container without CAP_NET_ADMIN)."""
    if os.geteuid() != 0:
        return "network namespaces need root (run the tests as root)"
    if not os.path.exists(IP):
        return "`ip` not found: apt-get install iproute2"
    probe = f"evprobe{uuid.uuid4().hex[:6]}"
    made = _ip("netns", "add", probe)
    if made.returncode != 0:
        return f"`ip netns add` refused: {made.stderr.strip() or made.returncode}"
    _ip("netns", "del", probe)
    return None


def _ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([IP, *args], check=False, capture_output=True, text=True, timeout=30)


def _free_subnet() -> str:
    """`10.231.N` with no address or route of this machine in it."""
    used = _ip("-4", "route", "show", "table", "all").stdout + _ip("-4", "addr").stdout
    for _ in range(50):
        third = random.randint(1, 254)
        if f"{SUBNET_PREFIX}.{third}." not in used:
            return f"{SUBNET_PREFIX}.{third}"
    raise RuntimeError(f"no free {SUBNET_PREFIX}.N.0/24 subnet on this machine")


class Hosts:
    """Namespaced hosts on a bridge (see the module docstring)."""

    def __init__(self, names: list[str]) -> None:
        token = uuid.uuid4().hex[:6]
        self.token = token
        self.subnet = _free_subnet()
        self.bridge = f"evbr{token}"
        self.server = f"{self.subnet}.1"
        """The bridge's address, in this namespace: where the database and model listen."""
        self.netns = {name: f"evalcore-{token}-{name}" for name in names}
        self.port = {name: f"ev{token}{k}" for k, name in enumerate(names)}
        """The host's veth end on the bridge (the one `cut` downs)."""
        self.address = {name: f"{self.subnet}.{k + 2}" for k, name in enumerate(names)}
        self.latency_ms = 0.0
        try:
            self._make()
        except BaseException:
            self.close()
            raise

    def _run(self, *args: str) -> None:
        done = _ip(*args)
        if done.returncode != 0:
            raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")

    def _make(self) -> None:
        self._run("link", "add", self.bridge, "type", "bridge")
        self._run("addr", "add", f"{self.server}/24", "dev", self.bridge)
        self._run("link", "set", self.bridge, "up")
        for name, ns in self.netns.items():
            port, inner = self.port[name], f"{self.port[name]}i"
            self._run("netns", "add", ns)
            self._run("link", "add", port, "type", "veth", "peer", "name", inner)
            self._run("link", "set", inner, "netns", ns)
            self._run("link", "set", port, "master", self.bridge)
            self._run("link", "set", port, "up")
            self._run("-n", ns, "addr", "add", f"{self.address[name]}/24", "dev", inner)
            self._run("-n", ns, "link", "set", inner, "up")
            self._run("-n", ns, "link", "set", "lo", "up")

    def command(self, name: str, *argv: str) -> list[str]:
        """`argv` run inside host `name`'s namespace."""
        return [IP, "netns", "exec", self.netns[name], *argv]

    def cut(self, name: str) -> None:
        """Pull host `name`'s cable: its traffic to the bridge is dropped."""
        self._run("link", "set", self.port[name], "down")

    def restore(self, name: str) -> None:
        self._run("link", "set", self.port[name], "up")

    def add_latency(self, ms: float) -> str | None:
        """Delay every packet out of each host by `ms` (tc netem on the host's inner end);
        returns why not (None when done): netem needs the kernel's sch_netem module."""
        for name, ns in self.netns.items():
            done = subprocess.run([IP, "netns", "exec", ns, TC, "qdisc", "add", "dev",
                                   f"{self.port[name]}i", "root", "netem", "delay",
                                   f"{ms:g}ms"], check=False, capture_output=True, text=True, timeout=30)
            if done.returncode != 0:
                return (f"tc netem refused ({done.stderr.strip()}): this kernel has no "
                        "sch_netem module, so the links run without added latency")
        self.latency_ms = ms
        return None

    def close(self) -> None:
        """Remove the namespaces (their veth ends go with them) and the bridge."""
        for ns in self.netns.values():
            _ip("netns", "del", ns)
        for port in self.port.values():
            _ip("link", "del", port)  # already gone with its peer, unless half-made
        _ip("link", "del", self.bridge)
