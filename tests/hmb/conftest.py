"""Fixtures for broker tests: a fresh broker process per test (module scope when cheap)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from broker_process import BrokerProcess


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path / "data") as b:
        yield b


@pytest.fixture
def make_broker(tmp_path: Path) -> Iterator[object]:
    """A factory for brokers with settings: ``make_broker("auto.create.topics.enable=false")``."""
    started: list[BrokerProcess] = []

    def factory(*overrides: str, data_dir: Path | None = None) -> BrokerProcess:
        b = BrokerProcess(data_dir or tmp_path / f"data{len(started)}", *overrides)
        started.append(b)
        return b.start()

    yield factory
    for b in started:
        b.kill()
