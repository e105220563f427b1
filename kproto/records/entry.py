"""The one place that knows the layout of a log entry, whatever its message format.

A partition's log, a produce request's records and a fetch response's records are
all a sequence of *entries*.  Every entry, magic 0, 1 or 2, starts with the same
twelve bytes and keeps its magic byte at the same place, which is what lets a
reader walk a mixed record set without decoding records::

    Entry => Offset Size Body
      Offset => int64        magic 0/1: the message's offset (a compressed wrapper:
                             the offset of its last inner message); magic 2: the
                             batch's base offset
      Size => int32          bytes of Body that follow (the entry is 12 + Size bytes)

    Body (magic 0/1, a message) =>                                at byte
      Crc => uint32          CRC-32 of bytes 16 .. end               12
      Magic => int8          0 or 1                                  16
      Attributes => int8                                             17
      Timestamp => int64     magic 1 only (-1: none)                 18
      Key, Value => bytes    (see kproto.records.legacy)

    Body (magic 2, a record batch) =>
      PartitionLeaderEpoch => int32                                  12
      Magic => int8          2                                       16
      Crc => uint32          CRC-32C of bytes 21 .. end              17
      Attributes => int16                                            21
      LastOffsetDelta => int32  last offset = Offset + this          23
      BaseTimestamp => int64                                         27
      MaxTimestamp => int64                                          35
      ProducerId => int64    (-1: none)                              43
      ProducerEpoch => int16                                         51
      BaseSequence => int32                                          53
      RecordCount => int32                                           57
      Records => ...         (61: the header's end; see kproto.records.default)

So an entry's last offset is known from its first :data:`PEEK` bytes, its largest
timestamp and its producer fields from its first :data:`V2_HEADER_SIZE`.  The
functions here read one entry at a position of a buffer; callers do their own I/O
(files, sockets) and their own looping, and get plain ints and tuples back: nothing
is allocated per entry that the caller did not ask for.  The full codecs
(:mod:`kproto.records.legacy`, :mod:`kproto.records.default`) take their framing
constants from here.
"""

from __future__ import annotations

import struct
import zlib

from kproto.records.crc import crc32c

__all__ = [
    "ENTRY_HEAD",
    "LOG_OVERHEAD",
    "MAGIC_OFFSET",
    "NO_TIMESTAMP",
    "PEEK",
    "V2_HEADER_SIZE",
    "check_entry",
    "entry_size",
    "last_offset",
    "max_magic",
    "producer_fields",
]

#: Offset + Size: the part of every entry that Size does not count.
LOG_OVERHEAD = 12
#: Where every entry keeps its magic byte.
MAGIC_OFFSET = 16
#: Offset, Size.
ENTRY_HEAD = struct.Struct(">qi")

# magic 0/1
V0_CRC_OFFSET = 12
V1_TIMESTAMP_OFFSET = 18
#: Smallest Size of a message: Crc, Magic, Attributes, [Timestamp], key and value lengths.
V0_MIN_SIZE = 14
V1_MIN_SIZE = 22

# magic 2
V2_CRC_OFFSET = 17
V2_ATTRIBUTES_OFFSET = 21  # the CRC-32C covers everything from here on
V2_LAST_OFFSET_DELTA_OFFSET = 23
V2_MAX_TIMESTAMP_OFFSET = 35
V2_PRODUCER_OFFSET = 43
#: The batch header, record count included: the smallest possible batch.
V2_HEADER_SIZE = 61

#: Smallest legal Size per magic; a magic not in here is not an entry.
MIN_SIZE = {0: V0_MIN_SIZE, 1: V1_MIN_SIZE, 2: V2_HEADER_SIZE - LOG_OVERHEAD}
#: Bytes from an entry's start that tell its last offset, whatever its magic.
PEEK = V2_LAST_OFFSET_DELTA_OFFSET + 4
NO_TIMESTAMP = -1

