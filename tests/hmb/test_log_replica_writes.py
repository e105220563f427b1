"""A follower's copy of a partition: the leader's batches appended as they are, truncation
of a divergent tail, and the high watermark held apart from the log end."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from hmb.log.config import LogConfig
from hmb.log.errors import OffsetOutOfRangeError
from hmb.log.partition import PartitionLog
from hmb.log.replica_writes import ReplicaOffsetError, whole_entries
from kproto.records import RecordBatchBuilder, RecordBatchReader


def batch(value: bytes, *, pid: int = -1, seq: int = -1, transactional: bool = False) -> bytes:
    b = RecordBatchBuilder(
        producer_id=pid, producer_epoch=0, base_sequence=seq, is_transactional=transactional
    )
    b.append(None, value, 1_700_000_000_000)
    return b.build()


def open_log(path: Path, **cfg: object) -> PartitionLog:
    return PartitionLog.open(path, "t", 0, LogConfig(**cfg), clean=True)  # type: ignore[arg-type]


def everything(plog: PartitionLog) -> bytes:
    with plog.read(plog.log_start_offset, 1 << 24, replica=True) as region:
        return region.read() if region is not None else b""


def values(plog: PartitionLog) -> list[bytes | None]:
    """Every record value of the log, segment after segment."""
    out: list[bytes | None] = []
    offset = plog.log_start_offset
    while offset < plog.log_end_offset:
        with plog.read(offset, 1 << 24, replica=True) as region:
            assert region is not None
            for b in RecordBatchReader(region.read()):
                out.extend(r.value for r in b.records())
                offset = b.header.base_offset + b.header.last_offset_delta + 1
    return out


def test_leader_bytes_are_copied_exactly(tmp_path: Path) -> None:
    async def main() -> None:
        leader = open_log(tmp_path / "leader")
        leader.lead(3)
        await leader.append(batch(b"a", pid=7, seq=0))
        leader.lead(5)
        await leader.append(batch(b"b", pid=7, seq=1, transactional=True))
        await leader.append_marker(7, 0, commit=False, coordinator_epoch=1)
        data = everything(leader)
        follower = open_log(tmp_path / "follower")
        # a fetch cut inside the last batch: only whole entries are appended
        cut_at = len(data) - 5
        assert whole_entries(data[:cut_at]) < cut_at
        await follower.append_replicated(data[:cut_at])
        await follower.append_replicated(data[whole_entries(data[:cut_at]) :])
        assert everything(follower) == data, "the follower holds the leader's very bytes"
        assert follower.log_end_offset == leader.log_end_offset == 3
        assert [b.header.partition_leader_epoch for b in RecordBatchReader(data)] == [3, 5, 5]
        assert follower.epochs.entries == [(0, 0), (3, 0), (5, 1)]
        assert follower.txns.aborted == leader.txns.aborted and follower.txns.aborted
        assert follower.producers.snapshot() == leader.producers.snapshot()
        with pytest.raises(ReplicaOffsetError):  # offsets the log already holds
            await follower.append_replicated(data)

    trio.run(main)


def test_truncation_cuts_the_tail_and_what_it_meant(tmp_path: Path) -> None:
    async def main() -> None:
        plog = open_log(tmp_path / "p", segment_bytes=200)
        plog.lead(1)
        for i in range(6):
            await plog.append(batch(b"kept-%d" % i, pid=9, seq=i))
        plog.lead(2)
        await plog.append(batch(b"txn", pid=4, seq=0, transactional=True))
        await plog.append(batch(b"gone", pid=9, seq=6))
        assert len(plog.segments) > 2 and plog.ongoing_transactions() == {4: 6}
        plog.set_high_watermark(5)
        await plog.truncate_to(6)
        assert plog.log_end_offset == 6 and plog.high_watermark == 5
        assert plog.ongoing_transactions() == {}, "the open transaction began in the cut tail"
        assert plog.epochs.entries[-1][0] == 1, "epoch 2 began in the cut tail"
        assert values(plog) == [b"kept-%d" % i for i in range(6)]
        # the producer continues at the sequence after the last kept batch
        info = await plog.append(batch(b"again", pid=9, seq=6))
        assert info.base_offset == 6 and not info.duplicate
        plog.close()
        again = open_log(tmp_path / "p", segment_bytes=200)
        assert again.log_end_offset == 7 and again.epochs.entries[-1][0] == 1

    trio.run(main)


def test_consumers_read_only_up_to_the_high_watermark(tmp_path: Path) -> None:
    async def main() -> None:
        plog = open_log(tmp_path / "p")
        for i in range(3):
            await plog.append(batch(b"%d" % i))
        plog.set_high_watermark(1)
        with plog.read(0, 1 << 20) as region:
            assert region is not None
            assert [b.header.base_offset for b in RecordBatchReader(region.read())] == [0]
        for offset in (1, 2, 3):  # past the high watermark but inside the log: nothing yet
            with plog.read(offset, 1 << 20) as region:
                assert region is None
        with pytest.raises(OffsetOutOfRangeError):
            plog.read(4, 1 << 20).__enter__()
        assert len(list(RecordBatchReader(everything(plog)))) == 3, "a replica reads to the log end"

    trio.run(main)


def test_a_follower_behind_the_leaders_start_starts_again_there(tmp_path: Path) -> None:
    async def main() -> None:
        plog = open_log(tmp_path / "p")
        plog.lead(2)
        for i in range(3):
            await plog.append(batch(b"old-%d" % i, pid=5, seq=i))
        plog.set_high_watermark(3)
        await plog.restart_at(40)
        assert (plog.log_start_offset, plog.log_end_offset, plog.high_watermark) == (40, 40, 40)
        assert plog.producers.snapshot() == {} and plog.epochs.entries == []
        leader = open_log(tmp_path / "leader")
        leader.lead(3)
        await leader.truncate_to(0)
        await leader.restart_at(40)
        await leader.append(batch(b"new"))
        await plog.append_replicated(everything(leader))
        assert values(plog) == [b"new"] and plog.epochs.entries == [(3, 40)]
        plog.close()
        again = open_log(tmp_path / "p")
        assert (again.log_start_offset, again.log_end_offset) == (40, 41)

    trio.run(main)
