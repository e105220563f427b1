"""Kafka MessageSet codec, message format v0 (magic 0) and v1 (magic 1).

Grammar (https://kafka.apache.org/protocol#protocol_message_sets; Kafka's
``LegacyRecord.java``)::

    MessageSet => [Offset MessageSize Message]        (repeated, no count: until the bytes end)
      Offset => int64
      MessageSize => int32                           (bytes of Message that follow)

    Message (magic 0) => Crc MagicByte Attributes Key Value
    Message (magic 1) => Crc MagicByte Attributes Timestamp Key Value
      Crc => uint32                                  (CRC-32/IEEE of MagicByte .. end of Value)
      MagicByte => int8                              (0 or 1)
      Attributes => int8
        bits 0-2: compression codec (0 none, 1 gzip, 2 snappy, 3 lz4)
        bit 3:    timestamp type, magic 1 only (0 CreateTime, 1 LogAppendTime)
        bits 4-7: unused (0)
      Timestamp => int64                             (epoch milliseconds; -1 = none)
      Key => bytes                                   (int32 length, -1 = null, then the bytes)
      Value => bytes                                 (int32 length, -1 = null, then the bytes)

    Compressed ("wrapper") message: codec != 0, Key null, Value = compress(inner MessageSet).
      magic 0: inner offsets are absolute; wrapper Offset = last inner offset.
      magic 1: inner offsets are relative (0 .. n-1);
               wrapper Offset = absolute offset of the last inner message, so
               absolute = wrapper Offset - last relative offset + relative offset
               (a wrapper Offset of 0 means "not assigned yet": producer data, as
               Kafka's reader treats it; relative offsets are then returned as they are).
               If the wrapper is LogAppendTime its Timestamp replaces the inner ones.

Offsets and MessageSize are *outside* the CRC, which is what lets a broker assign offsets
by patching eight bytes per message without recomputing a checksum
(:func:`assign_offsets`).  A fetch response may end with a truncated message (the broker
cuts at the byte limit); :class:`MessageSetReader` ignores such a tail by default.

Every failure to parse bytes raises :class:`~kproto.errors.CorruptRecordError`.
"""

from __future__ import annotations

import functools
import struct
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple, cast

from kproto.errors import CorruptRecordError, EncodeError, KprotoError
from kproto.records.compression import DEFAULT_MAX_DECOMPRESSED, Compression, compress, decompress
from kproto.records.default_builder import check_bytes
from kproto.records.entry import (
    ENTRY_HEAD,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    V0_CRC_OFFSET,
    V0_MIN_SIZE,
    V1_MIN_SIZE,
)

__all__ = [
    "LegacyRecord",
    "MessageSetBuilder",
    "MessageSetReader",
    "RecordTooLargeError",
    "build_message_set",
    "read_message_set",
]

# --------------------------------------------------------------------------- layout

# Offset + MessageSize (the part of every entry outside the message) and the
# positions of Crc and MagicByte come from :mod:`kproto.records.entry`.
CRC_OFFSET = V0_CRC_OFFSET
ATTRIBUTES_OFFSET = 17
#: Position of the Key length relative to the entry start.
KEY_OFFSET_V0 = 18
KEY_OFFSET_V1 = 26
#: Smallest legal MessageSize: Crc, MagicByte, Attributes, [Timestamp], 2 length words.
RECORD_OVERHEAD_V0 = V0_MIN_SIZE
RECORD_OVERHEAD_V1 = V1_MIN_SIZE

CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
CREATE_TIME = 0
LOG_APPEND_TIME = 1
NO_TIMESTAMP = -1

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1

_HEADER_V0 = struct.Struct(">qiIbbi")  # Offset MessageSize Crc Magic Attributes KeyLength
_HEADER_V1 = struct.Struct(">qiIbbqi")  # ... Magic Attributes Timestamp KeyLength
_ENTRY_PREFIX = struct.Struct(">qiI")  # Offset MessageSize Crc (written by the builder)
_BODY_V0 = struct.Struct(">bbi")  # Magic Attributes KeyLength
_BODY_V1 = struct.Struct(">bbqi")  # Magic Attributes Timestamp KeyLength
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")

_MAX_CODEC = int(Compression.LZ4)  # zstd exists only in magic 2 record batches


