"""Client tests run against the real broker process: the fixtures of tests/hmb."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hmb"))

from broker_process import BrokerProcess


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path / "data") as b:
        yield b


@pytest.fixture
def make_broker(tmp_path: Path) -> Iterator[object]:
    """A factory for brokers with settings: ``make_broker("num.partitions=3")``."""
    started: list[BrokerProcess] = []

    def factory(*overrides: str, data_dir: Path | None = None) -> BrokerProcess:
        b = BrokerProcess(data_dir or tmp_path / f"data{len(started)}", *overrides)
        started.append(b)
        return b.start()

    yield factory
    for b in started:
        b.kill()
