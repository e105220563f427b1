"""Offsets by timestamp: the first offset whose record timestamp is >= a time.

Kafka answers this from a per-segment time index.  hmb keeps no time index
on disk; instead each segment's largest timestamp is learned by one walk
over its entry headers (cached on the segment, continued from where it
stopped as the active segment grows), so a lookup skips whole segments that
end before the target and decodes only the one entry that crosses it.

The rule is Kafka's (``LogSegment.findOffsetByTimestamp``): the first entry
whose *maximum* timestamp reaches the target, then the first record in it
whose timestamp does.  Timestamps come from headers only
(:func:`kproto.records.entry.check_entry`): RecordBatch
``maxTimestamp`` (magic 2), the message timestamp (magic 1; for a
compressed wrapper, the largest of its inner messages); magic 0 messages
have none and never match.

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
    """The largest timestamp in ``seg`` (cached; continued from the last walk's end)."""
    size = seg.size
    if seg.timestamps_scanned_to < size:
        best = seg.max_timestamp
        reached = seg.timestamps_scanned_to
        for entry in _entries(seg, reached, size):
            best = max(best, entry.max_timestamp)
            reached = entry.position + entry.size
        seg.max_timestamp, seg.timestamps_scanned_to = best, reached
    return seg.max_timestamp


def find_in_segments(segments: list[LogSegment], target: int, start_offset: int) -> TimestampMatch | None:
    """The first record at or after ``start_offset`` with timestamp >= ``target``, or None."""
    for seg in segments:
        if segment_max_timestamp(seg) < target:
            continue
        for entry in _entries(seg, 0, seg.size):
            if entry.max_timestamp < target:
                continue
            data = os.pread(seg.fd, entry.size, entry.position)
            for record in read_records(data):
                if record.offset >= start_offset and record.timestamp >= target:
                    return TimestampMatch(record.offset, record.timestamp)
    return None
