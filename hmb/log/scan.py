"""Walking the entries of a log file without decoding records.

The layout of an entry (offset, size, magic at byte 16, checksums, last
offset, timestamps, producer fields) is :mod:`kproto.records.entry`'s; this
module only reads files: it walks one in chunks and hands each entry's bytes
to it.  Recovery additionally checks each entry's checksum.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from typing import NamedTuple

from kproto.records.entry import (
    ENTRY_HEAD,
    LOG_OVERHEAD,
    V2_ATTRIBUTES_OFFSET,
    V2_HEADER_SIZE,
    check_entry,
    producer_fields,
)

READ_CHUNK = 1 << 20
_I16 = struct.Struct(">h")


class Entry(NamedTuple):
    position: int
    last_offset: int
    size: int  # including the 12-byte offset/size header
    magic: int
    max_timestamp: int  # the largest timestamp its header states (-1: none, magic 0)


class BadEntry(NamedTuple):
    position: int
    reason: str


class ProducerInfo(NamedTuple):
    """The idempotence fields of a RecordBatch v2 header."""

    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int
    base_offset: int
    last_offset: int
    attributes: int  # the batch's attributes (transactional, control, ...)


def producer_info(fd: int, entry: Entry) -> ProducerInfo | None:
    """Producer fields of a v2 entry (None for magic 0/1 and batches without a producer id)."""
    if entry.magic < 2:
        return None
    head = os.pread(fd, V2_HEADER_SIZE, entry.position)
    if len(head) < V2_HEADER_SIZE:
        return None
    pid, epoch, seq, count = producer_fields(head)
    if pid < 0:
        return None
    base = ENTRY_HEAD.unpack_from(head, 0)[0]
    attributes = _I16.unpack_from(head, V2_ATTRIBUTES_OFFSET)[0]
    return ProducerInfo(pid, epoch, seq, count, int(base), entry.last_offset, int(attributes))


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
        if len(buf) - rel < LOG_OVERHEAD + 5:
            buf = os.pread(fd, min(READ_CHUNK, end - pos), pos)
            buf_start, rel = pos, 0
            if len(buf) < LOG_OVERHEAD + 5:
                yield BadEntry(pos, f"torn header ({end - pos} bytes left)")
                return
        _offset, size = ENTRY_HEAD.unpack_from(buf, rel)
        total = LOG_OVERHEAD + size
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
        last_offset, magic, max_timestamp = result
        if last_offset <= last:
            yield BadEntry(pos, f"offset {last_offset} does not follow {last}")
            return
        last = last_offset
        yield Entry(pos, last_offset, total, magic, max_timestamp)
        pos += total
