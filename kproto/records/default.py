"""Kafka RecordBatch codec, message format v2 (magic 2).

Grammar (https://kafka.apache.org/documentation/#recordbatch; Kafka's
``DefaultRecordBatch.java`` and ``DefaultRecord.java``)::

    RecordBatch =>
      baseOffset => int64
      batchLength => int32                 (bytes that follow this field)
      partitionLeaderEpoch => int32
      magic => int8                        (2)
      crc => uint32                        (CRC-32C (Castagnoli) of attributes .. end of batch)
      attributes => int16
        bits 0-2: compression (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)
        bit 3:    timestampType (0 CreateTime, 1 LogAppendTime)
        bit 4:    isTransactional
        bit 5:    isControlBatch
        bit 6:    hasDeleteHorizonMs (baseTimestamp is the delete horizon, KIP-534)
        bits 7-15: unused (0)
      lastOffsetDelta => int32             (offset delta of the last record)
      baseTimestamp => int64               (timestamp of the first record)
      maxTimestamp => int64
      producerId => int64                  (-1: none)
      producerEpoch => int16               (-1: none)
      baseSequence => int32                (-1: none)
      records => [Record]                  (int32 count; when compression != 0 the bytes after
                                            the count are compress(all records), as a whole)

    Record =>
      length => varint                     (bytes of the record after this field)
      attributes => int8                   (unused, 0)
      timestampDelta => varlong            (timestamp - baseTimestamp)
      offsetDelta => varint                (offset - baseOffset)
      keyLength => varint                  (-1 = null)
      key => bytes
      valueLength => varint                (-1 = null)
      value => bytes
      headers => [Header]                  (varint count)

    Header =>
      headerKeyLength => varint
      headerKey => string                  (UTF-8, never null)
      headerValueLength => varint          (-1 = null)
      value => bytes

    varint/varlong: zig-zag encoded ((n << 1) ^ (n >> 63)), then base 128, low groups first,
    high bit set on every byte but the last; at most 5 bytes (varint) or 10 (varlong).

baseOffset, batchLength and partitionLeaderEpoch are *outside* the CRC: a broker assigns
offsets by patching the first eight bytes of each batch (:mod:`kproto.records.batch_assign`).
A LogAppendTime batch's records all carry ``maxTimestamp`` (Kafka's rule); a control batch
(transaction markers, written by brokers) holds control records that consumers skip.

Every failure to parse bytes raises :class:`~kproto.errors.CorruptRecordError`.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any, NamedTuple, cast

from kproto.errors import CorruptRecordError
from kproto.records.compression import DEFAULT_MAX_DECOMPRESSED, Compression, decompress
from kproto.records.crc import crc32c
from kproto.records.entry import (
    LOG_OVERHEAD,
    V2_ATTRIBUTES_OFFSET,
    V2_CRC_OFFSET,
    V2_HEADER_SIZE,
    V2_LAST_OFFSET_DELTA_OFFSET,
)

__all__ = [
    "DefaultRecord",
    "DefaultRecordBatch",
    "RecordBatchHeader",
    "RecordBatchReader",
    "read_record_batches",
]

# --------------------------------------------------------------------------- layout

# The framing every entry shares (baseOffset, batchLength, magic) and the header
# positions the log reads without decoding come from :mod:`kproto.records.entry`.
#: Field positions relative to the batch start.
PARTITION_LEADER_EPOCH_OFFSET = 12
CRC_OFFSET = V2_CRC_OFFSET
ATTRIBUTES_OFFSET = V2_ATTRIBUTES_OFFSET  # the CRC covers everything from here on
LAST_OFFSET_DELTA_OFFSET = V2_LAST_OFFSET_DELTA_OFFSET
RECORDS_COUNT_OFFSET = 57
#: Size of the batch header, records count included: the smallest possible batch.
RECORD_BATCH_OVERHEAD = V2_HEADER_SIZE
#: Smallest legal batchLength.
MIN_BATCH_LENGTH = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD

MAGIC = 2
CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40
CREATE_TIME = 0
LOG_APPEND_TIME = 1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1
NO_TIMESTAMP = -1

_MAX_CODEC = int(Compression.ZSTD)
_INT16_MIN, _INT16_MAX = -(1 << 15), (1 << 15) - 1
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1

# baseOffset batchLength partitionLeaderEpoch magic crc attributes lastOffsetDelta
# baseTimestamp maxTimestamp producerId producerEpoch baseSequence recordsCount
HEADER = struct.Struct(">qiibIhiqqqhii")
_PREFIX = struct.Struct(">qiibI")  # baseOffset .. crc: what the CRC does not cover
_CRC_PART = struct.Struct(">hiqqqhii")  # attributes .. recordsCount: the CRC starts here
_INT64 = struct.Struct(">q")
_INT32 = struct.Struct(">i")
_UINT32 = struct.Struct(">I")

# --------------------------------------------------------------------------- varints

#: Zig-zag decoding of one-byte varints (the common case of every length and delta).
_ZZ1 = [(b >> 1) ^ -(b & 1) for b in range(128)]


def _encode_varint(n: int) -> bytes:
    """Zig-zag base-128 encoding of an int64 ``n`` (the slow, general path)."""
    u = ((n << 1) ^ (n >> 63)) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while u > 0x7F:
        out.append(0x80 | (u & 0x7F))
        u >>= 7
    out.append(u)
    return bytes(out)


#: Encodings of -_VT .. _VT - 1 (every one- and two-byte varint), indexed by ``n + _VT``;
#: filled on first use (writers need it, a broker that only reads never does).
_VT = 8192
_VARINTS: list[bytes] = []


def _varint(n: int) -> bytes:
    if -_VT <= n < _VT:
        return (_VARINTS or _fill_varints())[n + _VT]
    return _encode_varint(n)


def _fill_varints() -> list[bytes]:
    by_zigzag = [bytes((u,)) for u in range(0x80)] + [
        bytes((0x80 | (u & 0x7F), u >> 7)) for u in range(0x80, 2 * _VT)
    ]
    _VARINTS[:] = [by_zigzag[(n << 1) ^ (n >> 63)] for n in range(-_VT, _VT)]
    return _VARINTS


def _read_varint(data: bytes, pos: int, max_bytes: int = 5) -> tuple[int, int]:
    """Decode the zig-zag varint at ``pos``: ``(value, next position)``.

    Raises :class:`CorruptRecordError` past ``max_bytes`` bytes (5 for varint, 10 for
    varlong) and lets ``IndexError`` through at the end of ``data`` (callers convert it).
    """
    u = 0
    shift = 0
    for i in range(pos, pos + max_bytes):
        b = data[i]
        u |= (b & 0x7F) << shift
        if b < 0x80:
            return (u >> 1) ^ -(u & 1), i + 1
        shift += 7
    raise CorruptRecordError(f"varint longer than {max_bytes} bytes at byte {pos}")


# --------------------------------------------------------------------------- records


class DefaultRecord(NamedTuple):
    """One record: absolute offset, timestamp (epoch ms), key, value and headers.

    ``headers`` is a tuple of ``(key, value)`` pairs, keys decoded from UTF-8, values
    ``bytes`` or ``None``.  Records read from magic 0 messages (:func:`read_records`)
    have timestamp -1 (no timestamp) and no headers.
    """

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]


_new = cast(Any, tuple.__new__)  # tuple.__new__(DefaultRecord, (...)): fastest constructor


class RecordBatchHeader(NamedTuple):
    """The fixed 61-byte header of a batch, fields in wire order, plus derived flags."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int

    @property
    def compression(self) -> int:
        """Codec id (a :class:`Compression` value when valid; the raw bits otherwise)."""
        return self.attributes & CODEC_MASK

    @property
    def timestamp_type(self) -> int:
        """0 CreateTime, 1 LogAppendTime."""
        return LOG_APPEND_TIME if self.attributes & TIMESTAMP_TYPE_MASK else CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_MASK)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def size(self) -> int:
        """Bytes of the whole batch on the wire."""
        return LOG_OVERHEAD + self.batch_length


