"""Re-encode the record batches of a record set with another codec, records untouched.

A broker whose topic sets ``compression.type`` to a codec (or ``uncompressed``)
stores every batch with that codec, whatever the producer used.  A batch's
records section is the (compressed) concatenation of its records, each of which
states its own offset and timestamp deltas, key, value and headers; so a batch
is recompressed by decompressing that section and compressing it again.  Its
header keeps every field (base offset, timestamps, producer id, epoch and
sequence, transactional and timestamp-type bits, partition leader epoch)
except the codec bits, the length and the CRC-32C, which are rewritten::

    RecordBatch => BaseOffset Length PartitionLeaderEpoch Magic Crc Attributes
                   LastOffsetDelta BaseTimestamp MaxTimestamp ProducerId
                   ProducerEpoch BaseSequence RecordCount Records
    (Length: bytes after it; Crc: CRC-32C of Attributes .. end; Attributes & 0x07: codec)

MessageSets (magic 0/1) are passed through unchanged: only record batches
are recompressed.  Control batches (transaction markers) are never compressed
and are passed through too.
"""

from __future__ import annotations

import struct

from kproto.errors import CorruptRecordError
from kproto.records.compression import DEFAULT_MAX_DECOMPRESSED, compress, decompress
from kproto.records.crc import crc32c
from kproto.records.default import (
    ATTRIBUTES_OFFSET,
    CODEC_MASK,
    CONTROL_MASK,
    CRC_OFFSET,
    RECORD_BATCH_OVERHEAD,
)
from kproto.records.entry import LOG_OVERHEAD, MAGIC_OFFSET, entry_size

__all__ = ["batches_to_recompress", "recompress_batches"]

_ATTRIBUTES = struct.Struct(">h")
_LENGTH = struct.Struct(">i")
_CRC = struct.Struct(">I")


def _batches(buf: bytes | bytearray | memoryview) -> list[tuple[int, int, int]]:
    """``(position, size, attributes)`` of every record batch of ``buf``."""
    out = []
    pos, end = 0, len(buf)
    while end - pos > MAGIC_OFFSET:
        size = entry_size(buf, pos)
        if size <= LOG_OVERHEAD or pos + size > end:
            raise CorruptRecordError(f"record set entry cut short at byte {pos}")
        if buf[pos + MAGIC_OFFSET] == 2 and size >= RECORD_BATCH_OVERHEAD:
            out.append((pos, size, _ATTRIBUTES.unpack_from(buf, pos + ATTRIBUTES_OFFSET)[0]))
        pos += size
    return out


def batches_to_recompress(buf: bytes | bytearray | memoryview, codec: int) -> int:
    """How many record batches of ``buf`` are not stored with ``codec`` (headers only)."""
    return sum(
        1 for _pos, _size, attrs in _batches(buf) if attrs & CODEC_MASK != codec and not attrs & CONTROL_MASK
    )


def recompress_batches(
    buf: bytes | bytearray, codec: int, *, max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED
) -> bytes:
    """``buf`` with every record batch not stored with ``codec`` recompressed with it.

    Raises :class:`CorruptRecordError` when a batch's records cannot be
    decompressed (or inflate beyond ``max_decompressed_bytes``).
    """
    parts: list[bytes | memoryview] = []
    view = memoryview(buf)
    done = 0
    try:
        for pos, size, attrs in _batches(buf):
            if attrs & CODEC_MASK == codec or attrs & CONTROL_MASK:
                continue
            records = view[pos + RECORD_BATCH_OVERHEAD : pos + size]
            plain = decompress(attrs & CODEC_MASK, records, max_size=max_decompressed_bytes)
            payload = compress(codec, plain)
            header = bytearray(view[pos : pos + RECORD_BATCH_OVERHEAD])
            _ATTRIBUTES.pack_into(header, ATTRIBUTES_OFFSET, (attrs & ~CODEC_MASK) | codec)
            _LENGTH.pack_into(header, 8, RECORD_BATCH_OVERHEAD - LOG_OVERHEAD + len(payload))
            crc = crc32c(payload, crc32c(memoryview(header)[ATTRIBUTES_OFFSET:]))
            _CRC.pack_into(header, CRC_OFFSET, crc)
            parts += [view[done:pos], bytes(header), payload]
            done = pos + size
        if not parts:
            return bytes(buf)
        parts.append(view[done:])
        return b"".join(parts)
    finally:
        view.release()
