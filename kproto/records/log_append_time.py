"""Stamping a record set with the time a broker appended it (``LogAppendTime`` topics).

A topic with ``message.timestamp.type=LogAppendTime`` keeps the broker's
append time instead of the producer's, in each format as Kafka writes it
(offsets in the entry, see :mod:`kproto.records.entry`)::

    RecordBatch (magic 2)   Attributes |= 0x08 (timestamp type), MaxTimestamp = the
                            append time; the records keep their own timestamps,
                            which readers ignore for such a batch; CRC-32C redone
    Message (magic 1)       Attributes |= 0x08, Timestamp = the append time; a
                            compressed wrapper's inner messages keep theirs
                            (readers take the wrapper's); CRC-32 redone
    Message (magic 0)       has no timestamp: left as it is

The set is changed in place and must hold whole, valid entries (what the
broker's offset assignment has just checked).
"""

from __future__ import annotations

import struct
import zlib

from kproto.records.crc import crc32c
from kproto.records.entry import (
    ENTRY_HEAD,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    V0_CRC_OFFSET,
    V1_TIMESTAMP_OFFSET,
    V2_ATTRIBUTES_OFFSET,
    V2_CRC_OFFSET,
    V2_MAX_TIMESTAMP_OFFSET,
)

__all__ = ["TIMESTAMP_TYPE_BIT", "stamp_log_append_time"]

#: The attributes bit that says "the timestamp is the broker's" (magic 1 and 2).
TIMESTAMP_TYPE_BIT = 0x08

_I16 = struct.Struct(">h")
_I64 = struct.Struct(">q")
_U32 = struct.Struct(">I")


def stamp_log_append_time(buf: bytearray, append_time_ms: int) -> None:
    """Mark every entry of ``buf`` as stamped with ``append_time_ms`` (see the module)."""
    pos = 0
    end_of_set = len(buf)
    while pos + LOG_OVERHEAD <= end_of_set:
        size = ENTRY_HEAD.unpack_from(buf, pos)[1]
        end = pos + LOG_OVERHEAD + size
        magic = buf[pos + MAGIC_OFFSET]
        if magic == 2:
            attributes = _I16.unpack_from(buf, pos + V2_ATTRIBUTES_OFFSET)[0] | TIMESTAMP_TYPE_BIT
            _I16.pack_into(buf, pos + V2_ATTRIBUTES_OFFSET, attributes)
            _I64.pack_into(buf, pos + V2_MAX_TIMESTAMP_OFFSET, append_time_ms)
            with memoryview(buf) as view:
                crc = crc32c(view[pos + V2_ATTRIBUTES_OFFSET : end])
            _U32.pack_into(buf, pos + V2_CRC_OFFSET, crc)
        elif magic == 1:
            buf[pos + MAGIC_OFFSET + 1] |= TIMESTAMP_TYPE_BIT
            _I64.pack_into(buf, pos + V1_TIMESTAMP_OFFSET, append_time_ms)
            with memoryview(buf) as view:
                crc = zlib.crc32(view[pos + MAGIC_OFFSET : end])
            _U32.pack_into(buf, pos + V0_CRC_OFFSET, crc)
        pos = end
