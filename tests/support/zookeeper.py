"""A standalone ZooKeeper for the cluster tests, from Debian's ``zookeeper`` package.

The package installs the server as jars (``/usr/share/java/zookeeper.jar``,
whose manifest names the jars it needs) and a launcher, ``zkServer.sh``, that
reads the system-wide ``/etc/zookeeper/conf``.  A test must not touch that
configuration, so :class:`ZooKeeperProcess` runs the server class itself,
``org.apache.zookeeper.server.ZooKeeperServerMain``, with Java and a
``zoo.cfg`` it writes into a temporary directory: a free 127.0.0.1 port, its
own data directory, a short tick (so short session timeouts are allowed),
the admin HTTP server off and the ``ruok``/``srvr`` four-letter words
allowed.  ZooKeeper's extended types (TTL znodes) are enabled, as rAck's
receipts are TTL znodes (an operator must set the same
``zookeeper.extendedTypesEnabled=true``), and expired ones are removed every
second instead of every minute, so that a test sees a TTL end.

Readiness is a bounded wait on ``srvr`` reporting a mode (``ruok`` answers
``imok`` as soon as the port is open, before the server serves requests:
"This ZooKeeper instance is not currently serving requests"); the time it took
is kept in :attr:`ZooKeeperProcess.start_seconds` so a test run can say what
a ZooKeeper costs.  Without Java or the package the fixture skips with the
reason (``scripts/test`` installs the package when it runs as root).
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.hmb_process import free_port

JAR = Path("/usr/share/java/zookeeper.jar")
MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"
TICK_MS = 200  # sessions may be 2..20 ticks: 0.4 s .. 4 s by default; maxSessionTimeout widens it


def missing() -> str | None:
    """Why a ZooKeeper cannot be started here, or None when it can."""
    if shutil.which("java") is None:
        return "java is not installed (ZooKeeper needs it; Debian: apt-get install default-jre-headless)"
    if not JAR.exists():
        return f"ZooKeeper is not installed ({JAR} missing; Debian: apt-get install zookeeper)"
    return None


def four_letter_word(host: str, port: int, word: str, timeout: float = 1.0) -> str:
    """Send one of ZooKeeper's four-letter commands and return its whole answer ('' on failure)."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.sendall(word.encode())
            chunks = []
            while chunk := s.recv(4096):
                chunks.append(chunk)
            return b"".join(chunks).decode(errors="replace")
    except OSError:
        return ""


class ZooKeeperProcess:
    """One standalone ZooKeeper server on 127.0.0.1, data in ``home``."""

    def __init__(self, home: Path, *, port: int = 0) -> None:
        self.home = home
        self.host = "127.0.0.1"
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.start_seconds = 0.0

    @property
    def connect(self) -> str:
        """The ``zookeeper.connect`` string of this server (no chroot)."""
        return f"{self.host}:{self.port}"

    def _write_config(self) -> Path:
        (self.home / "data").mkdir(parents=True, exist_ok=True)
        cfg = self.home / "zoo.cfg"
        cfg.write_text(
            f"dataDir={self.home / 'data'}\n"
            f"clientPort={self.port}\n"
            f"clientPortAddress={self.host}\n"
            f"tickTime={TICK_MS}\n"
            "maxSessionTimeout=60000\n"
            "admin.enableServer=false\n"
            "4lw.commands.whitelist=ruok,srvr,stat\n"
            "maxClientCnxns=0\n"
        )
        return cfg

    def start(self, timeout: float = 60.0) -> ZooKeeperProcess:
        cfg = self._write_config()
        began = time.monotonic()
        log = (self.home / "zookeeper.out").open("ab")
        self.proc = subprocess.Popen(
            [
                "java",
                "-Xmx256m",
                "-XX:+UseSerialGC",  # two cores shared with the brokers: no parallel GC threads
                "-Dzookeeper.extendedTypesEnabled=true",
                "-Dznode.container.checkIntervalMs=1000",  # TTL znodes go within a second of expiring
                f"-Dzookeeper.log.dir={self.home}",
                "-cp",
                f"{JAR}:/etc/zookeeper/conf",
                MAIN,
                str(cfg),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = began + timeout
        while "Mode: " not in four_letter_word(self.host, self.port, "srvr"):
            if self.proc.poll() is not None:
                raise RuntimeError(f"ZooKeeper exited with {self.proc.returncode}: {self.output()[-2000:]}")
            if time.monotonic() > deadline:
                self.kill()
                tail = self.output()[-2000:]
                raise TimeoutError(f"ZooKeeper did not serve within {timeout} s: {tail}")
            time.sleep(0.05)  # polling a condition: the next srvr
        self.start_seconds = time.monotonic() - began
        return self

    def output(self) -> str:
        with contextlib.suppress(OSError):
            return (self.home / "zookeeper.out").read_text(errors="replace")
        return ""

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()

    def __enter__(self) -> ZooKeeperProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture(scope="module")
def zookeeper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperProcess]:
    """One ZooKeeper per test module (a JVM costs seconds): tests use chroots to stay apart."""
    reason = missing()
    if reason:
        pytest.skip(reason)
    with ZooKeeperProcess(tmp_path_factory.mktemp("zookeeper")) as zk:
        print(f"ZooKeeper started on {zk.connect} in {zk.start_seconds:.2f} s")
        yield zk
