"""The broker's hot path for MessageSets: validate and number records in place.

Split from :mod:`kproto.records.legacy` (which holds the format's grammar,
the reader and the builder) because it is a different job: a broker never
builds record objects for what it stores, it checks CRCs and patches the
8-byte offset fields (outside the CRC), and only re-compresses magic-0
wrappers whose inner offsets are absolute.
"""

from __future__ import annotations

import zlib
from typing import NamedTuple

from kproto.records.compression import DEFAULT_MAX_DECOMPRESSED, compress
from kproto.records.legacy import (
    _INT32,
    _INT64,
    _INT64_MAX,
    CODEC_MASK,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    NO_TIMESTAMP,
    TIMESTAMP_TYPE_MASK,
    RecordTooLargeError,
    _crc_error,
    _encode,
    _inner_records,
    _parse_message,
    _Parsed,
    _shape,
    _truncated,
    _wrapper_payload,
)

__all__ = ["AssignResult", "assign_offsets"]


class AssignResult(NamedTuple):
    """What :func:`assign_offsets` did: ``count`` records numbered up to ``last_offset``.

    ``max_timestamp`` is the largest record timestamp (-1 when none, e.g. magic 0).
    ``buf`` is the input bytearray patched in place, or a new ``bytes`` object when a
    magic-0 wrapper had to be recompressed.
    """

    count: int  # type: ignore[assignment]  # shadows tuple.count; the name is the API
    last_offset: int
    max_timestamp: int
    buf: bytes | bytearray


# --------------------------------------------------------------------------- broker hot path


