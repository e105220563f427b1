"""ListOffsets v1+ by timestamp: the first offset whose record timestamp is >= a time.

Kafka answers this from a per-segment time index.  hmb keeps no time index
on disk; instead each segment's largest timestamp is learned by one walk
over its entry headers (cached on the segment, continued from where it
stopped as the active segment grows), so a lookup skips whole segments that
end before the target and decodes only the one entry that crosses it.

The rule is Kafka's (``LogSegment.findOffsetByTimestamp``): the first entry
whose *maximum* timestamp reaches the target, then the first record in it
whose timestamp does.  Timestamps come from headers only: RecordBatch
``maxTimestamp`` (magic 2), the message timestamp (magic 1; for a
compressed wrapper, the largest of its inner messages); magic 0 messages
have none and never match.

The walk reads files; callers run it in a worker thread with the segments
pinned (:meth:`hmb.log.partition.PartitionLog.offset_for_timestamp`).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from typing import NamedTuple

from hmb.log.scan import HEADER, HEADER_SIZE, READ_CHUNK
from hmb.log.segment import LogSegment
from kproto.records import read_records

NO_TIMESTAMP = -1
_I64 = struct.Struct(">q")
_V2_MAX_TIMESTAMP_AT = 35
_V1_TIMESTAMP_AT = 22


class _Head(NamedTuple):
    position: int
    size: int
    max_timestamp: int


class TimestampMatch(NamedTuple):
    offset: int
    timestamp: int


def _heads(seg: LogSegment, start: int, end: int) -> Iterator[_Head]:
    """Entry positions, sizes and largest timestamps in ``[start, end)``, read in chunks."""
    pos = start
    while pos < end:
        buf = os.pread(seg.fd, min(READ_CHUNK, end - pos), pos)
        at_end = pos + len(buf) >= end
        rel = 0
        while True:
            left = len(buf) - rel
            if left < HEADER_SIZE + 5:
                break
            _offset, size = HEADER.unpack_from(buf, rel)
            magic = buf[rel + 16]
            need = _V2_MAX_TIMESTAMP_AT + 8 if magic >= 2 else _V1_TIMESTAMP_AT + 8 if magic == 1 else 17
            total = HEADER_SIZE + size
            if size <= 0 or pos + rel + total > end:
                return  # a torn tail: nothing after it can be trusted
            if left < need:
                break
            ts = NO_TIMESTAMP
            if magic >= 2:
                ts = _I64.unpack_from(buf, rel + _V2_MAX_TIMESTAMP_AT)[0]
            elif magic == 1:
                ts = _I64.unpack_from(buf, rel + _V1_TIMESTAMP_AT)[0]
            yield _Head(pos + rel, total, ts)
            rel += total
        if rel == 0 and at_end:
            return
        pos += rel


def segment_max_timestamp(seg: LogSegment) -> int:
    """The largest timestamp in ``seg`` (cached; continued from the last walk's end)."""
    size = seg.size
    if seg.timestamps_scanned_to < size:
        best = seg.max_timestamp
        reached = seg.timestamps_scanned_to
        for head in _heads(seg, reached, size):
            best = max(best, head.max_timestamp)
            reached = head.position + head.size
        seg.max_timestamp, seg.timestamps_scanned_to = best, reached
    return seg.max_timestamp


def find_in_segments(segments: list[LogSegment], target: int, start_offset: int) -> TimestampMatch | None:
    """The first record at or after ``start_offset`` with timestamp >= ``target``, or None."""
    for seg in segments:
        if segment_max_timestamp(seg) < target:
            continue
        for head in _heads(seg, 0, seg.size):
            if head.max_timestamp < target:
                continue
            data = os.pread(seg.fd, head.size, head.position)
            for record in read_records(data):
                if record.offset >= start_offset and record.timestamp >= target:
                    return TimestampMatch(record.offset, record.timestamp)
    return None
