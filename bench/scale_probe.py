"""The latency probe of ``python -m bench scale``, in a process of its own.

    python -m bench.scale_probe HOST PORT --paced 20 --interval-ms 200

Why a process of its own: the load generator is a Python loop serving a
thousand sockets; a probe sharing its process (and its GIL) measured the
load generator's delays as much as the broker's.  Here the probe's only
work is its own sockets.

Two kinds of client, both sending Metadata v1 for one topic:

* **paced** connections (``--paced``, default 20), each sending one request
  every ``--interval-ms`` (default 200 ms), staggered so the samples are
  spread over time: the clients that are *not* the load (a monitoring
  probe, an admin call, a consumer's heartbeat), what the issue asks the
  broker to keep answering quickly.  A connection whose answer is late
  skips its next turn rather than queue a second request.
* one **closed-loop** connection (``--closed``), sending its next request as
  soon as the answer came: itself a busy client, which a fair broker
  serves once per round like every other busy one.

Protocol with the parent (:class:`Probe` is the parent's side): the probe
connects, prints ``ready``, measures until a line arrives on stdin (or
stdin closes), then prints one JSON line, ``{"paced": [seconds...],
"closed": [seconds...]}``.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import kproto
from bench.hmb_process import ROOT
from kproto import ApiKey


class _Client:
    __slots__ = ("buffer", "due", "kind", "request", "sent_at", "sock")

    def __init__(self, sock: socket.socket, kind: str, request: bytes, due: float) -> None:
        self.sock = sock
        self.kind = kind
        self.request = request
        self.due = due  # next send time (paced); 0 for the closed loop
        self.sent_at: float | None = None
        self.buffer = b""

    def send(self, now: float) -> None:
        self.sent_at = now
        self.sock.sendall(self.request)

    def receive(self) -> bool:
        """Read what arrived; whether a whole answer is in."""
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("broker closed the probe's connection")
        self.buffer += data
        if len(self.buffer) < 4:
            return False
        (size,) = struct.unpack(">i", self.buffer[:4])
        if len(self.buffer) < 4 + size:
            return False
        self.buffer = self.buffer[4 + size :]
        return True


def run(host: str, port: int, paced: int, interval_s: float, closed: bool, topic: str) -> dict:
    request = kproto.encode_request(ApiKey.METADATA, 1, 1, {"topics": [{"name": topic}]})
    sel = selectors.DefaultSelector()
    clients = []
    start = time.perf_counter()
    kinds = ["paced"] * paced + (["closed"] if closed else [])
    for i, kind in enumerate(kinds):
        s = socket.create_connection((host, port), timeout=60)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        c = _Client(s, kind, request, start + i * interval_s / max(1, paced))
        # one answered request first, so connecting is not part of any sample
        s.sendall(request)
        while not c.receive():
            pass
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, c)
        clients.append(c)
    sel.register(sys.stdin, selectors.EVENT_READ, None)
    print("ready", flush=True)
    samples: dict[str, list[float]] = {"paced": [], "closed": []}
    now = time.perf_counter()
    for c in clients:
        c.due = max(c.due, now) if c.kind == "paced" else now
    while True:
        now = time.perf_counter()
        for c in clients:
            if c.sent_at is None and c.due <= now:
                c.send(now)
        waiting = [c.due for c in clients if c.sent_at is None]
        timeout = max(0.0, min(waiting) - time.perf_counter()) if waiting else None
        for key, _ in sel.select(timeout):
            c = key.data
            if c is None:
                sel.close()
                return samples
            if c.receive():
                done = time.perf_counter()
                assert c.sent_at is not None
                samples[c.kind].append(done - c.sent_at)
                c.sent_at = None
                if c.kind == "paced":
                    c.due += interval_s
                    while c.due < done:  # a late answer: skip the turns it overran
                        c.due += interval_s
                else:
                    c.due = done


@dataclass(frozen=True)
class Placement:
    """Which CPUs the broker and the load run on while latency is measured.

    Unpinned on two cores, the broker, a load generator at 100 % and the
    probe shared both: a watchdog in the broker caught steps of 21-246 ms in
    which it was runnable but not running, so the loaded p99 measured the
    scheduler, not the broker.  Pinned, the broker has CPUs of its own (the
    first half) and the load generator the others; the probe shares the load
    generator's CPUs but, as root, runs ``SCHED_FIFO``, so when an answer
    arrives it reads it at once instead of waiting for the load generator's
    time slice: the probe stands for clients on other machines, whose
    scheduling is not the broker's.  Both brokers are measured the same way.
    """

    broker: frozenset[int]
    load: frozenset[int]
    probe_realtime: bool

    @classmethod
    def choose(cls) -> Placement | None:
        """Half the CPUs this process may use for the broker, half for the load; None with one CPU."""
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            return None
        half = len(cpus) // 2
        return cls(frozenset(cpus[:half]), frozenset(cpus[half:]), os.geteuid() == 0)

    def describe(self) -> str:
        probe = "SCHED_FIFO" if self.probe_realtime else "normal priority"
        return f"broker on CPU {_cpus(self.broker)}; load and probe ({probe}) on CPU {_cpus(self.load)}"

    def pin_broker(self, pid: int) -> None:
        """Every thread of ``pid`` onto the broker's CPUs (threads made later inherit it)."""
        pin_threads(pid, self.broker)

    @contextmanager
    def around(self, broker_pid: int) -> Iterator[None]:
        """The broker on its CPUs and this process (the load generator) on the others, for the
        block; then every CPU again, for both."""
        before = frozenset(os.sched_getaffinity(0))
        self.pin_broker(broker_pid)
        os.sched_setaffinity(0, self.load)
        try:
            yield
        finally:
            os.sched_setaffinity(0, before)
            pin_threads(broker_pid, before)  # what a user's broker has

    def enter_probe(self) -> None:
        """In the probe's child process, before it runs: the load's CPUs, real-time if allowed."""
        os.sched_setaffinity(0, self.load)
        if self.probe_realtime:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))


