"""Exactly-once consume-transform-produce under ``kill -9``: of the application, then of the broker.

An application (``eos_app.py``, librdkafka) reads an input topic and writes
an output topic, committing its input offsets in each transaction.  It is
killed with SIGKILL at random moments and started again; separately the
broker is killed and restarted under it.  Afterwards a read_committed
reader of the output finds every input record's result exactly once, in
input order.  The short version of the issue's loop (30 kills while
processing 200,000 records), sized for the default test run.
"""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
from broker_process import BrokerProcess

pytestmark = pytest.mark.interop

ck = pytest.importorskip("confluent_kafka")

APP = Path(__file__).resolve().parent / "eos_app.py"
RECORDS = 20_000  # about 7 s of work for the application: every kill lands inside it
KILLS = 4


def _fill(bootstrap: str, topic: str) -> list[bytes]:
    values = [b"%06d" % i for i in range(RECORDS)]
    p = ck.Producer({"bootstrap.servers": bootstrap, "log_level": 3, "linger.ms": 5})
    for v in values:
        p.produce(topic, v, partition=0)
    assert p.flush(30) == 0
    return values


def _app(bootstrap: str, name: str) -> subprocess.Popen[bytes]:
    args = [bootstrap, f"{name}-in", f"{name}-out", f"{name}-group", f"{name}-tx", str(RECORDS)]
    return subprocess.Popen([sys.executable, str(APP), *args], stderr=subprocess.PIPE)


def _output(bootstrap: str, topic: str) -> list[bytes]:
    """Every committed value of the output, read until the high watermark."""
    c = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "eos-check",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
            "log_level": 3,
        }
    )
    try:
        c.assign([ck.TopicPartition(topic, 0, 0)])
        got: list[bytes] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            msgs = c.consume(1000, 0.5)
            if any(m.error() and m.error().code() == ck.KafkaError._PARTITION_EOF for m in msgs):
                got += [m.value() for m in msgs if not m.error()]
                return got
            got += [m.value() for m in msgs if not m.error()]
        raise AssertionError("the output was not read to its end")
    finally:
        c.close()


def _finish(bootstrap: str, name: str) -> None:
    """Run the application to the end (restarting it when it exits with an error)."""
    for _attempt in range(5):
        app = _app(bootstrap, name)
        _out, err = app.communicate(timeout=180)
        if app.returncode == 0:
            return
    raise AssertionError(f"the application never finished: {err[-2000:]!r}")


def test_the_application_killed_at_random_moments(broker: BrokerProcess) -> None:
    rng = random.Random(21)
    values = _fill(broker.bootstrap, "eos-app-in")
    for _ in range(KILLS):
        app = _app(broker.bootstrap, "eos-app")
        time.sleep(rng.uniform(0.8, 2.0))  # a random moment of its work: the fault, not a wait
        app.kill()
        app.wait(10)
    _finish(broker.bootstrap, "eos-app")
    assert _output(broker.bootstrap, "eos-app-out") == [b"out:" + v for v in values]


def test_the_broker_killed_under_the_application(broker: BrokerProcess) -> None:
    rng = random.Random(9)
    values = _fill(broker.bootstrap, "eos-brk-in")
    app = _app(broker.bootstrap, "eos-brk")
    try:
        for _ in range(KILLS):
            time.sleep(rng.uniform(0.5, 1.5))  # a random moment of the application's work
            broker.kill()
            broker.restart()
    finally:
        app.kill()
        app.wait(10)
    _finish(broker.bootstrap, "eos-brk")
    assert _output(broker.bootstrap, "eos-brk-out") == [b"out:" + v for v in values]
