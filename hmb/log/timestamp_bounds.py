"""How far from the broker's clock a produced record's own timestamp may lie.

A CreateTime topic keeps the producer's timestamps, and time retention and
ListOffsets by time trust them; so, as Kafka (3.6 and later) does, an append
is refused when one of its records is older than ``now -
message.timestamp.before.max.ms`` or newer than ``now +
message.timestamp.after.max.ms`` (:class:`InvalidTimestampError`); nothing
of that append is written.  Rules of this module:

* LogAppendTime topics are exempt: the broker overwrites the timestamps.
* A record without a timestamp (magic 0, or -1) is not checked.
* The upper bound is read from headers alone (a batch's MaxTimestamp, a
  message's Timestamp): with the default limits (no lower bound) checking
  costs one comparison per append.
* The lower bound needs each entry's *smallest* timestamp, which a header
  does not state (a record may sit before its batch's first timestamp): a
  single-record batch's is its BaseTimestamp, otherwise the records are
  decoded.  Only a topic that sets a lower bound pays for that.
"""

from __future__ import annotations

import struct

from hmb.log.errors import InvalidTimestampError
from hmb.properties import NEVER
from kproto.records import read_records
from kproto.records.entry import LOG_OVERHEAD, MAGIC_OFFSET, NO_TIMESTAMP, entry_size

_V1_TIMESTAMP = struct.Struct(">q")  # a magic-1 message's Timestamp, at byte 18
# a batch's BaseTimestamp and MaxTimestamp (bytes 27 and 35), then ProducerId .. RecordCount
_V2_TIMESTAMPS = struct.Struct(">qq14xi")


def check_timestamps(
    records: bytes | bytearray, max_timestamp: int, now_ms: int, before_max_ms: int, after_max_ms: int
) -> None:
    """Raise :class:`InvalidTimestampError` when a record of ``records`` lies outside the bounds.

    ``max_timestamp`` is the largest timestamp validation already found in
    ``records`` (-1: none), ``now_ms`` the broker's clock.
    """
    if after_max_ms < NEVER and max_timestamp > now_ms + after_max_ms:
        raise InvalidTimestampError(
            f"timestamp {max_timestamp} is more than {after_max_ms} ms after the broker's time {now_ms}"
        )
    if before_max_ms >= NEVER or max_timestamp == NO_TIMESTAMP:
        return
    earliest = now_ms - before_max_ms
    smallest = _smallest_timestamp(records)
    if smallest != NO_TIMESTAMP and smallest < earliest:
        raise InvalidTimestampError(
            f"timestamp {smallest} is more than {before_max_ms} ms before the broker's time {now_ms}"
        )


def _smallest_timestamp(records: bytes | bytearray) -> int:
    """The smallest record timestamp in ``records`` (-1: none carries one)."""
    smallest = NO_TIMESTAMP
    view = memoryview(records)
    pos, end = 0, len(records)
    try:
        while pos + MAGIC_OFFSET < end:
            size = entry_size(view, pos)
            magic = view[pos + MAGIC_OFFSET]
            found = NO_TIMESTAMP
            if magic == 2:
                base, _max, count = _V2_TIMESTAMPS.unpack_from(view, pos + 27)
                found = base if count == 1 else _decoded_smallest(bytes(view[pos : pos + size]))
            elif magic == 1:
                timestamp = _V1_TIMESTAMP.unpack_from(view, pos + 18)[0]
                compressed = view[pos + 17] & 0x07
                found = _decoded_smallest(bytes(view[pos : pos + size])) if compressed else timestamp
            if found != NO_TIMESTAMP and (smallest == NO_TIMESTAMP or found < smallest):
                smallest = found
            pos += max(size, LOG_OVERHEAD)
    finally:
        view.release()
    return smallest


def _decoded_smallest(entry: bytes) -> int:
    stamps = [r.timestamp for r in read_records(entry) if r.timestamp != NO_TIMESTAMP]
    return min(stamps, default=NO_TIMESTAMP)
