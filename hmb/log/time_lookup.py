"""Offsets by timestamp: the first offset whose record timestamp is >= a time.

As Kafka does (``LogSegment.findOffsetByTimestamp``): the first segment whose
largest timestamp reaches the target (kept on the segment, see
:mod:`hmb.log.segment`), then its time index (:mod:`hmb.log.time_index`)
names the last offset all of whose records are older; the offset index
gives the position after it, and only the entries from there are walked: the
first entry whose *maximum* timestamp reaches the target, then the first
record in it whose timestamp does.  That short walk is the one Kafka does
too.  Timestamps come from headers (RecordBatch ``maxTimestamp`` for magic
2, the message timestamp for magic 1; for a compressed wrapper, the largest
of its inner messages); magic 0 messages have none and never match.

The walk reads files; callers run it in a worker thread with the segments
pinned (:func:`offset_for_timestamp`).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

import trio

from hmb.log.scan import Entry, iter_entries
from hmb.log.segment import LogSegment
from kproto.records import read_records

if TYPE_CHECKING:
    from hmb.log.partition import PartitionLog


class TimestampMatch(NamedTuple):
    offset: int
    timestamp: int


def _entries(seg: LogSegment, start: int, end: int) -> Iterator[Entry]:
    """The entries of ``seg`` in ``[start, end)``, up to a torn tail (nothing after it can be trusted)."""
    for entry in iter_entries(seg.fd, start, end, validate=False):
        if not isinstance(entry, Entry):
            return
        yield entry


def segment_max_timestamp(seg: LogSegment) -> int:
    """The largest timestamp in ``seg`` (-1: none)."""
    return seg.max_timestamp


def find_in_segments(segments: list[LogSegment], target: int, start_offset: int) -> TimestampMatch | None:
    """The first record at or after ``start_offset`` with timestamp >= ``target``, or None."""
    for seg in segments:
        if seg.max_timestamp < target:
            continue
        older = seg.time_index.offset_before(target)
        first = max(start_offset, seg.base_offset if older is None else older + 1)
        position = seg.find_position(first)
        if position is None:
            continue
        for entry in _entries(seg, position, seg.size):
            if entry.max_timestamp < target or entry.last_offset < start_offset:
                continue
            data = os.pread(seg.fd, entry.size, entry.position)
            for record in read_records(data):
                if record.offset >= start_offset and record.timestamp >= target:
                    return TimestampMatch(record.offset, record.timestamp)
    return None


# ---------------------------------------------------------------- a partition's lookups


def offsets_before(plog: PartitionLog, timestamp: int, max_num_offsets: int) -> list[int]:
    """Kafka 0.8's ``getOffsetsBefore``: segment start offsets by file time, newest first.

    -1 (latest) starts from the log end offset, -2 (earliest) is the log
    start offset.
    """
    pairs = [(seg.base_offset, seg.last_modified * 1000) for seg in plog.segments.values()]
    if plog.active.size > 0:
        pairs.append((plog.high_watermark, time.time() * 1000))
    if timestamp == -1:
        start = len(pairs) - 1
    elif timestamp == -2:
        start = 0
    else:
        start = len(pairs) - 1
        while start >= 0 and pairs[start][1] > timestamp:
            start -= 1
    count = min(max_num_offsets, start + 1)
    return sorted((pairs[start - j][0] for j in range(max(0, count))), reverse=True)


async def offset_for_timestamp(plog: PartitionLog, timestamp: int) -> TimestampMatch | None:
    """The first record with a timestamp >= ``timestamp`` (None: there is none).

    The walk over segment files runs in a worker thread, the segments pinned.
    """
    with contextlib.ExitStack() as stack:
        segments = [stack.enter_context(seg.pinned()) for seg in list(plog.segments.values())]
        start = plog.log_start_offset
        return await trio.to_thread.run_sync(find_in_segments, segments, timestamp, start)


async def offset_of_max_timestamp(plog: PartitionLog) -> TimestampMatch | None:
    """The first record with the largest timestamp in the log (ListOffsets' MAX_TIMESTAMP).

    None when no record carries a timestamp (an empty log, or only magic 0).
    """
    with contextlib.ExitStack() as stack:
        segments = [stack.enter_context(seg.pinned()) for seg in list(plog.segments.values())]
        start = plog.log_start_offset

        def walk() -> TimestampMatch | None:
            largest = max((segment_max_timestamp(seg) for seg in segments), default=-1)
            return None if largest < 0 else find_in_segments(segments, largest, start)

        return await trio.to_thread.run_sync(walk)