def _headers(data: bytes, pos: int, stop: int) -> tuple[tuple[tuple[str, bytes | None], ...], int]:
    """Decode a record's header list at ``pos`` (bounded by ``stop``)."""
    count, pos = _read_varint(data, pos)
    if count < 0 or count > stop - pos:  # every header takes at least two bytes
        raise CorruptRecordError(f"bad record header count {count}")
    out: list[tuple[str, bytes | None]] = []
    for _ in range(count):
        klen, pos = _read_varint(data, pos)
        kend = pos + klen
        if klen < 0 or kend > stop:
            raise CorruptRecordError(f"bad record header key length {klen}")
        try:
            key = data[pos:kend].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CorruptRecordError(f"record header key is not UTF-8: {exc}") from None
        vlen, pos = _read_varint(data, kend)
        if vlen == -1:
            value = None
        else:
            vend = pos + vlen
            if vlen < 0 or vend > stop:
                raise CorruptRecordError(f"bad record header value length {vlen}")
            value = data[pos:vend]
            pos = vend
        out.append((key, value))
    return tuple(out), pos


def _parse_records(
    data: bytes, pos: int, stop: int, count: int, base_offset: int, base_timestamp: int
) -> list[DefaultRecord]:
    """The ``count`` records in ``data[pos:stop]``, which they must fill exactly.

    One tight loop: one- and two-byte varints (every length and delta of ordinary records)
    are decoded inline, anything longer by :func:`_read_varint`.
    """
    out: list[DefaultRecord] = []
    append = out.append
    zz = _ZZ1
    varint = _read_varint
    new = _new
    cls = DefaultRecord
    no_headers = ()
    try:
        for _ in range(count):
            b = data[pos]  # length
            if b < 0x80:
                length = zz[b]
                pos += 1
            else:
                c = data[pos + 1]
                if c < 0x80:
                    u = (b & 0x7F) | c << 7
                    length = (u >> 1) ^ -(u & 1)
                    pos += 2
                else:
                    length, pos = varint(data, pos)
            rend = pos + length
            if length < 6 or rend > stop:  # 6: attributes + five one-byte varints
                raise CorruptRecordError(f"bad record length {length} at byte {pos}")
            b = data[pos + 1]  # timestampDelta (after the unused attributes byte)
            if b < 0x80:
                ts = zz[b]
                pos += 2
            else:
                ts, pos = varint(data, pos + 1, 10)
            b = data[pos]  # offsetDelta
            if b < 0x80:
                od = zz[b]
                pos += 1
            else:
                c = data[pos + 1]
                if c < 0x80:
                    u = (b & 0x7F) | c << 7
                    od = (u >> 1) ^ -(u & 1)
                    pos += 2
                else:
                    od, pos = varint(data, pos)
            b = data[pos]  # keyLength
            if b < 0x80:
                kl = zz[b]
                pos += 1
            else:
                kl, pos = varint(data, pos)
            if kl >= 0:
                key = data[pos : pos + kl]
                pos += kl
            elif kl == -1:
                key = None
            else:
                raise CorruptRecordError(f"bad record key length {kl} at byte {pos}")
            b = data[pos]  # valueLength
            if b < 0x80:
                vl = zz[b]
                pos += 1
            else:
                c = data[pos + 1]
                if c < 0x80:
                    u = (b & 0x7F) | c << 7
                    vl = (u >> 1) ^ -(u & 1)
                    pos += 2
                else:
                    vl, pos = varint(data, pos)
            if vl >= 0:
                value = data[pos : pos + vl]
                pos += vl
            elif vl == -1:
                value = None
            else:
                raise CorruptRecordError(f"bad record value length {vl} at byte {pos}")
            if data[pos] == 0:  # no headers
                headers: tuple[tuple[str, bytes | None], ...] = no_headers
                pos += 1
            else:
                headers, pos = _headers(data, pos, rend)
            if pos != rend:
                raise CorruptRecordError(f"record fields do not fill its length at byte {rend}")
            append(new(cls, (base_offset + od, base_timestamp + ts, key, value, headers)))
    except IndexError:
        raise CorruptRecordError(f"record batch truncated inside a record near byte {pos}") from None
    if pos != stop:
        raise CorruptRecordError(f"{stop - pos} bytes left over after the batch's {count} records")
    return out


