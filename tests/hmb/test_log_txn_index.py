"""The aborted-transaction index: ``.txnindex`` files in Kafka's layout, written at
an abort, deleted with their segment, read at a clean start and rebuilt from the
log when torn or after a crash."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest
import trio

from hmb.log.config import LogConfig
from hmb.log.partition import PartitionLog
from hmb.log.segment import LogSegment
from hmb.log.transactions import AbortedTxn
from hmb.log.txn_index import ENTRY_SIZE, txn_index_path
from kproto.records import RecordBatchBuilder

ENTRY = struct.Struct(">hqqqq")


def txn_batch(pid: int, seq: int, n: int = 1, *, size: int = 10) -> bytes:
    b = RecordBatchBuilder(producer_id=pid, producer_epoch=0, base_sequence=seq, is_transactional=True)
    for _ in range(n):
        b.append(None, b"x" * size, 1_700_000_000_000)
    return b.build()


def plain(size: int = 10) -> bytes:
    b = RecordBatchBuilder()
    b.append(None, b"y" * size, 1_700_000_000_000)
    return b.build()


def open_log(path: Path, *, clean: bool = True, segment_bytes: int | None = None) -> PartitionLog:
    config = LogConfig() if segment_bytes is None else LogConfig(segment_bytes=segment_bytes)
    return PartitionLog.open(path, "t", 0, config, clean=clean)


def index_files(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir() if p.name.endswith(".txnindex"))


def test_an_abort_writes_kafkas_entry_a_commit_none(tmp_path: Path) -> None:
    async def main() -> None:
        path = tmp_path / "t-0"
        plog = open_log(path)
        await plog.append(txn_batch(7, 0, 2))  # 0-1
        await plog.append_marker(7, 0, commit=True, coordinator_epoch=0)  # 2
        assert index_files(path) == []
        await plog.append(txn_batch(8, 0))  # 3
        await plog.append(txn_batch(9, 0))  # 4
        await plog.append_marker(8, 0, commit=False, coordinator_epoch=0)  # 5
        data = txn_index_path(path, 0).read_bytes()
        assert data == ENTRY.pack(0, 8, 3, 5, 4), "version, producer, first, last, LSO (9's is open)"
        assert len(data) == ENTRY_SIZE == 34
        plog.close()

    trio.run(main)


def test_clean_restart_reads_the_index(tmp_path: Path) -> None:
    async def main() -> None:
        path = tmp_path / "t-0"
        plog = open_log(path, segment_bytes=300)
        for pid in (1, 2, 3):
            await plog.append(txn_batch(pid, 0, size=100))
            await plog.append_marker(pid, 0, commit=pid != 2, coordinator_epoch=0)
            await plog.append(plain(100))
        assert len(plog.segments) > 1
        before = plog.aborted_transactions(0, plog.high_watermark)
        assert before == [(2, 3)]
        plog.close()
        again = open_log(path, segment_bytes=300)
        assert again.aborted_transactions(0, again.high_watermark) == before
        assert again.txns.aborted == plog.txns.aborted
        again.close()

    trio.run(main)


def test_a_torn_index_is_rebuilt_from_the_log(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> None:
        path = tmp_path / "t-0"
        plog = open_log(path)
        await plog.append(txn_batch(1, 0))  # 0
        await plog.append(txn_batch(2, 0))  # 1
        await plog.append_marker(1, 0, commit=False, coordinator_epoch=0)  # 2
        await plog.append_marker(2, 0, commit=False, coordinator_epoch=0)  # 3
        expected = list(plog.txns.aborted)
        plog.close()
        index = txn_index_path(path, 0)
        good = index.read_bytes()
        index.write_bytes(good[: ENTRY_SIZE + 20])  # a torn second entry
        again = open_log(path)
        assert again.txns.aborted == expected
        assert index.read_bytes() == good, "the file is repaired"
        assert "torn" in caplog.text
        again.close()

    trio.run(main)


def test_a_crash_rebuilds_the_index_of_the_last_segments(tmp_path: Path) -> None:
    async def main() -> None:
        path = tmp_path / "t-0"
        plog = open_log(path)
        await plog.append(txn_batch(1, 0, 3))
        await plog.append_marker(1, 0, commit=False, coordinator_epoch=0)
        # no close: a crash; and the entry never reached the disk
        txn_index_path(path, 0).unlink()
        again = open_log(path, clean=False)
        assert again.aborted_transactions(0, again.high_watermark) == [(1, 0)]
        assert txn_index_path(path, 0).read_bytes() == ENTRY.pack(0, 1, 0, 3, 4)
        again.close()

    trio.run(main)


def test_a_rebuild_keeps_the_start_of_a_transaction_older_than_it_reads(tmp_path: Path) -> None:
    async def main() -> None:
        path = tmp_path / "t-0"
        plog = open_log(path, segment_bytes=200)
        await plog.append(txn_batch(5, 0, size=100))  # 0: begins in the first segment
        for _ in range(4):
            await plog.append(plain(100))  # a segment each
        await plog.append_marker(5, 0, commit=False, coordinator_epoch=0)
        last = plog.active.base_offset
        assert len(plog.segments) >= 4
        plog.close()
        index = txn_index_path(path, last)
        with index.open("ab") as f:
            f.write(b"\0\0\0")  # torn
        again = open_log(path, segment_bytes=200)
        assert again.aborted_transactions(0, again.high_watermark) == [(5, 0)]
        again.close()

    trio.run(main)


def test_index_files_go_with_their_segments(tmp_path: Path) -> None:
    async def main() -> None:
        path = tmp_path / "t-0"
        plog = open_log(path, segment_bytes=250)
        await plog.append(txn_batch(1, 0, size=100))
        await plog.append_marker(1, 0, commit=False, coordinator_epoch=0)
        first = plog.active.base_offset
        await plog.append(plain(150))
        await plog.append(txn_batch(2, 0, size=100))
        await plog.append_marker(2, 0, commit=False, coordinator_epoch=0)
        second = plog.active.base_offset
        await plog.append(plain(150))
        assert index_files(path) == [txn_index_path(path, b).name for b in (first, second)]

        await plog.delete_records(second)
        assert index_files(path) == [txn_index_path(path, second).name]
        assert plog.aborted_transactions(0, plog.high_watermark) == [(2, 3)]

        await plog.apply_retention(now=os.stat(plog.active.log_path).st_mtime + 10**6)
        assert index_files(path) == [], "retention deleted the segment, and its index"
        assert plog.aborted_transactions(0, plog.high_watermark) == []
        plog.close()
        stray = txn_index_path(path, 12345)
        stray.write_bytes(ENTRY.pack(0, 1, 0, 0, 0))
        assert not open_log(path, segment_bytes=250).segments.first.base_offset == 12345
        assert not stray.exists(), "an index without a segment is removed at load"

    trio.run(main)


def test_a_failed_marker_write_takes_its_entry_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def main() -> None:
        path = tmp_path / "t-0"
        plog = open_log(path)
        await plog.append(txn_batch(1, 0))

        def full(*_args: object, **_kw: object) -> int:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(LogSegment, "append", full)
        with pytest.raises(OSError):
            await plog.append_marker(1, 0, commit=False, coordinator_epoch=0)
        monkeypatch.undo()
        assert index_files(path) == []
        assert plog.ongoing_transactions() == {1: 0} and plog.txns.aborted == []
        await plog.append_marker(1, 0, commit=False, coordinator_epoch=0)
        assert plog.txns.aborted == [AbortedTxn(1, 0, 1, 2)]
        plog.close()

    trio.run(main)
