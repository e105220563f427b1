"""A monitor in another process: ``hmb rack-monitor`` and the producer's side of it.

The design's producer hands every backup to a monitor running apart over a
socket; this is that link, as JSON lines over TCP (one object per line, bytes
in base64):

* ``{"op": "watch", "origin": O, "topic": T}``: the producer writes to T;
* ``{"op": "backup", "origin": O, "topic": T, "id": I, "value": B64, "key": B64,
  "headers": [[name, B64], ...], "partition": P, "timestamp_ms": MS}``: a
  backup, never answered (the producer does not wait, as the design's did not);
* ``{"op": "flush", "origin": O, "timeout": S}``: answered with
  ``{"flushed": true|false, "stats": {...}}`` once that origin's monitor
  has every record confirmed or resent and acknowledged.

The server keeps one :class:`~hmb_client.rack.monitor.Monitor` per origin, so
one ``hmb rack-monitor`` serves any number of producers (each with its own
client id), which the design's monitor could not.
"""

from __future__ import annotations

import base64
import json
import logging
import socket
import socketserver
import threading
from dataclasses import asdict
from typing import Any

from hmb_client.rack.backups import Backup
from hmb_client.rack.monitor import Monitor, MonitorStats

__all__ = ["MonitorServer", "RemoteMonitor"]

log = logging.getLogger(__name__)


def _b64(raw: bytes | None) -> str | None:
    return None if raw is None else base64.b64encode(raw).decode()


def _raw(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


class MonitorServer:
    """Serves producers' backups on ``host:port``; one monitor per origin."""

    def __init__(
        self, bootstrap_servers: str | list[str], host: str = "127.0.0.1", port: int = 0, **monitor: Any
    ) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.settings = monitor
        self.monitors: dict[str, Monitor] = {}
        self._lock = threading.Lock()
        outer = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                outer._serve(self.rfile, self.wfile)

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self._server = socketserver.ThreadingTCPServer((host, port), Handler)
        self._server.daemon_threads = True
        self.address: tuple[str, int] = self._server.server_address[:2]  # type: ignore[assignment]

    def monitor(self, origin: str) -> Monitor:
        with self._lock:
            m = self.monitors.get(origin)
            if m is None:
                m = self.monitors[origin] = Monitor(self.bootstrap_servers, origin, **self.settings)
                log.info("rAck monitor for origin %s", origin)
            return m

    def _serve(self, rfile: Any, wfile: Any) -> None:
        for line in rfile:
            msg = json.loads(line)
            op, m = msg["op"], self.monitor(msg["origin"])
            if op == "backup":
                headers = [(k, _raw(v) or b"") for k, v in msg.get("headers") or ()]
                m.backup(
                    Backup(
                        msg["topic"],
                        msg["id"],
                        _raw(msg.get("value")),
                        _raw(msg.get("key")),
                        headers,
                        msg.get("partition"),
                        msg.get("timestamp_ms"),
                    )
                )
            elif op == "watch":
                m.watch(msg["topic"])
            elif op == "flush":
                done = m.flush(msg.get("timeout"))
                wfile.write(json.dumps({"flushed": done, "stats": asdict(m.stats)}).encode() + b"\n")
                wfile.flush()

    def serve_forever(self) -> None:
        self._server.serve_forever(poll_interval=0.2)

    def start(self) -> MonitorServer:
        threading.Thread(target=self.serve_forever, name="hmb-rack-monitor", daemon=True).start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        for m in self.monitors.values():
            m.close()


class RemoteMonitor:
    """The producer's side: the same calls as :class:`Monitor`, sent to ``hmb rack-monitor``."""

    def __init__(self, address: str, origin: str) -> None:
        host, _, port = address.rpartition(":")
        self.origin = origin
        self.stats = MonitorStats()
        self._sock = socket.create_connection((host or "127.0.0.1", int(port)), timeout=30)
        self._sock.settimeout(None)
        self._out = self._sock.makefile("wb", buffering=1 << 16)
        self._in = self._sock.makefile("rb")
        self._lock = threading.Lock()

    def _send(self, msg: dict[str, Any]) -> None:
        with self._lock:
            self._out.write(json.dumps({**msg, "origin": self.origin}).encode() + b"\n")

    def watch(self, topic: str) -> None:
        self._send({"op": "watch", "topic": topic})

    def backup(self, b: Backup) -> None:
        self.stats.backups += 1
        self._send(
            {
                "op": "backup",
                "topic": b.topic,
                "id": b.id,
                "value": _b64(b.value),
                "key": _b64(b.key),
                "headers": [[k, _b64(v)] for k, v in b.headers],
                "partition": b.partition,
                "timestamp_ms": b.timestamp_ms,
            }
        )

    def flush(self, timeout: float | None = None) -> bool:
        self._send({"op": "flush", "timeout": timeout})
        with self._lock:
            self._out.flush()
            if timeout is not None:
                self._sock.settimeout(timeout + 5)
            try:
                line = self._in.readline()
            finally:
                self._sock.settimeout(None)
        answer = json.loads(line)
        self.stats = MonitorStats(**answer["stats"])
        return bool(answer["flushed"])

    def close(self) -> None:
        with self._lock:
            try:
                self._out.flush()
            except OSError:
                pass
            self._sock.close()