@functools.lru_cache(maxsize=512)
def _shape(magic: int, klen: int, vlen: int, broker: bool) -> tuple[Callable[..., Any], int]:
    """``(unpack_from, size)`` of a whole entry of one shape, for the hot loops.

    A producer's messages nearly always share magic and key length (often value length
    too), so the loops guess the next message's shape from the previous one and unpack it
    in one C call; the unpacked lengths tell whether the guess held, and a wrong guess
    falls back to :func:`_parse_message`.  Fields, always ten so one statement unpacks
    either magic: Offset, MessageSize, Crc, MagicByte, Attributes, Timestamp (``b""``
    for magic 0), KeyLength, Key, ValueLength, Value (``b""`` when ``vlen`` < 0: the
    caller slices the value itself).  ``broker``: skip Offset, Key and Value (seven fields).
    """
    ts = "q" if magic else "0s"
    if broker:
        st = struct.Struct(f">8xiIbb{ts}i{max(klen, 0)}xi")
    else:
        st = struct.Struct(f">qiIbb{ts}i{max(klen, 0)}si{max(vlen, 0)}s")
    return st.unpack_from, st.size


class RecordTooLargeError(KprotoError):
    """A message (wrapper included) larger than the configured ``max_message_bytes``.

    Not a decode error: the bytes are fine, the broker's limit is not.  The broker maps it
    to MESSAGE_TOO_LARGE (error code 10).
    """

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(f"message of {size} bytes exceeds max_message_bytes={limit}")


class LegacyRecord(NamedTuple):
    """One decoded message.

    ``timestamp`` is ``None`` for magic 0.  ``attributes`` are the message's own
    attributes; records expanded from a wrapper inherit the wrapper's timestamp-type bit.
    ``crc`` is the stored (and verified) checksum of the message as it appears on the wire.
    """

    offset: int
    timestamp: int | None
    key: bytes | None
    value: bytes | None
    magic: int
    attributes: int
    crc: int


_new_record = cast(Any, tuple.__new__)  # tuple.__new__(LegacyRecord, (...)): fastest constructor

# A parsed message: (end, offset, crc, magic, attributes, timestamp,
#                    key_start, key_end, value_start, value_end); *_start == -1 means null.
_Parsed = tuple[int, int, int, int, int, int, int, int, int, int]


def _parse_message(data: bytes | bytearray, pos: int, end: int) -> _Parsed | None:
    """Validate the entry at ``data[pos:end]``; ``None`` when it is cut short by ``end``.

    Checks: MessageSize large enough for the magic, magic 0 or 1, Key/Value lengths that
    exactly fill the message, CRC.  The generic (slow-ish) path; the loops of the reader
    and of :func:`assign_offsets` inline the same checks for speed.
    """
    if end - pos < LOG_OVERHEAD:
        return None
    offset, size = ENTRY_HEAD.unpack_from(data, pos)
    if size < RECORD_OVERHEAD_V0:
        raise CorruptRecordError(f"message size {size} too small at byte {pos}")
    mend = pos + LOG_OVERHEAD + size
    if mend > end:
        return None
    magic = data[pos + MAGIC_OFFSET]
    if magic == 0:
        _, _, crc, _, attrs, klen = _HEADER_V0.unpack_from(data, pos)
        timestamp = NO_TIMESTAMP
        kstart = pos + KEY_OFFSET_V0 + 4
    elif magic == 1:
        if size < RECORD_OVERHEAD_V1:
            raise CorruptRecordError(f"message size {size} too small for magic 1 at byte {pos}")
        _, _, crc, _, attrs, timestamp, klen = _HEADER_V1.unpack_from(data, pos)
        kstart = pos + KEY_OFFSET_V1 + 4
    else:
        raise CorruptRecordError(f"unsupported message magic {magic} at byte {pos}")
    if klen == -1:
        kend = kstart
        kstart = -1
    else:
        kend = kstart + klen
    if klen < -1 or kend + 4 > mend:
        raise CorruptRecordError(f"bad key length {klen} at byte {pos}")
    (vlen,) = _INT32.unpack_from(data, kend)
    vstart = kend + 4
    vend = vstart if vlen == -1 else vstart + vlen
    if vlen < -1 or vend != mend:
        raise CorruptRecordError(f"bad value length {vlen} at byte {pos}")
    if vlen == -1:
        vstart = -1
    if zlib.crc32(memoryview(data)[pos + MAGIC_OFFSET : mend]) != crc:
        raise _crc_error(pos, offset)
    return mend, offset, crc, magic, attrs, timestamp, kstart, kend, vstart, vend


