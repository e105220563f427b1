"""The control API over TCP, for a broker in another process: one JSON object per line each way.

A request names an operation of :class:`hmb.control.api.Control` and its
keyword arguments; the reply carries the result or an error::

    -> {"op": "inject", "args": {"api": "PRODUCE", "error": "NOT_LEADER_OR_FOLLOWER", "count": 3}}
    <- {"ok": true, "result": {"api_key": 0, "count": 3, ...}}
    -> {"op": "advance_clock", "args": {"seconds": 691200}}
    <- {"ok": true, "result": null}
    -> {"op": "nonsense"}
    <- {"ok": false, "error": "unknown op 'nonsense'; ops: ..."}

Rules:

* Off unless ``control.listener`` is set; meant for a loopback address.  Once
  the broker has security, a connection must log in as a super user first
  (:mod:`hmb.control.gate`).
* Only the operations in :data:`OPS` exist; a bad request (not JSON, an
  unknown op, wrong arguments, a refused fault) gets ``ok: false`` with the
  reason and changes nothing; the connection stays open.
* Bytes in results are text when they are UTF-8, else ``{"base64": ...}``
  (as in snapshots); committed offsets are ``[topic, partition, offset]``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import TYPE_CHECKING, Any

import trio

from hmb.control.state import as_json_bytes

if TYPE_CHECKING:
    from hmb.config import Listener
    from hmb.control.api import Control
    from hmb.control.gate import Gate

log = logging.getLogger(__name__)

OPS = (
    "advance_clock",
    "clean_logs",
    "cleaner",
    "clear_faults",
    "clear_requests",
    "committed",
    "create_topic",
    "delete_topic",
    "group",
    "inject",
    "limit_versions",
    "make_unavailable",
    "producers",
    "records",
    "requests",
    "seed",
    "snapshot",
    "topics",
    "watermarks",
)
MAX_LINE = 64 << 20


def jsonable(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return as_json_bytes(bytes(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value))
    if isinstance(value, dict):
        if any(isinstance(k, tuple) for k in value):
            return [[*k, jsonable(v)] for k, v in value.items()]
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


async def answer(control: Control, line: bytes) -> dict[str, Any]:
    """The reply to one request line."""
    try:
        request = json.loads(line)
    except ValueError as exc:
        return {"ok": False, "error": f"not JSON: {exc}"}
    if not isinstance(request, dict) or not isinstance(request.get("op"), str):
        return {"ok": False, "error": 'expected {"op": NAME, "args": {...}}'}
    op, args = request["op"], request.get("args", {})
    if op not in OPS:
        return {"ok": False, "error": f"unknown op {op!r}; ops: {', '.join(OPS)}"}
    if not isinstance(args, dict):
        return {"ok": False, "error": "args must be an object"}
    if op == "advance_clock":
        args = {"delta": args.get("seconds", 0)}
    try:
        result = await getattr(control, op)(**args)
    except (TypeError, ValueError, KeyError) as exc:
        return {"ok": False, "error": f"{op}: {exc}"}
    return {"ok": True, "result": jsonable(result)}


async def _login(gate: Gate, line: bytes, peer: str) -> tuple[dict[str, Any], bool]:
    """The reply to a line before login, and whether the connection is now logged in."""
    try:
        request = json.loads(line)
    except ValueError:
        request = None
    if not isinstance(request, dict) or request.get("op") != "login":
        hint = 'log in first: {"op": "login", "args": {"user": ..., "password": ...}}'
        return {"ok": False, "error": hint}, False
    given = request.get("args")
    args: dict[str, Any] = given if isinstance(given, dict) else {}
    refused = await gate.login(args.get("user"), args.get("password"), peer)
    if refused is not None:
        return {"ok": False, "error": refused}, False
    return {"ok": True, "result": None}, True


async def serve_control(
    listener: Listener,
    control: Control,
    gate: Gate | None = None,
    *,
    task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED,
) -> None:
    listeners = await trio.open_tcp_listeners(listener.port, host=listener.host)

    async def handle(stream: trio.SocketStream) -> None:
        buffer = b""
        logged_in = gate is None or not gate.required
        try:
            host, port = stream.socket.getpeername()[:2]
            peer = f"{host}:{port}"
        except OSError:
            peer = "?"
        try:
            while True:
                while b"\n" not in buffer:
                    data = await stream.receive_some(1 << 16)
                    if not data:
                        return
                    buffer += data
                    if len(buffer) > MAX_LINE:
                        await stream.send_all(b'{"ok": false, "error": "request line too long"}\n')
                        return
                line, _, buffer = buffer.partition(b"\n")
                if not line.strip():
                    continue
                if not logged_in:
                    assert gate is not None
                    reply, logged_in = await _login(gate, line, peer)
                else:
                    reply = await answer(control, line)
                await stream.send_all(json.dumps(reply).encode() + b"\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return

    host, port = listeners[0].socket.getsockname()[:2]
    if host not in ("127.0.0.1", "::1"):
        log.warning("the control endpoint listens on %s, beyond loopback: it has no authentication", host)
    async with trio.open_nursery() as nursery:
        await nursery.start(trio.serve_listeners, handle, listeners)
        log.info("control endpoint (JSON lines) at %s:%d", host, port)
        task_status.started((host, port))
