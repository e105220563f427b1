"""Walking the entries of a log file without decoding records.

Every entry, whatever its format, starts ``offset int64, size int32`` and has
its magic byte at position 16:

* magic 0/1 (MessageSet): ``offset`` is the message's offset (for a
  compressed wrapper, the offset of its last inner message); CRC-32 at
  12..16 covers 16..end.
* magic 2 (RecordBatch): ``offset`` is the base offset; ``lastOffsetDelta``
  (int32 at 23) gives the last; CRC-32C at 17..21 covers 21..end.

So the last offset of an entry, which is what the index and the fetch
positioning need, is known from its first 27 bytes.  Recovery additionally
checks each entry's checksum.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Iterator
from typing import NamedTuple

from crc32c import crc32c

HEADER = struct.Struct(">qi")  # offset, size
HEADER_SIZE = 12
V2_LAST_DELTA = struct.Struct(">i")
V2_HEADER_SIZE = 61
MIN_ENTRY = {0: 14, 1: 22, 2: V2_HEADER_SIZE - HEADER_SIZE}
READ_CHUNK = 1 << 20


class Entry(NamedTuple):
    position: int
    last_offset: int
    size: int  # including the 12-byte offset/size header
    magic: int


class ProducerInfo(NamedTuple):
    """The idempotence fields of a RecordBatch v2 header."""

    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int
    base_offset: int
    last_offset: int


_V2_PRODUCER = struct.Struct(">qhii")  # producerId, producerEpoch, baseSequence, recordCount at 43


def producer_info(fd: int, entry: Entry) -> ProducerInfo | None:
    """Producer fields of a v2 entry (None for magic 0/1 and batches without a producer id)."""
    if entry.magic < 2:
        return None
    head = os.pread(fd, V2_HEADER_SIZE, entry.position)
    if len(head) < V2_HEADER_SIZE:
        return None
    pid, epoch, seq, count = _V2_PRODUCER.unpack_from(head, 43)
    if pid < 0:
        return None
    base = HEADER.unpack_from(head, 0)[0]
    return ProducerInfo(pid, epoch, seq, count, int(base), entry.last_offset)


class BadEntry(NamedTuple):
    position: int
    reason: str


def check_entry(buf: bytes | memoryview, validate: bool = True) -> tuple[int, int] | str:
    """``(last_offset, magic)`` of one complete entry, or the reason it is bad."""
    offset, size = HEADER.unpack_from(buf, 0)
    if size < MIN_ENTRY[0]:  # too short to even hold a magic byte (e.g. a zero-filled tail)
        return f"entry size {size} too small"
    magic = buf[16]
    if magic not in MIN_ENTRY or size < MIN_ENTRY[magic]:
        return f"bad magic {magic} or size {size}"
    if magic < 2:
        if validate and zlib.crc32(buf[16:]) != struct.unpack_from(">I", buf, 12)[0]:
            return "CRC mismatch"
        return int(offset), magic
    if validate and crc32c(buf[21:]) != struct.unpack_from(">I", buf, 17)[0]:
        return "CRC-32C mismatch"
    return entry_last_offset(buf), magic


def iter_entries(
    fd: int, start: int, end: int, *, validate: bool = True, max_entry: int = 1 << 30
) -> Iterator[Entry | BadEntry]:
    """Entries of ``fd`` between byte ``start`` and ``end``.

    Stops after yielding a :class:`BadEntry` at the first torn, oversized or
    corrupt entry, or when offsets stop increasing: everything from there on
    cannot be trusted.
    """
    pos = start
    buf = b""
    buf_start = start
    last = -1
    while pos < end:
        rel = pos - buf_start
        if len(buf) - rel < HEADER_SIZE + 5:
            buf = os.pread(fd, min(READ_CHUNK, end - pos), pos)
            buf_start, rel = pos, 0
            if len(buf) < HEADER_SIZE + 5:
                yield BadEntry(pos, f"torn header ({end - pos} bytes left)")
                return
        _offset, size = HEADER.unpack_from(buf, rel)
        total = HEADER_SIZE + size
        if size < 0 or total > max_entry:
            yield BadEntry(pos, f"impossible entry size {size}")
            return
        if pos + total > end:
            yield BadEntry(pos, f"torn entry: {total} bytes announced, {end - pos} present")
            return
        if len(buf) - rel < total:
            buf = os.pread(fd, max(total, min(READ_CHUNK, end - pos)), pos)
            buf_start, rel = pos, 0
            if len(buf) < total:
                yield BadEntry(pos, "short read")
                return
        view = memoryview(buf)[rel : rel + total]
        result = check_entry(view, validate)
        if isinstance(result, str):
            yield BadEntry(pos, result)
            return
        last_offset, magic = result
        if last_offset <= last:
            yield BadEntry(pos, f"offset {last_offset} does not follow {last}")
            return
        last = last_offset
        yield Entry(pos, last_offset, total, magic)
        pos += total


def entry_last_offset(header: bytes | memoryview) -> int:
    """Last offset of an entry from its first 27 bytes (any magic)."""
    offset, _size = HEADER.unpack_from(header, 0)
    if header[16] >= 2:
        return int(offset) + V2_LAST_DELTA.unpack_from(header, 23)[0]
    return int(offset)
