"""Random packet loss between a client and the broker: a network namespace,
a veth pair, and an nftables rule (``numgen random mod 100 < P drop``).

The kernel here has no netem, but nftables can drop a random share of
packets.  The client runs inside a namespace of our own (``ip netns exec``);
the broker listens on the host end of the veth pair.  The rule sits on the
namespace's output and input hooks, so both directions lose P % of their
packets, as a lossy link does.  Needs root (CAP_NET_ADMIN) and the ``ip``
and ``nft`` tools; :func:`unavailable` says why not, for a clean skip.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from dataclasses import dataclass

#: Every link gets its own /30 in this /16 and its own names, drawn at random: two
#: processes with a lossy link each (a study and the test suite) once shared one
#: fixed pair of addresses, and interface names cut from the pid could collide.
_NET = "10.214"
_SUBNETS = 1 << 14  # /30s in the /16


def unavailable() -> str | None:
    """Why packet loss cannot be injected here (None when it can)."""
    if os.geteuid() != 0:
        return "packet loss needs root (network namespaces and nftables)"
    for tool, pkg in (("ip", "iproute2"), ("nft", "nftables")):
        if shutil.which(tool) is None:
            return f"`{tool}` is missing: apt-get install {pkg}"
    return None


def _run(*cmd: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=check)


@dataclass
class LossyLink:
    """``with LossyLink() as link: link.set_loss(5); link.exec_prefix + [...]``."""

    loss_percent: float = 0.0
    name: str = ""
    host_addr: str = ""  # the broker listens here, on the host end of the veth pair
    ns_addr: str = ""

    def __post_init__(self) -> None:
        n = secrets.randbelow(_SUBNETS)
        base = n * 4
        self.name = self.name or f"hl{n:05d}"  # interface names hl12345h / hl12345n (15 max)
        self.host_addr = f"{_NET}.{base >> 8}.{(base & 255) + 1}"
        self.ns_addr = f"{_NET}.{base >> 8}.{(base & 255) + 2}"

    @property
    def exec_prefix(self) -> list[str]:
        """Prefix a command with this to run it inside the namespace."""
        return ["ip", "netns", "exec", self.name]

    def __enter__(self) -> LossyLink:
        problem = unavailable()
        if problem:
            raise RuntimeError(problem)
        host_if, ns_if = f"{self.name[:13]}h", f"{self.name[:13]}n"
        self._host_if = host_if
        _run("ip", "netns", "add", self.name)
        try:
            _run("ip", "link", "add", host_if, "type", "veth", "peer", "name", ns_if)
            _run("ip", "link", "set", ns_if, "netns", self.name)
            _run("ip", "addr", "add", f"{self.host_addr}/30", "dev", host_if)
            _run("ip", "link", "set", host_if, "up")
            ns = self.exec_prefix
            _run(*ns, "ip", "addr", "add", f"{self.ns_addr}/30", "dev", ns_if)
            _run(*ns, "ip", "link", "set", ns_if, "up")
            _run(*ns, "ip", "link", "set", "lo", "up")
            _run(*ns, "nft", "add", "table", "inet", "hmbloss")
            for hook in ("output", "input"):
                _run(
                    *ns,
                    "nft",
                    "add",
                    "chain",
                    "inet",
                    "hmbloss",
                    hook,
                    f"{{ type filter hook {hook} priority 0 ; }}",
                )
        except BaseException:
            self.__exit__(None, None, None)
            raise
        self.set_loss(self.loss_percent)
        return self

    def set_loss(self, percent: float) -> None:
        """Drop ``percent`` % of packets each way from now on (0 removes the rule)."""
        ns = self.exec_prefix
        for hook in ("output", "input"):
            _run(*ns, "nft", "flush", "chain", "inet", "hmbloss", hook)
            if percent > 0:
                # numgen draws 0..9999 per packet: a resolution of 0.01 %.
                _run(
                    *ns,
                    "nft",
                    "add",
                    "rule",
                    "inet",
                    "hmbloss",
                    hook,
                    "ip",
                    "saddr",
                    "!=",
                    "127.0.0.1",
                    "numgen",
                    "random",
                    "mod",
                    "10000",
                    "<",
                    str(int(percent * 100)),
                    "drop",
                )
        self.loss_percent = percent

    def counters(self) -> str:
        return _run(*self.exec_prefix, "nft", "list", "table", "inet", "hmbloss", check=False).stdout

    def __exit__(self, *exc: object) -> None:
        _run("ip", "netns", "del", self.name, check=False)  # takes the veth pair and the rules with it
        _run("ip", "link", "del", getattr(self, "_host_if", "none"), check=False)