def pin_threads(pid: int, cpus: frozenset[int]) -> None:
    """Pin every thread of ``pid`` (a multi-threaded broker's workers too) to ``cpus``."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            os.sched_setaffinity(int(task.name), cpus)
        except ProcessLookupError:
            continue  # a thread that ended meanwhile


def _cpus(cpus: frozenset[int]) -> str:
    return ",".join(str(c) for c in sorted(cpus))


class Probe:
    """The latency probe (:mod:`bench.scale_probe`) in its own process, from start to :meth:`stop`."""

    def __init__(
        self, bootstrap: str, paced: int, interval_ms: float, placement: Placement | None = None
    ) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.scale_probe",
                host,
                port,
                "--paced",
                str(paced),
                "--interval-ms",
                str(interval_ms),
                "--closed",
            ],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=placement.enter_probe if placement else None,
        )
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            self.proc.kill()
            raise RuntimeError("the probe did not start")

    def stop(self) -> dict[str, list[float]]:
        """Seconds per answer, by kind of client (``paced``, ``closed``)."""
        out, _ = self.proc.communicate("stop\n", timeout=60)
        if self.proc.returncode:
            raise RuntimeError(f"the probe failed ({self.proc.returncode})")
        return dict(json.loads(out.strip().splitlines()[-1]))


def percentile_ms(samples: list[float], q: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return ordered[int(q * (len(ordered) - 1))] * 1000


def p99_ms(samples: list[float]) -> float:
    return percentile_ms(samples, 0.99)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.scale_probe", description=__doc__)
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("--paced", type=int, default=20, help="paced connections")
    ap.add_argument("--interval-ms", type=float, default=200.0, help="each paced connection's interval")
    ap.add_argument("--closed", action="store_true", help="also one closed-loop connection")
    ap.add_argument("--topic", default="scale-conn")
    args = ap.parse_args(argv)
    out = run(args.host, args.port, args.paced, args.interval_ms / 1000, args.closed, args.topic)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
