"""A follower's rules, in-process: where it cuts its copy on a leader change given the
leader's answer for its latest epoch (KIP-101/279), and what one fetch answer does to it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import trio

from hmb.log.config import LogConfig
from hmb.log.partition import PartitionLog
from hmb.replication.fetcher import LeaderFetcher
from kproto.records import RecordBatchBuilder


def batch(value: bytes) -> bytes:
    b = RecordBatchBuilder()
    b.append(None, value, 1_700_000_000_000)
    return b.build()


async def follower_log(path: Path, epochs: list[tuple[int, int]]) -> PartitionLog:
    """A log of one-record batches led in ``epochs``: (epoch, how many records)."""
    plog = PartitionLog.open(path, "t", 0, LogConfig(), clean=True)
    for epoch, count in epochs:
        plog.lead(epoch)
        for i in range(count):
            await plog.append(batch(b"e%d-%d" % (epoch, i)))
    return plog


def fetcher() -> LeaderFetcher:
    return LeaderFetcher(Any, 0)  # type: ignore[arg-type]  # _cut_to uses only the log


def test_same_epoch_cuts_to_the_leaders_end(tmp_path: Path) -> None:
    async def main() -> None:
        plog = await follower_log(tmp_path / "p", [(1, 5), (3, 5)])
        assert await fetcher()._cut_to(plog, 3, 8)
        assert plog.log_end_offset == 8 and plog.epochs.entries[-1] == (3, 5)

    trio.run(main)


def test_an_older_epoch_the_follower_had_cuts_where_its_copy_of_it_ends(tmp_path: Path) -> None:
    async def main() -> None:
        plog = await follower_log(tmp_path / "p", [(1, 5), (2, 2), (3, 5)])  # epoch 2 ends at 7 here
        assert await fetcher()._cut_to(plog, 2, 9), "epoch 2 is known here: settled"
        assert plog.log_end_offset == 7 and plog.epochs.latest_epoch == 2

    trio.run(main)


def test_an_epoch_the_follower_never_had_cuts_and_asks_again(tmp_path: Path) -> None:
    async def main() -> None:
        plog = await follower_log(tmp_path / "p", [(1, 5), (3, 5)])
        # the leader has epoch 2 up to 8; this copy went from epoch 1 (ending at 5) to 3
        assert not await fetcher()._cut_to(plog, 2, 8), "not settled: ask about epoch 1 next"
        assert plog.log_end_offset == 5 and plog.epochs.latest_epoch == 1
        assert await fetcher()._cut_to(plog, 1, 5)
        assert plog.log_end_offset == 5

    trio.run(main)


def test_an_undefined_answer_cuts_to_the_high_watermark(tmp_path: Path) -> None:
    async def main() -> None:
        plog = await follower_log(tmp_path / "p", [(1, 6)])
        plog.set_high_watermark(4)
        assert await fetcher()._cut_to(plog, -1, -1)
        assert plog.log_end_offset == 4

    trio.run(main)


def test_an_answer_moves_the_high_watermark_and_the_log_start(tmp_path: Path) -> None:
    async def main() -> None:
        plog = await follower_log(tmp_path / "p", [(1, 3)])
        leader = await follower_log(tmp_path / "leader", [(1, 5)])
        with leader.read(3, 1 << 20) as region:
            assert region is not None
            more = region.read()
        logs = SimpleNamespace(delete_records=lambda plog, before: plog.delete_records(before))
        f = LeaderFetcher(SimpleNamespace(node=SimpleNamespace(logs=logs)), 0)  # type: ignore[arg-type]
        following = SimpleNamespace(truncated=True)
        part = SimpleNamespace(
            error_code=0, diverging_epoch=None, records=more, high_watermark=4, log_start_offset=2
        )
        assert await f._take(("t", 0), following, plog, part)  # type: ignore[arg-type]
        assert (plog.log_start_offset, plog.high_watermark, plog.log_end_offset) == (2, 4, 5)
        part.log_start_offset = 9  # past this copy's high watermark: not yet
        part.records = None
        assert await f._take(("t", 0), following, plog, part)  # type: ignore[arg-type]
        assert plog.log_start_offset == 2

    trio.run(main)
