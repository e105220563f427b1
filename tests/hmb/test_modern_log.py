"""The log-layer parts of the modern data plane, in process: what a segment knows about
the magics it holds, the timestamp lookup, producer-id blocks, the cluster id, and
topic deletion.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from hmb.log.config import LogConfig
from hmb.log.errors import PartitionDeletedError
from hmb.log.manager import LogManager, TopicBeingDeletedError
from hmb.log.meta import (
    PRODUCER_ID_BLOCK_SIZE,
    PRODUCER_ID_FILE,
    InconsistentClusterIdError,
    ProducerIdManager,
    load_cluster_id,
)
from hmb.log.partition import PartitionLog
from hmb.log.segment import UNKNOWN_MAGIC
from kproto.records import RecordBatchBuilder, build_message_set


def _run(fn: Callable[[], Awaitable[Any]]) -> Any:
    async def bounded() -> Any:
        with trio.fail_after(20):
            return await fn()

    return trio.run(bounded)


def _v2(values: list[bytes], ts: int = 1_700_000_000_000) -> bytes:
    b = RecordBatchBuilder()
    for i, v in enumerate(values):
        b.append(None, v, ts + i)
    return b.build()


def test_segment_knows_the_magic_of_its_ranges(tmp_path: Path) -> None:
    cfg = LogConfig(index_interval_bytes=64)

    async def main() -> None:
        plog = PartitionLog.open(tmp_path / "m-0", "m", 0, cfg, clean=True)
        sizes = []
        for records in (
            build_message_set([(None, b"a" * 50)] * 3),
            build_message_set([(None, b"b" * 50, 5)] * 3, magic=1),
            _v2([b"c" * 50] * 3),
            build_message_set([(None, b"d" * 50)] * 3),
        ):
            before = plog.active.size
            await plog.append(records)
            sizes.append((before, plog.active.size - before))
        seg = plog.active
        assert [seg.max_magic(pos, n) for pos, n in sizes] == [0, 1, 2, 0]
        assert seg.max_magic(0, sizes[1][0] + 1) == 1
        assert seg.max_magic(0, seg.size) == 2
        assert seg.max_magic(sizes[3][0], 10) == 0
        plog.close()
        # after a clean start only the walked tail (from the last index entry) is known
        again = PartitionLog.open(tmp_path / "m-0", "m", 0, cfg, clean=True)
        seg = again.active
        assert seg.max_magic(0, 10) == UNKNOWN_MAGIC
        assert seg.max_magic(sizes[3][0], sizes[3][1]) == 0
        again.close()
        # recovery after a crash walks everything
        crashed = PartitionLog.open(tmp_path / "m-0", "m", 0, cfg, clean=False)
        assert [crashed.active.max_magic(pos, n) for pos, n in sizes] == [0, 1, 2, 0]
        crashed.close()

    _run(main)


def test_timestamp_lookup_reads_magic_1_timestamps(tmp_path: Path) -> None:
    """Magic 1 keeps its timestamp at byte 18 of the entry; read elsewhere, a null key's
    length made today's timestamps negative and every magic-1 message unfindable."""

    async def main() -> None:
        plog = PartitionLog.open(tmp_path / "t-0", "t", 0, LogConfig(), clean=True)
        ts = 1_700_000_000_000
        await plog.append(build_message_set([(None, b"a", ts), (None, b"b", ts + 5)], magic=1))
        assert await plog.offset_for_timestamp(ts) == (0, ts)
        assert await plog.offset_for_timestamp(ts + 1) == (1, ts + 5)
        assert await plog.offset_for_timestamp(ts + 6) is None
        plog.close()

    _run(main)


def test_timestamp_lookup_continues_on_the_active_segment(tmp_path: Path) -> None:
    async def main() -> None:
        plog = PartitionLog.open(tmp_path / "t-0", "t", 0, LogConfig(), clean=True)
        await plog.append(_v2([b"a", b"b"], ts=1000))
        assert await plog.offset_for_timestamp(1001) == (1, 1001)
        assert await plog.offset_for_timestamp(1002) is None
        await plog.append(_v2([b"c"], ts=5000))  # the cached maximum must be extended
        assert await plog.offset_for_timestamp(1002) == (2, 5000)
        await plog.append(build_message_set([(None, b"m0")]))  # magic 0: no timestamp, never matches
        assert await plog.offset_for_timestamp(5001) is None
        plog.close()

    _run(main)


