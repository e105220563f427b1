"""The log at scale: creating a partition costs the same however many exist, a clean
restart reads no partition's files before the first request, an empty partition
takes no index blocks, and the open-files limit is raised at start.

Costs are counted (Python function calls, files read), never timed.
"""

from __future__ import annotations

import logging
import resource
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
import trio

from hmb.log.config import LogConfig
from hmb.log.limits import check_open_files, files_needed
from hmb.log.manager import LogManager
from hmb.log.segment import LogSegment
from kproto.records import Compression, RecordBatchBuilder


def _one_record() -> bytes:
    b = RecordBatchBuilder(Compression.NONE, -1, -1, -1, False)
    b.append(None, b"x" * 100, 1_700_000_000_000, [])
    return b.build()


def _calls_to_create(mgr: LogManager, topic: str, partitions: int) -> int:
    """How many Python functions run while ``topic`` is created."""
    calls = 0

    def count(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "call":
            calls += 1

    sys.setprofile(count)
    try:
        mgr.create_topic(topic, partitions)
    finally:
        sys.setprofile(None)
    return calls


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[LogManager]:
    mgr = LogManager([tmp_path / "a", tmp_path / "b"], LogConfig())
    mgr.load()
    yield mgr
    mgr.close()


def test_creating_a_partition_costs_the_same_with_many_existing(manager: LogManager) -> None:
    manager.create_topic("warm-up", 10)  # first-use costs (imports, caches) out of the way
    few = _calls_to_create(manager, "probe-00001", 10)
    for i in range(60):
        manager.create_topic(f"filler-{i:04d}", 20)  # 1,200 more partitions
    many = _calls_to_create(manager, "probe-00002", 10)
    # a recount of the existing partitions per new one made this 1,200 times larger
    assert many <= few * 1.02, (few, many)
    # and placement still balances the log dirs
    per_dir = [sum(1 for p in manager.all_logs() if p.directory.parent == d) for d in manager.log_dirs]
    assert abs(per_dir[0] - per_dir[1]) <= 1, per_dir


def test_clean_restart_reads_no_partition_before_it_is_used(tmp_path: Path) -> None:
    dirs = [tmp_path / "data"]
    mgr = LogManager(dirs, LogConfig())
    mgr.load()
    mgr.create_topic("many", 300)
    trio.run(mgr.get("many", 299).append, _one_record())  # type: ignore[union-attr]
    mgr.close()

    again = LogManager(dirs, LogConfig())
    again.load()
    assert len(again.topics["many"]) == 300
    assert not any(p.loaded for p in again.all_logs())  # nothing read yet
    last = again.get("many", 299)
    assert last is not None and last.high_watermark == 1  # read at first use
    assert [p.loaded for p in again.all_logs()].count(True) == 1

    async def load_the_rest() -> None:
        await again.run_loader()
        assert all(p.loaded for p in again.all_logs())
        assert await again.producer_ids.allocate() == 0

    trio.run(load_the_rest)
    again.close()


def test_unclean_restart_validates_every_partition_before_serving(tmp_path: Path) -> None:
    dirs = [tmp_path / "data"]
    mgr = LogManager(dirs, LogConfig())
    mgr.load()
    mgr.create_topic("crashed", 5)
    for p in mgr.all_logs():  # no clean-shutdown marker: as after kill -9
        p.close()
    again = LogManager(dirs, LogConfig())
    again.load()
    assert all(p.loaded for p in again.all_logs())
    again.close()


def test_a_partition_of_one_record_takes_no_index_blocks(manager: LogManager) -> None:
    plog = manager.create_topic("small", 1)[0]
    trio.run(plog.append, _one_record())
    index = plog.active.index_path
    assert index.stat().st_blocks == 0  # Kafka's sparse preallocation: no block before an entry


def test_open_files_soft_limit_is_raised_to_the_hard_one(caplog: pytest.LogCaptureFixture) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard < 64:
        pytest.skip(f"hard open-files limit {hard}: nothing to raise the soft one to")
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
        with caplog.at_level(logging.WARNING, logger="hmb.log.limits"):
            assert check_open_files(10) == hard
            assert not caplog.records
            too_many = hard  # needs 2 files each: more than the hard limit allows
            assert files_needed(too_many) > hard
            check_open_files(too_many)
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == hard
        assert any("open-files limit" in r.getMessage() for r in caplog.records)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _idempotent_batch(sequence: int) -> bytes:
    b = RecordBatchBuilder(Compression.NONE, 4242, 0, sequence, False)
    b.append(None, b"y" * 10, 1_700_000_000_000, [])
    return b.build()


def test_clean_restart_takes_producer_state_from_the_snapshot_not_the_segments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dirs = [tmp_path / "data"]
    mgr = LogManager(dirs, LogConfig())
    mgr.load()
    plog = mgr.create_topic("idem", 1)[0]
    first = trio.run(plog.append, _idempotent_batch(0))
    mgr.close()

    walks = []
    monkeypatch.setattr(LogSegment, "entries", lambda seg: walks.append(seg) or iter(()))
    again = LogManager(dirs, LogConfig())
    again.load()
    restored = again.get("idem", 0)
    assert restored is not None
    retry = trio.run(restored.append, _idempotent_batch(0))  # the producer's retry of the same batch
    assert retry.duplicate and retry.base_offset == first.base_offset
    assert walks == []  # no segment was read through to rebuild the state
    again.close()
