"""The real broker as a subprocess on 127.0.0.1, for integration tests.

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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

_LISTENING = re.compile(r"listening on ([\d.]+):(\d+)")
ROOT = Path(__file__).resolve().parents[2]


class BrokerProcess:
    def __init__(self, data_dir: Path, *overrides: str, port: int = 0) -> None:
        self.data_dir = data_dir
        self.overrides = list(overrides)
        self.port = port
        self.proc: subprocess.Popen[str] | None = None
        self.lines: list[str] = []
        self._ready = threading.Event()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> BrokerProcess:
        args = [
            sys.executable,
            "-m",
            "hmb",
            "serve",
            "--listen",
            f"127.0.0.1:{self.port}",
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

    def wait_for_log(self, pattern: str, timeout: float = 10.0) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while time.monotonic() < deadline:
            for line in list(self.lines):
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


# ---------------------------------------------------------------- fixtures and helpers shared by test dirs


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    """A fresh broker process for one test."""
    with BrokerProcess(tmp_path / "data") as b:
        yield b


@pytest.fixture
def make_broker(tmp_path: Path) -> Iterator[Callable[..., BrokerProcess]]:
    """A factory for brokers with settings: ``make_broker("num.partitions=3")``."""
    started: list[BrokerProcess] = []

    def factory(*overrides: str, data_dir: Path | None = None) -> BrokerProcess:
        b = BrokerProcess(data_dir or tmp_path / f"data{len(started)}", *overrides)
        started.append(b)
        return b.start()

    yield factory
    for b in started:
        b.kill()


@pytest.fixture
def tansu() -> Iterator[Any]:
    """A fresh Tansu reference broker (in-memory) for one test; skipped when it is not installed."""
    from bench.tansu import TansuProcess, TansuUnavailableError, tansu_binary

    try:
        tansu_binary()
    except TansuUnavailableError as exc:
        pytest.skip(str(exc))
    with TansuProcess() as t:
        yield t


LEGACY_RDKAFKA = {"api.version.request": False, "broker.version.fallback": "0.8.2", "log_level": 3}


def rdkafka_read_back(
    bootstrap: str, topic: str, partition: int, expected: int, timeout: float = 60
) -> list[Any]:
    """Up to ``expected`` messages of a partition from offset 0, read by librdkafka in 0.8.2 mode:
    an independent client, to check what another one wrote."""
    import confluent_kafka as ck

    c = ck.Consumer(
        {"bootstrap.servers": bootstrap, **LEGACY_RDKAFKA, "group.id": "verify", "enable.auto.commit": False}
    )
    try:
        c.assign([ck.TopicPartition(topic, partition, 0)])
        got: list[Any] = []
        deadline = time.monotonic() + timeout
        while len(got) < expected and time.monotonic() < deadline:
            for m in c.consume(10000, 0.2):
                assert not m.error(), m.error()
                got.append(m)
        return got
    finally:
        c.close()