def _crc_error(pos: int, offset: int | None) -> CorruptRecordError:
    where = "" if offset is None else f" (offset {offset})"
    return CorruptRecordError(f"CRC mismatch in the message at byte {pos}{where}")


def _truncated(pos: int) -> CorruptRecordError:
    return CorruptRecordError(f"message set truncated inside the message at byte {pos}")


def _inner_records(inner: bytes, wrapper_magic: int) -> list[LegacyRecord]:
    """Parse a decompressed inner MessageSet: complete, non-empty, uncompressed, same magic."""
    records = MessageSetReader(inner, decompress=False, allow_partial_tail=False).records()
    if not records:
        raise CorruptRecordError("compressed message with no inner messages")
    for rec in records:
        if rec[4] != wrapper_magic:
            raise CorruptRecordError(f"inner message magic {rec[4]} inside a magic {wrapper_magic} wrapper")
        if rec[5] & CODEC_MASK:
            raise CorruptRecordError("nested compression inside a wrapper message")
    return records


def _wrapper_payload(data: bytes | bytearray, msg: _Parsed, max_size: int) -> bytes:
    codec = msg[4] & CODEC_MASK
    if codec > _MAX_CODEC:
        raise CorruptRecordError(f"compression codec {codec} is not valid for magic {msg[3]}")
    if msg[8] < 0:
        raise CorruptRecordError("compressed message with a null value")
    return decompress(codec, memoryview(data)[msg[8] : msg[9]], max_size=max_size)


# --------------------------------------------------------------------------- builder


@functools.lru_cache(maxsize=256)
def _body_packer(magic: int, klen: int, vlen: int) -> Callable[..., bytes]:
    """``pack(magic, attributes, [timestamp,] klen, key, vlen, value)`` for fixed sizes.

    One C call per message instead of four concatenations; worth it when consecutive
    records share key/value sizes (the usual case), so :func:`_encode` only asks for a
    packer after seeing the same sizes twice in a row.
    """
    ts = "q" if magic else ""
    return struct.Struct(f">bb{ts}i{max(klen, 0)}si{max(vlen, 0)}s").pack


def _encode(
    records: list[tuple[bytes | None, bytes | None, int]],
    magic: int,
    first_offset: int,
    attributes: int = 0,
) -> list[bytes]:
    """Encode records as consecutive entries numbered from ``first_offset``; return parts.

    Each message body (MagicByte .. Value) is built once, checksummed with ``zlib.crc32``
    and prefixed with one packed ``Offset MessageSize Crc`` header; the caller joins.
    """
    parts: list[bytes] = []
    append = parts.append
    crc32 = zlib.crc32
    prefix = _ENTRY_PREFIX.pack
    vlen_of = _INT32.pack
    head0 = _BODY_V0.pack
    head1 = _BODY_V1.pack
    offset = first_offset
    last_k = last_v = -2
    packer: Callable[..., bytes] | None = None
    for key, value, timestamp in records:
        if key is None:
            klen = -1
            key = b""
        else:
            klen = len(key)
        if value is None:
            vlen = -1
            value = b""
        else:
            vlen = len(value)
        if klen == last_k and vlen == last_v:
            if packer is None:
                packer = _body_packer(magic, klen, vlen)
            if magic == 0:
                body = packer(0, attributes, klen, key, vlen, value)
            else:
                body = packer(1, attributes, timestamp, klen, key, vlen, value)
        else:
            last_k = klen
            last_v = vlen
            packer = None
            if magic == 0:
                body = head0(0, attributes, klen) + key + vlen_of(vlen) + value
            else:
                body = head1(1, attributes, timestamp, klen) + key + vlen_of(vlen) + value
        append(prefix(offset, len(body) + 4, crc32(body)))
        append(body)
        offset += 1
    return parts


