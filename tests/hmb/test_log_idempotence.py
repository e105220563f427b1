"""Idempotent producers at the log: a retried batch is not appended twice,
a gap or an old epoch is refused, and the state survives a restart."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from hmb.log.config import LogConfig
from hmb.log.errors import InvalidProducerEpochError, MagicNotAllowedError, OutOfOrderSequenceError
from hmb.log.partition import PartitionLog
from kproto.records import RecordBatchBuilder, build_message_set, read_records


def batch(pid: int, epoch: int, seq: int, n: int) -> bytes:
    b = RecordBatchBuilder(producer_id=pid, producer_epoch=epoch, base_sequence=seq)
    for i in range(n):
        b.append(None, b"p%d-s%d" % (pid, seq + i))
    return b.build()


def open_log(path: Path) -> PartitionLog:
    return PartitionLog.open(path, "t", 0, LogConfig(), clean=True)


def test_retry_dedup_gap_fence_and_restart(tmp_path: Path) -> None:
    async def main() -> None:
        plog = open_log(tmp_path / "t-0")
        first = await plog.append(batch(9, 0, 0, 5))
        await plog.append(build_message_set([(None, b"legacy")]))  # magic 0 coexists
        second = await plog.append(batch(9, 0, 5, 3))
        assert (first.base_offset, second.base_offset, plog.high_watermark) == (0, 6, 9)

        retry = await plog.append(batch(9, 0, 0, 5))  # the producer did not see the first ack
        assert retry.duplicate and (retry.base_offset, retry.last_offset) == (0, 4)
        assert plog.high_watermark == 9, "a duplicate must not be appended"

        with pytest.raises(OutOfOrderSequenceError):
            await plog.append(batch(9, 0, 10, 1))
        await plog.append(batch(9, 1, 0, 1))  # a new epoch restarts at 0
        with pytest.raises(InvalidProducerEpochError):
            await plog.append(batch(9, 0, 8, 1))
        plog.close()

        reopened = open_log(tmp_path / "t-0")  # state rebuilt from the batch headers
        again = await reopened.append(batch(9, 1, 0, 1))
        assert again.duplicate and again.base_offset == 9
        assert reopened.high_watermark == 10
        with reopened.read(0, 1 << 20) as region:
            assert region is not None
            values = [r.value for r in read_records(region.read())]
        assert values[:6] == [b"p9-s0", b"p9-s1", b"p9-s2", b"p9-s3", b"p9-s4", b"legacy"]
        assert len(values) == 10
        reopened.close()

    trio.run(main)


def test_v2_batches_can_be_refused_by_max_magic(tmp_path: Path) -> None:
    async def main() -> None:
        plog = open_log(tmp_path / "t-0")
        with pytest.raises(MagicNotAllowedError):
            await plog.append(batch(-1, -1, -1, 2), max_magic=1)
        assert plog.high_watermark == 0
        await plog.append(build_message_set([(None, b"v0 is fine")]), max_magic=1)
        assert plog.high_watermark == 1
        plog.close()

    trio.run(main)