_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_V2_PRODUCER = struct.Struct(">qhii")  # ProducerId, ProducerEpoch, BaseSequence, RecordCount
# LastOffsetDelta, (BaseTimestamp skipped), MaxTimestamp: one unpack for both
_V2_DELTA_MAX_TIMESTAMP = struct.Struct(f">i{V2_MAX_TIMESTAMP_OFFSET - V2_LAST_OFFSET_DELTA_OFFSET - 4}xq")


def entry_size(buf: bytes | bytearray | memoryview, pos: int = 0) -> int:
    """The whole size (12 + Size) of the entry at ``pos``; 0 when fewer than 12 bytes remain."""
    if len(buf) - pos < LOG_OVERHEAD:
        return 0
    return LOG_OVERHEAD + max(0, _I32.unpack_from(buf, pos + 8)[0])


def last_offset(buf: bytes | bytearray | memoryview, pos: int = 0) -> int:
    """The last offset of the entry at ``pos`` (its first :data:`PEEK` bytes are needed)."""
    offset = _I64.unpack_from(buf, pos)[0]
    if buf[pos + MAGIC_OFFSET] >= 2:
        return int(offset) + _I32.unpack_from(buf, pos + V2_LAST_OFFSET_DELTA_OFFSET)[0]
    return int(offset)


def producer_fields(buf: bytes | bytearray | memoryview, pos: int = 0) -> tuple[int, int, int, int]:
    """``(producer_id, producer_epoch, base_sequence, record_count)`` of the batch at ``pos``.

    Only meaningful for magic 2; needs :data:`V2_HEADER_SIZE` bytes.
    """
    pid, epoch, seq, count = _V2_PRODUCER.unpack_from(buf, pos + V2_PRODUCER_OFFSET)
    return int(pid), int(epoch), int(seq), int(count)


def check_entry(buf: bytes | bytearray | memoryview, validate: bool = True) -> tuple[int, int, int] | str:
    """``(last_offset, magic, max_timestamp)`` of one complete entry, or the reason it is not one.

    ``buf`` holds exactly the entry.  ``max_timestamp`` is the largest
    timestamp its header states: MaxTimestamp (magic 2), the message's
    Timestamp (magic 1; for a compressed wrapper, the largest of its inner
    messages'), -1 for magic 0, which has none.  With ``validate`` the
    checksum is checked too (CRC-32 for magic 0/1, CRC-32C for magic 2).
    """
    offset, size = ENTRY_HEAD.unpack_from(buf, 0)
    if size < V0_MIN_SIZE:  # too short to even hold a magic byte (e.g. a zero-filled tail)
        return f"entry size {size} too small"
    magic = buf[MAGIC_OFFSET]
    if magic not in MIN_SIZE or size < MIN_SIZE[magic]:
        return f"bad magic {magic} or size {size}"
    if magic < 2:
        if validate and zlib.crc32(buf[MAGIC_OFFSET:]) != _U32.unpack_from(buf, V0_CRC_OFFSET)[0]:
            return "CRC mismatch"
        ts = _I64.unpack_from(buf, V1_TIMESTAMP_OFFSET)[0] if magic else NO_TIMESTAMP
        return int(offset), magic, int(ts)
    if validate and crc32c(buf[V2_ATTRIBUTES_OFFSET:]) != _U32.unpack_from(buf, V2_CRC_OFFSET)[0]:
        return "CRC-32C mismatch"
    delta, ts = _V2_DELTA_MAX_TIMESTAMP.unpack_from(buf, V2_LAST_OFFSET_DELTA_OFFSET)
    return int(offset) + delta, magic, int(ts)


def max_magic(data: bytes | bytearray | memoryview) -> int:
    """The highest magic among the entries of ``data``, from their headers alone.

    Stops early at the first magic-2 entry (nothing is higher) and at a size
    that cannot be right; a partial last entry counts with its magic byte.
    """
    best = 0
    pos = 0
    end = len(data)
    while end - pos > MAGIC_OFFSET:
        magic = data[pos + MAGIC_OFFSET]
        if magic > best:
            best = magic
        size = _I32.unpack_from(data, pos + 8)[0]
        if best >= 2 or size <= 0:
            return best
        pos += LOG_OVERHEAD + size
    return best