class MessageSetBuilder:
    """Accumulate records and encode them as one magic 0 or magic 1 MessageSet.

    Uncompressed: one message per record, offsets ``base_offset + i``.  Compressed: a single
    wrapper message whose value is the compressed inner MessageSet, laid out as described in
    the module docstring (magic 0 absolute inner offsets, magic 1 relative ones; wrapper
    offset = absolute offset of the last record; magic 1 wrapper timestamp = max inner).
    Magic 0 lz4 is written with the KAFKA-3160 header checksum, as Kafka did, so that
    0.8/0.9 consumers can read it.
    """

    __slots__ = ("_compression", "_magic", "_records")

    def __init__(self, magic: int = 0, compression: Compression | int = Compression.NONE) -> None:
        if magic not in (0, 1):
            raise EncodeError(f"MessageSet magic must be 0 or 1, not {magic!r}")
        if not isinstance(compression, int) or not 0 <= compression <= _MAX_CODEC:
            raise EncodeError(f"compression {compression!r} is not valid for magic {magic}")
        self._magic = magic
        self._compression = Compression(compression)
        self._records: list[tuple[bytes | None, bytes | None, int]] = []

    def append(
        self,
        key: bytes | bytearray | memoryview | None,
        value: bytes | bytearray | memoryview | None,
        timestamp: int | None = None,
    ) -> None:
        """Add one record.

        ``timestamp`` (epoch ms) is used by magic 1 only; ``None`` means "now", like the
        Kafka producer.  Magic 0 has no timestamp field, so it is ignored there (which lets
        callers down-convert magic 1 records without stripping it).
        """
        if key is not None and type(key) is not bytes:
            key = check_bytes("key", key)
        if value is not None and type(value) is not bytes:
            value = check_bytes("value", value)
        if self._magic == 0:
            ts = NO_TIMESTAMP
        elif timestamp is None:
            ts = int(time.time() * 1000)
        elif type(timestamp) is not int or not _INT64_MIN <= timestamp <= _INT64_MAX:
            raise EncodeError(f"timestamp must be an int64, not {timestamp!r}")
        else:
            ts = timestamp
        # Lengths beyond int32 are rejected by build() (struct.error -> EncodeError).
        self._records.append((key, value, ts))

    def __len__(self) -> int:
        return len(self._records)

    def build(self, base_offset: int = 0) -> bytes:
        """Encode the records appended so far; ``b""`` when there are none."""
        records = self._records
        n = len(records)
        if type(base_offset) is not int or not 0 <= base_offset <= _INT64_MAX - n:
            raise EncodeError(f"base_offset {base_offset!r} out of range")
        if n == 0:
            return b""
        magic = self._magic
        codec = self._compression
        try:
            if codec == Compression.NONE:
                return b"".join(_encode(records, magic, base_offset))
            first_inner = base_offset if magic == 0 else 0
            inner = b"".join(_encode(records, magic, first_inner))
        except struct.error as exc:  # a key or value longer than an int32 can say
            raise EncodeError(f"record too large to encode: {exc}") from exc
        payload = compress(codec, inner, legacy_lz4=magic == 0)
        wrapper_ts = max(r[2] for r in records)
        wrapper: list[tuple[bytes | None, bytes | None, int]] = [(None, payload, wrapper_ts)]
        return b"".join(_encode(wrapper, magic, base_offset + n - 1, int(codec)))


def build_message_set(
    records: Iterable[tuple[Any, ...]],
    magic: int = 0,
    compression: Compression | int = Compression.NONE,
    base_offset: int = 0,
) -> bytes:
    """Encode ``(key, value)`` or ``(key, value, timestamp)`` tuples as one MessageSet."""
    builder = MessageSetBuilder(magic, compression)
    for record in records:
        if not isinstance(record, tuple) or len(record) not in (2, 3):
            raise EncodeError(f"record must be (key, value[, timestamp]), not {record!r}")
        builder.append(*record)
    return builder.build(base_offset)


# --------------------------------------------------------------------------- reader


