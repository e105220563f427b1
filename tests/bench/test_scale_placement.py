"""``python -m bench scale``'s placement: the broker on CPUs of its own, load and probe on the others."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.scale_probe import Placement

pytestmark = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="placement needs two CPUs")

THREADED = (
    "import threading, sys; "
    "[threading.Thread(target=sys.stdin.read, daemon=True).start() for _ in range(3)]; "
)


def allowed(pid: int) -> list[str]:
    """Every thread's allowed CPUs, as the kernel lists them."""
    out = []
    for task in sorted(Path(f"/proc/{pid}/task").iterdir()):
        for line in (task / "status").read_text().splitlines():
            if line.startswith("Cpus_allowed_list:"):
                out.append(line.split()[1])
    return out


@pytest.fixture
def threaded() -> Iterator[subprocess.Popen[str]]:
    """A process with four threads, waiting on stdin until told to go."""
    proc = subprocess.Popen(
        [sys.executable, "-c", THREADED + "print('up', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "up"
    yield proc
    proc.communicate("", timeout=10)


def test_the_cpus_are_split_in_two_disjoint_halves() -> None:
    place = Placement.choose()
    assert place is not None
    assert place.broker and place.load and not place.broker & place.load
    assert place.broker | place.load == frozenset(os.sched_getaffinity(0))


def test_every_thread_of_the_broker_is_pinned(threaded: subprocess.Popen[str]) -> None:
    place = Placement.choose()
    assert place is not None
    assert len(allowed(threaded.pid)) == 4 and set(allowed(threaded.pid)) != {str(min(place.broker))}
    place.pin_broker(threaded.pid)
    broker = ",".join(str(c) for c in sorted(place.broker))
    assert allowed(threaded.pid) == [broker] * 4  # a thread left out would still roam


def test_the_probe_runs_on_the_load_cpus_and_real_time_as_root() -> None:
    place = Placement.choose()
    assert place is not None
    proc = subprocess.Popen(
        [sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)), os.sched_getscheduler(0))"],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=place.enter_probe,
    )
    out, _ = proc.communicate(timeout=30)
    cpus, policy = out.rsplit(" ", 1)
    assert cpus == str(sorted(place.load))
    assert int(policy) == (os.SCHED_FIFO if os.geteuid() == 0 else os.SCHED_OTHER)
    assert "SCHED_FIFO" in place.describe() or os.geteuid() != 0
