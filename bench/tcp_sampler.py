"""The kernel's TCP counters for one process's connections to one broker port.

The thesis measured "TCP throughput of the producer's connection", i.e.
bytes on the wire including request framing, not payload.  The kernel
keeps that per socket (``struct tcp_info``: ``bytes_acked``,
``bytes_received``); ``ss -tinp`` reports it for every socket of every
process, so the client under test needs no instrumentation and librdkafka
and hmb_client are measured alike.  A client may hold several connections
to the same broker (bootstrap plus leader connection): they are summed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass

_PID = re.compile(r"pid=(\d+),")
_COUNTER = re.compile(r"\b(bytes_acked|bytes_received):(\d+)")


@dataclass(frozen=True)
class TcpCounters:
    bytes_acked: int = 0  # sent by the client and acknowledged by the broker's kernel
    bytes_received: int = 0  # received by the client


def have_ss() -> bool:
    return shutil.which("ss") is not None


def parse_ss(output: str, pid: int) -> TcpCounters:
    """Sum the counters of ``pid``'s sockets in ``ss -tinpH`` output.

    ``ss`` prints one line per socket (addresses, ``users:((name,pid=..))``)
    followed by an indented line of ``tcp_info`` fields.
    """
    acked = received = 0
    mine = False
    for line in output.splitlines():
        if not line[:1].isspace():
            m = _PID.search(line)
            mine = m is not None and int(m.group(1)) == pid
            continue
        if mine:
            fields = dict(_COUNTER.findall(line))
            acked += int(fields.get("bytes_acked", 0))
            received += int(fields.get("bytes_received", 0))
    return TcpCounters(acked, received)


def sample(pid: int, port: int, host: str = "127.0.0.1") -> TcpCounters:
    """Counters now of ``pid``'s established connections to ``host:port``."""
    out = subprocess.run(
        ["ss", "-tinpH", "state", "established", "dst", f"{host}:{port}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return parse_ss(out, pid)
