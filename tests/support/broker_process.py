"""Fixtures shared by the test directories: the real broker (and Tansu) as processes, or in-process.

Where a test needs only an address (no restart, kill or signal of the
broker), ``in_process_broker`` / ``make_in_process_broker`` give the same
broker inside the test process (``hmb.Broker``), started in milliseconds
instead of a Python process per test.

The launcher itself, :class:`BrokerProcess`, lives in :mod:`bench.hmb_process`
because the benchmark suite starts brokers the same way.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.hmb_process import ROOT, BrokerProcess, free_port  # noqa: F401 - re-exported for the tests
from hmb.embedded import EmbeddedBroker

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
def process_broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    """``broker`` under a name of its own, for modules whose ``broker`` is the in-process one."""
    with BrokerProcess(tmp_path / "data") as b:
        yield b


class InProcessBroker(EmbeddedBroker):
    """``hmb.Broker`` answering to BrokerProcess's ``bootstrap`` as well."""

    @property
    def bootstrap(self) -> str:
        return self.bootstrap_servers


@pytest.fixture
def in_process_broker() -> Iterator[InProcessBroker]:
    """A broker of this test's own, in this process."""
    with InProcessBroker() as b:
        yield b


@pytest.fixture
def make_in_process_broker() -> Iterator[Callable[..., InProcessBroker]]:
    """``make_broker`` in process: ``make_in_process_broker("num.partitions=3")``."""
    started: list[InProcessBroker] = []

    def factory(*overrides: str) -> InProcessBroker:
        b = InProcessBroker(dict(o.split("=", 1) for o in overrides))
        started.append(b)
        return b.start()

    yield factory
    for b in started:
        b.stop()


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