def assign_offsets(
    buf: bytearray,
    next_offset: int,
    *,
    max_message_bytes: int | None = None,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> AssignResult:
    """Validate a produced MessageSet and number its records from ``next_offset``.

    What the broker does to a produce request's records before appending them to the log:

    * every top-level message must be complete (a truncated tail raises
      :class:`CorruptRecordError`: a producer never sends one), correctly framed and
      CRC-valid; a message larger than ``max_message_bytes`` (counting its 12-byte
      Offset/MessageSize prefix, as Kafka does) raises :class:`RecordTooLargeError`;
    * uncompressed messages get ``next_offset, next_offset + 1, ...`` patched in place (the
      offset is outside the CRC, so no checksum is recomputed);
    * a magic-1 wrapper is decompressed (bounded) to validate and count its ``n`` inner
      messages; its offset becomes the last assigned one; inner relative offsets other
      than ``0..n-1`` are renumbered, which needs a recompression like magic 0;
    * a magic-0 wrapper carries absolute inner offsets, so it is decompressed, renumbered,
      recompressed with the same codec and re-checksummed.  Only then is the result a new
      ``bytes`` object; otherwise ``buf`` itself (patched) is returned.

    Nothing is allocated per message on the uncompressed path (no record objects).  A
    ``bytes`` argument is copied into a new bytearray first.
    """
    if not isinstance(buf, bytearray):
        buf = bytearray(buf)
    # Read from an immutable snapshot (slicing bytes for the CRC is the cheapest way to feed
    # zlib.crc32 a sub-range), write the offsets into ``buf``.
    data = bytes(buf)
    limit = _INT64_MAX if max_message_bytes is None else max_message_bytes
    splices: list[tuple[int, int, bytes]] = []
    _, offset, max_ts = assign_run(
        buf, data, 0, len(data), next_offset, limit, max_decompressed_bytes, splices
    )
    return AssignResult(offset - next_offset, offset - 1, max_ts, apply_splices(buf, splices))


def assign_run(
    buf: bytearray,
    data: bytes,
    pos: int,
    end: int,
    next_offset: int,
    limit: int,
    max_decompressed_bytes: int,
    splices: list[tuple[int, int, bytes]],
    *,
    stop_at_batch: bool = False,
) -> tuple[int, int, int]:
    """Validate and number the messages of ``data[pos:end]`` (``buf`` is patched in place).

    The loop of :func:`assign_offsets`, callable on a part of a buffer: ``data`` is the
    immutable snapshot of ``buf`` that is read.  Entries that need replacing (recompressed
    magic-0 wrappers) are appended to ``splices`` as ``(start, stop, bytes)`` for
    :func:`apply_splices`.  With ``stop_at_batch`` the loop stops before an entry whose
    magic byte is 2 (a RecordBatch, see :mod:`kproto.records.batch_assign`) instead of
    rejecting it.  Returns ``(position reached, next free offset, max timestamp)``.
    """
    offset = next_offset
    max_ts = NO_TIMESTAMP
    patch = _INT64.pack_into
    crc32 = zlib.crc32
    g_magic = g_klen = -1  # guessed shape of the next message, as in MessageSetReader
    g_unpack, g_size = _shape(0, 0, -2, True)
    while pos < end:
        if g_magic >= 0 and end - pos >= g_size:
            size, crc, magic, attrs, ts, klen, vlen = g_unpack(data, pos)
            mend = pos + 12 + size
            vstart = pos + g_size
            if (
                magic == g_magic
                and klen == g_klen
                and not attrs & 7
                and mend <= end
                and size + 12 <= limit
                and (mend == vstart + vlen if vlen >= 0 else vlen == -1 and mend == vstart)
            ):
                if crc32(data[pos + 16 : mend]) != crc:
                    raise _crc_error(pos, None)
                patch(buf, pos, offset)
                offset += 1
                if magic and ts > max_ts:
                    max_ts = ts
                pos = mend
                continue
        # General path: anything else, including every error and every wrapper.
        if stop_at_batch and end - pos > MAGIC_OFFSET and data[pos + MAGIC_OFFSET] == 2:
            break
        msg = _parse_message(data, pos, end)
        if msg is None:
            raise _truncated(pos)
        mend = msg[0]
        if mend - pos > limit:
            raise RecordTooLargeError(mend - pos, limit)
        if msg[4] & CODEC_MASK:
            count, ts, replacement = _assign_wrapper(buf, data, pos, msg, offset, max_decompressed_bytes)
            if replacement is not None:
                if len(replacement) > limit:
                    raise RecordTooLargeError(len(replacement), limit)
                splices.append((pos, mend, replacement))
            offset += count
        else:
            patch(buf, pos, offset)
            offset += 1
            ts = msg[5]
            klen = -1 if msg[6] < 0 else msg[7] - msg[6]
            if msg[3] != g_magic or klen != g_klen:
                g_magic, g_klen = msg[3], klen
                g_unpack, g_size = _shape(g_magic, klen, -2, True)
        if ts > max_ts:
            max_ts = ts
        pos = mend
    return pos, offset, max_ts


def apply_splices(buf: bytearray, splices: list[tuple[int, int, bytes]]) -> bytes | bytearray:
    """``buf`` with each ``(start, stop, replacement)`` applied; ``buf`` itself when none."""
    if not splices:
        return buf
    with memoryview(buf) as view:
        parts: list[bytes | memoryview] = []
        last = 0
        for start, stop, replacement in splices:
            parts.append(view[last:start])
            parts.append(replacement)
            last = stop
        parts.append(view[last:])
        result = b"".join(parts)
        del parts
    return result


def _assign_wrapper(
    buf: bytearray, data: bytes, pos: int, msg: _Parsed, offset: int, max_decompressed: int
) -> tuple[int, int, bytes | None]:
    """Number the inner messages of the wrapper at ``pos`` from ``offset``.

    Returns (inner count, max timestamp, replacement entry bytes or ``None`` when the
    wrapper was patched in place).
    """
    magic = msg[3]
    inner = _wrapper_payload(data, msg, max_decompressed)
    records = _inner_records(inner, magic)
    n = len(records)
    last = offset + n - 1
    if magic == 1:
        ts = msg[5] if msg[4] & TIMESTAMP_TYPE_MASK else max(r[1] or 0 for r in records)
        if all(r[0] == i for i, r in enumerate(records)):
            _INT64.pack_into(buf, pos, last)
            return n, ts, None
        first = 0  # renumber relative offsets 0..n-1
    else:
        ts = NO_TIMESTAMP
        first = offset
    renumbered = bytearray(inner)
    start = 0
    for i in range(n):  # the inner set was fully validated: sizes chain to its end
        _INT64.pack_into(renumbered, start, first + i)
        start += LOG_OVERHEAD + _INT32.unpack_from(inner, start + 8)[0]
    codec = msg[4] & CODEC_MASK
    payload = compress(codec, renumbered, legacy_lz4=magic == 0)
    key = None if msg[6] < 0 else data[msg[6] : msg[7]]
    wrapper: list[tuple[bytes | None, bytes | None, int]] = [(key, payload, msg[5])]
    entry = b"".join(_encode(wrapper, magic, last, msg[4]))
    return n, ts, entry