def test_producer_id_blocks(tmp_path: Path) -> None:
    dirs = [tmp_path / "a", tmp_path / "b"]
    for d in dirs:
        d.mkdir()

    async def main() -> None:
        first = ProducerIdManager(dirs)
        ids = [await first.allocate() for _ in range(3)]
        assert ids == [0, 1, 2]
        for d in dirs:  # persisted in every log dir before use
            assert json.loads((d / PRODUCER_ID_FILE).read_text())["block_end"] == PRODUCER_ID_BLOCK_SIZE - 1
        second = ProducerIdManager(dirs)  # a restart: the rest of the block is skipped
        assert await second.allocate() == PRODUCER_ID_BLOCK_SIZE
        (dirs[0] / PRODUCER_ID_FILE).unlink()  # one copy lost: the other still counts
        assert await ProducerIdManager(dirs).allocate() == 2 * PRODUCER_ID_BLOCK_SIZE
        assert await ProducerIdManager([tmp_path / "empty"], floor=77).allocate() == 77

    (tmp_path / "empty").mkdir()
    _run(main)


def test_cluster_id_persisted_and_checked(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    cid = load_cluster_id([a])
    assert load_cluster_id([a]) == cid
    assert load_cluster_id([a, b]) == cid  # a new log dir joins the cluster
    assert f"cluster.id={cid}" in (b / "meta.properties").read_text()
    c = tmp_path / "c"
    c.mkdir()
    other = load_cluster_id([c])
    assert other != cid
    with pytest.raises(InconsistentClusterIdError):
        load_cluster_id([a, c])


def test_delete_topic_refuses_appends_and_removes_files(tmp_path: Path) -> None:
    async def main() -> None:
        manager = LogManager([tmp_path], LogConfig())
        manager.load()
        (plog,) = manager.create_topic("doomed", 1)
        await plog.append(_v2([b"x"]))
        with plog.read(0, 1000) as region:  # a reader in flight keeps its bytes
            assert region is not None
            await manager.delete_topic("doomed")
            assert region.read()[16] == 2
        assert "doomed" not in manager.topics
        assert not list(tmp_path.glob("doomed*"))
        with pytest.raises(PartitionDeletedError):
            await plog.append(_v2([b"late"]))
        await plog.flush()  # the background flusher and retention may still hold it: no error
        assert await plog.apply_retention(now=1e12) == []
        with pytest.raises(KeyError):
            await manager.delete_topic("doomed")
        manager.close()

    _run(main)


def test_delete_topic_does_not_flush_what_it_removes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found in CI: DeleteTopics of 4,000 partitions flushed every file before removing it
    (an fsync of each log, an msync of each index, two directory fsyncs for new ones), six
    seconds of the event loop on this machine; the client timed out.  Files about to be
    removed are closed without a flush."""
    import numpy as np

    async def main() -> None:
        manager = LogManager([tmp_path], LogConfig())
        manager.load()
        for plog in manager.create_topic("doomed", 3):
            await plog.append(_v2([b"unflushed"]))
        synced: list[object] = []
        monkeypatch.setattr("os.fsync", synced.append)
        monkeypatch.setattr(np.memmap, "flush", lambda self: synced.append(self))
        await manager.delete_topic("doomed")
        assert synced == []
        assert not list(tmp_path.glob("doomed*"))
        monkeypatch.undo()
        manager.close()

    _run(main)


def test_topic_cannot_come_back_while_its_deletion_is_under_way(tmp_path: Path) -> None:
    """Found by bench/fuzz_live.py: DeleteTopics waits for each partition to be idle before
    renaming its directory; a CreateTopics (or Metadata auto-create) of the same name in
    that window made a new directory that the deletion then renamed away and removed,
    the new topic's files gone from under it ("could not rename ... for deletion" at its
    own deletion later)."""

    async def main() -> None:
        manager = LogManager([tmp_path], LogConfig())
        manager.load()
        (plog,) = manager.create_topic("again", 1)
        await plog.append(_v2([b"old"]))
        async with trio.open_nursery() as nursery:
            async with plog._state.modify():  # an append in flight holds the partition
                nursery.start_soon(manager.delete_topic, "again")
                await trio.testing.wait_all_tasks_blocked()
                assert "again" not in manager.topics and "again" in manager.deleting
                with pytest.raises(TopicBeingDeletedError):
                    manager.create_topic("again", 1)
        assert not manager.deleting
        (new,) = manager.create_topic("again", 1)
        await new.append(_v2([b"new"]))
        assert new.directory.is_dir() and [p.name for p in tmp_path.glob("again*")] == ["again-0"]
        await manager.delete_topic("again")  # no "could not rename" this time
        assert not list(tmp_path.glob("again*"))
        manager.close()

    _run(main)
