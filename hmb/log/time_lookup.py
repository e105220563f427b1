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
pinned (:meth:`hmb.log.partition.PartitionLog.offset_for_timestamp`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import NamedTuple

from hmb.log.scan import Entry, iter_entries
from hmb.log.segment import LogSegment
from kproto.records import read_records


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
