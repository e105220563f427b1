"""Memory per partition: what an idle partition keeps on the Python heap stays small.

A broker holds thousands of partitions, most of them idle; each keeps its log,
one segment, two indexes and the lock around them.  Counted in bytes with
tracemalloc (what a partition allocates, not how long anything takes), after
one topic has warmed every import and cache up.  Path objects are left out of
the count: ``pathlib`` interns each new name in a table that grows by
doubling, so the share one partition pays depends on where the table stands.
"""

from __future__ import annotations

import gc
import pathlib
import tracemalloc
from pathlib import Path

import trio

from hmb.log import segment, time_index
from hmb.log.config import LogConfig
from hmb.log.manager import LogManager
from kproto.records import Compression, RecordBatchBuilder

PARTITIONS = 500
# Measured at 0.9 KiB (2.3 KiB before the classes were slotted and the rarely used
# state made lazily); the bound leaves room for Python versions, not for a regression.
MAX_BYTES_PER_PARTITION = 1200


def _one_record() -> bytes:
    b = RecordBatchBuilder(Compression.NONE, -1, -1, -1, False)
    b.append(None, b"x" * 100, 1_700_000_000_000, [])
    return b.build()


def _heap_growth(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot) -> int:
    outside_pathlib = [tracemalloc.Filter(False, pathlib.__file__)]
    stats = after.filter_traces(outside_pathlib).compare_to(before.filter_traces(outside_pathlib), "filename")
    return sum(s.size_diff for s in stats)


def test_an_idle_partition_keeps_little_on_the_heap(tmp_path: Path) -> None:
    async def main() -> int:
        logs = LogManager([tmp_path], LogConfig())
        logs.load()
        for plog in await logs.create_topic_async("warm", 10):
            await plog.append(bytearray(_one_record()))
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.take_snapshot()
            for t in range(PARTITIONS // 10):
                await logs.create_topic_async(f"t{t}", 10)
            gc.collect()
            after = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
        logs.close()
        return _heap_growth(before, after)

    per_partition = trio.run(main) / PARTITIONS
    assert per_partition <= MAX_BYTES_PER_PARTITION, f"{per_partition:.0f} bytes per partition"


def test_shared_empty_containers_stay_empty(tmp_path: Path) -> None:
    """Empty segments and time indexes share their lists, and so do segments of one run:
    writing must never change the shared ones."""
    cfg = LogConfig(index_interval_bytes=64, segment_bytes=4096)

    async def main() -> None:
        logs = LogManager([tmp_path], cfg)
        logs.load()
        (plog,) = await logs.create_topic_async("t", 1)
        for _ in range(100):  # several segments, each with index entries
            await plog.append(bytearray(_one_record()))
        assert len(plog.segments) > 1
        seg = plog.active
        assert seg.max_magic(0, seg.size) == 2 and seg.time_index.entries
        await plog.delete_records(plog.high_watermark)
        logs.close()

    trio.run(main)
    assert segment._NO_RUNS == [] and time_index._NO_ENTRIES == []
    assert segment._AT_ZERO == [0] and all(runs == [m] for m, runs in segment._ONE_RUN.items())


def test_a_segment_whose_magic_changes_gets_runs_of_its_own(tmp_path: Path) -> None:
    """One run from the start is shared; a second run (or a changed first one) is not."""
    seg = segment.LogSegment(tmp_path, 0, new=True)
    other = segment.LogSegment(tmp_path, 100, new=True)
    seg._note_magic(0, 2)
    other._note_magic(0, 2)
    assert seg._run_starts is other._run_starts  # shared
    seg._note_magic(0, 1)  # the first entries were re-noted at a lower magic
    seg._note_magic(50, 2)
    other._note_magic(70, 0)
    assert (seg._run_starts, seg._run_magics) == ([0, 50], [1, 2])
    assert (other._run_starts, other._run_magics) == ([0, 70], [2, 0])
    assert segment._AT_ZERO == [0] and segment._ONE_RUN[2] == [2]
    seg.close()
    other.close()