class MessageSetReader:
    """Iterate the :class:`LegacyRecord` of a magic 0/1 MessageSet.

    ``decompress=True`` expands wrapper messages into their inner records with absolute
    offsets; ``False`` yields wrappers as they are (value = compressed bytes).  Every CRC is
    checked, outer and inner.  A last message cut short by the end of ``data`` is ignored
    when ``allow_partial_tail`` (fetch responses end like that), otherwise it raises
    :class:`CorruptRecordError`.  ``max_decompressed_bytes`` bounds every decompression.

    The whole set is parsed when iteration starts (one tight loop, no generator frames):
    an error raises before any record is produced, and memory use is that of the list.
    """

    __slots__ = ("_allow_partial_tail", "_data", "_decompress", "_max_decompressed")

    def __init__(
        self,
        data: bytes | bytearray | memoryview,
        *,
        decompress: bool = True,
        allow_partial_tail: bool = True,
        max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    ) -> None:
        # bytes slices are bytes: keys/values come out without a second copy.
        self._data = data if type(data) is bytes else bytes(data)
        self._decompress = decompress
        self._allow_partial_tail = allow_partial_tail
        self._max_decompressed = max_decompressed_bytes

    def __iter__(self) -> Iterator[LegacyRecord]:
        return iter(self.records())

    def records(self) -> list[LegacyRecord]:
        """Parse the whole set now and return its records (what iteration walks)."""
        data = self._data
        end = len(data)
        pos = 0
        out: list[LegacyRecord] = []
        append = out.append
        new = _new_record
        record_cls = LegacyRecord
        crc32 = zlib.crc32
        # Guessed shape of the next message (see _shape); magic -1: no guess yet.  g_vlen is
        # -2 once value lengths vary: the struct then stops at ValueLength.
        g_magic = g_klen = g_vlen = -1
        g_unpack, g_size = _shape(0, 0, -2, False)
        g_head = g_size
        while pos < end:
            if g_magic >= 0 and end - pos >= g_size:
                offset, size, crc, magic, attrs, ts, klen, key, vlen, value = g_unpack(data, pos)
                mend = pos + 12 + size
                vstart = pos + g_head
                if (
                    magic == g_magic
                    and klen == g_klen
                    and not attrs & 7
                    and mend <= end
                    and (mend == vstart + vlen if vlen >= 0 else vlen == -1 and mend == vstart)
                ):
                    if crc32(data[pos + 16 : mend]) != crc:
                        raise _crc_error(pos, offset)
                    if vlen != g_vlen:
                        value = data[vstart:mend] if vlen >= 0 else None
                        if g_vlen != -2:  # value sizes vary: stop unpacking a fixed-size value
                            g_vlen = -2
                            g_unpack, g_size = _shape(magic, klen, -2, False)
                    append(
                        new(
                            record_cls,
                            (
                                offset,
                                ts if magic else None,
                                key if klen >= 0 else None,
                                value,
                                magic,
                                attrs,
                                crc,
                            ),
                        )
                    )
                    pos = mend
                    continue
            msg = _parse_message(data, pos, end)
            if msg is None:
                if self._allow_partial_tail:
                    return out
                raise _truncated(pos)
            if not msg[4] & CODEC_MASK:
                append(_record(data, msg))
                g_magic = msg[3]
                g_klen = -1 if msg[6] < 0 else msg[7] - msg[6]
                g_vlen = -2 if msg[8] < 0 else msg[9] - msg[8]  # null value: never fixed
                g_head = msg[9] - pos - max(g_vlen, 0)
                g_unpack, g_size = _shape(g_magic, g_klen, g_vlen, False)
            elif self._decompress:
                out.extend(self._expand(msg))
            else:
                append(_record(data, msg))
            pos = msg[0]
        return out

    def _expand(self, wrapper: _Parsed) -> list[LegacyRecord]:
        """The inner records of a wrapper, with absolute offsets."""
        magic = wrapper[3]
        records = _inner_records(_wrapper_payload(self._data, wrapper, self._max_decompressed), magic)
        base = 0
        if magic == 1 and wrapper[1] != 0:  # 0: offsets not assigned yet (producer data)
            base = wrapper[1] - records[-1][0]
            if base < 0:
                raise CorruptRecordError(
                    f"wrapper offset {wrapper[1]} is below its last inner offset {records[-1][0]}"
                )
        if magic == 1 and wrapper[4] & TIMESTAMP_TYPE_MASK:  # LogAppendTime: wrapper's time
            ts = wrapper[5]
            bit = TIMESTAMP_TYPE_MASK
            return [
                _new_record(LegacyRecord, (r[0] + base, ts, r[2], r[3], 1, r[5] | bit, r[6])) for r in records
            ]
        if base:
            return [_new_record(LegacyRecord, (r[0] + base, *r[1:])) for r in records]
        return records


def _record(data: bytes, msg: _Parsed) -> LegacyRecord:
    _, offset, crc, magic, attrs, timestamp, kstart, kend, vstart, vend = msg
    return LegacyRecord(
        offset,
        None if magic == 0 else timestamp,
        None if kstart < 0 else data[kstart:kend],
        None if vstart < 0 else data[vstart:vend],
        magic,
        attrs,
        crc,
    )


def read_message_set(
    data: bytes | bytearray | memoryview,
    *,
    decompress: bool = True,
    allow_partial_tail: bool = True,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> list[LegacyRecord]:
    """All records of ``data`` as a list (see :class:`MessageSetReader`)."""
    return MessageSetReader(
        data,
        decompress=decompress,
        allow_partial_tail=allow_partial_tail,
        max_decompressed_bytes=max_decompressed_bytes,
    ).records()