# --------------------------------------------------------------------------- batches


def _batch_at(data: bytes, view: memoryview, pos: int, end: int) -> tuple[Any, ...] | None:
    """Validate the framing and CRC of the batch at ``pos``; its header fields as a tuple.

    ``None`` when the batch is cut short by ``end`` (a fetch response's partial tail).
    Checks: batchLength large enough, magic 2, CRC-32C, record count not negative.  The
    codec is checked when the records are decompressed.
    """
    if end - pos < LOG_OVERHEAD:
        return None
    (length,) = _INT32.unpack_from(data, pos + 8)
    if length < MIN_BATCH_LENGTH:
        raise CorruptRecordError(f"record batch length {length} too small at byte {pos}")
    bend = pos + LOG_OVERHEAD + length
    if bend > end:
        return None
    fields = HEADER.unpack_from(data, pos)
    if fields[3] != MAGIC:
        raise CorruptRecordError(f"record batch magic {fields[3]} at byte {pos}, expected 2")
    if crc32c(view[pos + ATTRIBUTES_OFFSET : bend]) != fields[4]:
        raise CorruptRecordError(f"CRC-32C mismatch in the record batch at byte {pos}")
    if fields[12] < 0:
        raise CorruptRecordError(f"negative record count {fields[12]} at byte {pos}")
    return fields


