"""A client of hmb's test-control endpoint (``control.listener``): one JSON object per line.

What the Kafka protocol has no field for, hmb tells over this endpoint (the
log cleaner's state per partition, for one); the ``hmb`` command reads it
from there when given ``--control HOST:PORT``.  Any broker that is not hmb
has no such endpoint: the commands that use it say so and go on without it.
"""

from __future__ import annotations

import json
import socket
from typing import Any

from hmb_client.tools.common import CliError


def control_call(address: str, op: str, args: dict[str, Any] | None = None, timeout_s: float = 5.0) -> Any:
    """The result of ``op`` on the control endpoint at ``address`` (``HOST:PORT``)."""
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout_s) as sock:
            sock.sendall(json.dumps({"op": op, "args": args or {}}).encode() + b"\n")
            reply = sock.makefile("rb").readline()
    except (OSError, ValueError) as exc:
        raise CliError(f"cannot reach the control endpoint {address}: {exc}") from None
    try:
        answer = json.loads(reply)
    except ValueError:
        raise CliError(f"{address} did not answer as hmb's control endpoint does") from None
    if not answer.get("ok"):
        raise CliError(f"control endpoint {address}: {answer.get('error')}")
    return answer.get("result")
