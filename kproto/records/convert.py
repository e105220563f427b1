"""Record sets that mix message formats: reading them whole, and down-converting them.

A partition's log holds whatever producers sent over the years: MessageSet entries
(magic 0/1) and RecordBatches (magic 2), side by side.  Every entry starts with the same
twelve bytes -- ``offset int64, size int32`` -- and keeps its magic byte at position 16
(:mod:`kproto.records.entry`), which is how both functions below tell the formats apart.

* :func:`read_records` -- what a client reading a fetch response needs: every data record
  of any magic as one :class:`~kproto.records.DefaultRecord` list.
* :func:`downconvert` -- what a broker answering Fetch v0-v3 needs: those clients
  predate message format v2 and read MessageSets only, so RecordBatches are rewritten as magic 0 or 1
  messages with the same offsets.  Output is **uncompressed**: valid for every client and
  one codec pass cheaper than Kafka's re-compression, at the price of more bytes on the
  wire.  Headers are lost (the old formats have none), control batches are dropped (old
  clients know no transactions), magic-1 entries become magic 0 when ``to_magic`` is 0,
  and a partial entry at the end is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kproto.errors import CorruptRecordError
from kproto.records.compression import DEFAULT_MAX_DECOMPRESSED
from kproto.records.default import (
    CONTROL_MASK,
    TIMESTAMP_TYPE_MASK,
    DefaultRecord,
    _batch_at,
    _batch_records,
    _bytes,
    _new,
)
from kproto.records.entry import LOG_OVERHEAD, MAGIC_OFFSET
from kproto.records.legacy import _INT32, MessageSetReader, _encode

__all__ = ["downconvert", "read_records"]

_NO_HEADERS: tuple[tuple[str, bytes | None], ...] = ()


def _legacy_run_end(data: bytes, pos: int, end: int) -> int:
    """End of the run of complete magic 0/1 entries starting at ``pos``.

    An entry that is cut short or does not look like a message (size too small to hold a
    magic byte, unknown magic) ends the scan at ``end``: the MessageSet reader then decides
    whether it is a tolerable partial tail or an error.
    """
    while pos < end:
        if end - pos <= MAGIC_OFFSET:
            return end
        mend = pos + LOG_OVERHEAD + _INT32.unpack_from(data, pos + 8)[0]
        magic = data[pos + MAGIC_OFFSET]
        if magic == 2:
            return pos
        if magic > 1 or mend > end or mend <= pos + MAGIC_OFFSET:
            return end
        pos = mend
    return pos


def read_records(
    data: bytes | bytearray | memoryview,
    *,
    allow_partial_tail: bool = True,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> list[DefaultRecord]:
    """Every data record of a record set mixing magic 0, 1 and 2 entries, in order.

    One record type for all: magic 0/1 messages become :class:`DefaultRecord` with no
    headers, magic 0 ones with timestamp -1 (Kafka's "no timestamp").  Compressed entries
    are expanded, every CRC is checked, control batches are skipped; a partial last entry
    is ignored when ``allow_partial_tail``, otherwise it raises :class:`CorruptRecordError`.
    """
    data = _bytes(data)
    end = len(data)
    pos = 0
    out: list[DefaultRecord] = []
    extend = out.extend
    new = _new
    cls = DefaultRecord
    no_headers = _NO_HEADERS
    with memoryview(data) as view:
        while pos < end:
            if end - pos > MAGIC_OFFSET and data[pos + MAGIC_OFFSET] == 2:
                fields = _batch_at(data, view, pos, end)
                if fields is None:
                    break
                if not fields[5] & CONTROL_MASK:
                    extend(_batch_records(data, pos, fields, max_decompressed_bytes))
                pos += LOG_OVERHEAD + fields[1]
                continue
            if end - pos <= MAGIC_OFFSET:  # too short to tell the format: a partial tail
                break
            stop = _legacy_run_end(data, pos, end)
            legacy = MessageSetReader(
                data[pos:stop],
                allow_partial_tail=allow_partial_tail,
                max_decompressed_bytes=max_decompressed_bytes,
            ).records()
            extend([new(cls, (r[0], -1 if r[1] is None else r[1], r[2], r[3], no_headers)) for r in legacy])
            pos = stop
    if pos < end and not allow_partial_tail:
        raise CorruptRecordError(f"record set truncated inside the entry at byte {pos}")
    return out


def downconvert(
    data: bytes | bytearray | memoryview,
    to_magic: int,
    *,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> bytes:
    """Rewrite a record set for a client that reads MessageSet magic ``to_magic`` (0 or 1).

    Magic-2 batches are validated (framing, CRC) and become uncompressed messages with
    the records' offsets and (magic 1) timestamps, LogAppendTime batches giving messages
    with the LogAppendTime attribute bit.  Entries of magic <= ``to_magic`` are copied
    as they are; magic-1 entries for a magic-0 client are decoded and re-encoded.  See the
    module docstring for what is lost.
    """
    if to_magic not in (0, 1):
        raise ValueError(f"to_magic must be 0 or 1, not {to_magic!r}")
    data = _bytes(data)
    end = len(data)
    parts: list[bytes | memoryview] = []
    copy_from = -1  # start of a run of entries copied verbatim
    pos = 0
    with memoryview(data) as view:
        while end - pos > MAGIC_OFFSET:
            (size,) = _INT32.unpack_from(data, pos + 8)
            mend = pos + LOG_OVERHEAD + size
            magic = data[pos + MAGIC_OFFSET]
            if mend > end:
                break  # a partial tail: dropped
            if mend <= pos + MAGIC_OFFSET or magic > 2:
                raise CorruptRecordError(f"bad entry (size {size}, magic {magic}) at byte {pos}")
            if magic <= to_magic:
                if copy_from < 0:
                    copy_from = pos
                pos = mend
                continue
            if copy_from >= 0:
                parts.append(view[copy_from:pos])
                copy_from = -1
            if magic == 2:
                fields = _batch_at(data, view, pos, end)
                if fields is not None and not fields[5] & CONTROL_MASK:
                    records = _batch_records(data, pos, fields, max_decompressed_bytes)
                    attrs = TIMESTAMP_TYPE_MASK if fields[5] & TIMESTAMP_TYPE_MASK else 0
                    _encode_runs(parts, records, to_magic, attrs if to_magic else 0)
            else:  # magic 1 -> 0
                legacy = MessageSetReader(
                    data[pos:mend],
                    allow_partial_tail=False,
                    max_decompressed_bytes=max_decompressed_bytes,
                ).records()
                _encode_runs(parts, legacy, 0, 0)
            pos = mend
        if copy_from >= 0:
            parts.append(view[copy_from:pos])
        result = b"".join(parts)
        del parts
    return result


def _encode_runs(
    parts: list[bytes | memoryview],
    records: Sequence[tuple[Any, ...]],
    magic: int,
    attributes: int,
) -> None:
    """Append ``records`` (offset, timestamp, key, value, ...) as uncompressed messages.

    Offsets are kept: consecutive offsets are encoded in one :func:`_encode` call, a gap
    (a compacted log) starts a new run.
    """
    run: list[tuple[bytes | None, bytes | None, int]] = []
    first = last = 0
    for record in records:
        offset, timestamp, key, value = record[0], record[1], record[2], record[3]
        if run and offset != last + 1:
            parts.extend(_encode(run, magic, first, attributes))
            run = []
        if not run:
            first = offset
        last = offset
        run.append((key, value, -1 if timestamp is None else timestamp))
    if run:
        parts.extend(_encode(run, magic, first, attributes))
