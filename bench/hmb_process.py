"""hmb as a subprocess on 127.0.0.1: for integration tests and the benchmark suite.

``BrokerProcess`` starts ``python -m hmb serve`` on port 0 and learns the
bound port from its start-up log line (a bounded wait on that condition, no
sleeps).  It can be stopped gracefully (SIGTERM), killed with SIGKILL, and
restarted on the same port and data directory.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

_LISTENING = re.compile(r"listening on ([\d.]+):(\d+)")
ROOT = Path(__file__).resolve().parents[1]


class BrokerProcess:
    def __init__(self, data_dir: Path, *overrides: str, port: int = 0, host: str = "127.0.0.1") -> None:
        self.data_dir = data_dir
        self.host = host
        self.overrides = list(overrides)
        self.port = port
        self.proc: subprocess.Popen[str] | None = None
        self.lines: list[str] = []
        self._ready = threading.Event()

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self, timeout: float = 30.0) -> BrokerProcess:
        args = [
            sys.executable,
            "-m",
            "hmb",
            "serve",
            "--listen",
            f"{self.host}:{self.port}",
            "--data-dir",
            str(self.data_dir),
        ]
        for o in self.overrides:
            args += ["--override", o]
        self._ready.clear()
        self.proc = subprocess.Popen(
            args,
            cwd=ROOT,
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        threading.Thread(target=self._pump, args=(self.proc,), daemon=True).start()
        if not self._ready.wait(timeout):
            self.kill()
            raise RuntimeError("broker did not start:\n" + "".join(self.lines[-30:]))
        return self

    def _pump(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            self.lines.append(line)
            m = _LISTENING.search(line)
            if m and not self._ready.is_set():
                self.port = int(m.group(2))
                self._ready.set()

    def log_text(self) -> str:
        return "".join(self.lines)

    def wait_for_log(self, pattern: str, timeout: float = 10.0, since: int = 0) -> re.Match[str]:
        """The first log line from line ``since`` on that matches ``pattern`` (waits for it).

        ``since`` (a ``len(self.lines)`` taken earlier) skips what was logged before: a
        client's address may be one an earlier connection had, and its lines must not match.
        """
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while time.monotonic() < deadline:
            for line in self.lines[since:]:
                if m := rx.search(line):
                    return m
            time.sleep(0.02)
        raise AssertionError(f"{pattern!r} not in broker log:\n{self.log_text()[-3000:]}")

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM and wait: the clean shutdown path."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def kill(self) -> None:
        """SIGKILL: the crash path."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def restart(self) -> BrokerProcess:
        """Start again on the same port and data dir (after stop() or kill())."""
        return self.start()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def rss_bytes(self) -> int:
        assert self.proc is not None
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")

    def __enter__(self) -> BrokerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.kill()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