def _batch_records(
    data: bytes, pos: int, fields: tuple[Any, ...], max_decompressed: int
) -> list[DefaultRecord]:
    """Decompress (bounded) and decode the records of a validated batch."""
    start = pos + RECORD_BATCH_OVERHEAD
    stop = pos + LOG_OVERHEAD + fields[1]
    attrs = fields[5]
    codec = attrs & CODEC_MASK
    if codec:
        if codec > _MAX_CODEC:
            raise CorruptRecordError(f"unknown compression codec {codec} in a record batch")
        data = decompress(codec, memoryview(data)[start:stop], max_size=max_decompressed)
        start = 0
        stop = len(data)
    records = _parse_records(data, start, stop, fields[12], fields[0], fields[7])
    if attrs & TIMESTAMP_TYPE_MASK:  # LogAppendTime: every record carries maxTimestamp
        ts = fields[8]
        records = [_new(DefaultRecord, (r[0], ts, r[2], r[3], r[4])) for r in records]
    return records


def _bytes(data: bytes | bytearray | memoryview) -> bytes:
    # bytes slices are bytes: keys/values come out without a second copy.
    return data if type(data) is bytes else bytes(data)


def _truncated(pos: int) -> CorruptRecordError:
    return CorruptRecordError(f"record batch truncated at byte {pos}")


class DefaultRecordBatch:
    """One validated batch of a :class:`RecordBatchReader`: its header, records on demand.

    The framing and CRC were checked when the reader reached the batch; decompression
    and record decoding happen on the first :meth:`records` call (then cached).  Control
    batches decode too (their records' keys hold the marker version and type).
    """

    __slots__ = ("_data", "_max_decompressed", "_pos", "_records", "header")

    def __init__(self, data: bytes, pos: int, header: RecordBatchHeader, max_decompressed: int):
        self.header = header
        self._data = data
        self._pos = pos
        self._max_decompressed = max_decompressed
        self._records: list[DefaultRecord] | None = None

    def records(self) -> list[DefaultRecord]:
        if self._records is None:
            self._records = _batch_records(self._data, self._pos, self.header, self._max_decompressed)
        return self._records

    def __iter__(self) -> Iterator[DefaultRecord]:
        return iter(self.records())

    def raw(self) -> bytes:
        """The batch's bytes as they are on the wire."""
        return self._data[self._pos : self._pos + self.header.size]

    def __repr__(self) -> str:
        return f"DefaultRecordBatch({self.header!r})"


class RecordBatchReader:
    """Iterate the :class:`DefaultRecordBatch` es of a magic-2 record set.

    Each batch's framing and CRC-32C are checked as iteration reaches it; its records are
    decompressed (at most ``max_decompressed_bytes``) and decoded only when asked for.  A
    last batch cut short by the end of ``data`` is ignored when ``allow_partial_tail``
    (fetch responses end like that), otherwise it raises :class:`CorruptRecordError`.
    An entry of another magic raises too (see :func:`kproto.records.read_records` for sets
    that mix formats).
    """

    __slots__ = ("_allow_partial_tail", "_data", "_max_decompressed")

    def __init__(
        self,
        data: bytes | bytearray | memoryview,
        *,
        allow_partial_tail: bool = True,
        max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    ) -> None:
        self._data = _bytes(data)
        self._allow_partial_tail = allow_partial_tail
        self._max_decompressed = max_decompressed_bytes

    def __iter__(self) -> Iterator[DefaultRecordBatch]:
        data = self._data
        end = len(data)
        pos = 0
        with memoryview(data) as view:
            while pos < end:
                fields = _batch_at(data, view, pos, end)
                if fields is None:
                    if self._allow_partial_tail:
                        return
                    raise _truncated(pos)
                header = _new(RecordBatchHeader, fields)
                yield DefaultRecordBatch(data, pos, header, self._max_decompressed)
                pos += LOG_OVERHEAD + fields[1]


def read_record_batches(
    data: bytes | bytearray | memoryview,
    *,
    decompress: bool = True,
    allow_partial_tail: bool = True,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> list[DefaultRecord]:
    """The data records of every batch of a magic-2 record set, in order, as one list.

    Control batches are validated and skipped, as Kafka consumers do.  ``decompress=False``
    checks compressed batches (framing, CRC) without returning their records.  Partial
    tail and errors as in :class:`RecordBatchReader`.
    """
    data = _bytes(data)
    end = len(data)
    pos = 0
    out: list[DefaultRecord] = []
    with memoryview(data) as view:
        while pos < end:
            fields = _batch_at(data, view, pos, end)
            if fields is None:
                if allow_partial_tail:
                    break
                raise _truncated(pos)
            attrs = fields[5]
            if not attrs & CONTROL_MASK and (decompress or not attrs & CODEC_MASK):
                out.extend(_batch_records(data, pos, fields, max_decompressed_bytes))
            pos += LOG_OVERHEAD + fields[1]
    return out
