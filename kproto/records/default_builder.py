"""Encoding RecordBatch v2 (magic 2): :class:`RecordBatchBuilder`.

The grammar is quoted at the top of :mod:`kproto.records.default`, which reads
batches; this module writes them.  The part of a record before its key (or,
for a null key, before its value) depends only on the timestamp delta, the
offset delta, the key and value lengths and the headers' length::

    Record => length varint, attributes int8, timestampDelta varlong,
              offsetDelta varint, keyLength varint, key, valueLength varint,
              value, headers [Header]

so :func:`_encode_records` keeps those prefixes in a bounded module-level
cache: a list per shape (timestamp delta, key, value and headers lengths)
indexed by offset delta.  A producer's batches repeat the same handful of
shapes, and a batch of uniform records (one value length, keys all null or
of one length, timestamps in order) takes each run of equal timestamps'
prefixes as one slice and lays the pieces out by slice assignment, with no
Python step per record: 130 records of 100 bytes build in ~35 µs, against
~60 µs through the per-record loop and ~130 µs without the cache.  The
producer's I/O thread encodes every batch it sends.
"""

from __future__ import annotations

import bisect
import itertools
import struct
import time
from collections.abc import Iterable, Sequence
from typing import cast

from kproto.errors import EncodeError
from kproto.records.compression import Compression, compress
from kproto.records.crc import crc32c
from kproto.records.default import (
    _CRC_PART,
    _INT16_MAX,
    _INT16_MIN,
    _INT32_MAX,
    _INT32_MIN,
    _INT64_MAX,
    _INT64_MIN,
    _MAX_CODEC,
    _PREFIX,
    _VT,
    CODEC_MASK,
    CONTROL_MASK,
    CREATE_TIME,
    LOG_APPEND_TIME,
    MAGIC,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
    _varint,
)

__all__ = ["RecordBatchBuilder"]

_NO_HEADERS = b"\x00"  # an empty header list: varint count 0
_BYTES_OR_NONE = frozenset({bytes, type(None)})
_INT = frozenset({int})


def check_bytes(name: str, data: object) -> bytes | None:
    """``data`` as bytes or None (bytearray and memoryview copied); EncodeError otherwise.
    Shared with the MessageSet builder (:mod:`kproto.records.legacy`)."""
    if data is None or type(data) is bytes:
        return data
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise EncodeError(f"{name} must be bytes or None, not {type(data).__name__}")


def _check_int(name: str, value: object, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise EncodeError(f"{name} must be an int in [{low}, {high}], not {value!r}")
    return value


def _encode_headers(headers: Iterable[tuple[str, bytes | None]]) -> bytes:
    """Encoded header list (count included); validates types."""
    parts: list[bytes] = []
    n = 0
    for header in headers:
        if not isinstance(header, tuple) or len(header) != 2 or not isinstance(header[0], str):
            raise EncodeError(f"a header must be a (str, bytes | None) pair, not {header!r}")
        hkey = header[0].encode("utf-8")
        hvalue = check_bytes("header value", header[1])
        parts.append(_varint(len(hkey)))
        parts.append(hkey)
        if hvalue is None:
            parts.append(b"\x01")
        else:
            parts.append(_varint(len(hvalue)))
            parts.append(hvalue)
        n += 1
    return _varint(n) + b"".join(parts)


def _check_timestamp(timestamp: object) -> int:
    if type(timestamp) is not int or not _INT64_MIN <= timestamp <= _INT64_MAX:
        raise EncodeError(f"timestamp must be an int64, not {timestamp!r}")
    return timestamp


class RecordBatchBuilder:
    """Accumulate records and encode them as one magic-2 record batch.

    Records are numbered with offset deltas ``0 .. n-1``; ``baseTimestamp`` is the first
    record's timestamp, ``maxTimestamp`` the largest.  Compression, when asked for, is
    always applied (as the Java producer does; kafka-python falls back to uncompressed when
    compression does not shrink the records).  ``is_control`` is for brokers writing
    transaction markers.  The producer fields are what an idempotent/transactional
    producer sends; a transactional batch needs a producer id.

    Records are kept as four parallel lists (keys, values, timestamps, encoded
    headers): :meth:`extend` takes a producer's columns as they are.
    """

    __slots__ = (
        "_attributes",
        "_base_sequence",
        "_headers",
        "_keys",
        "_producer_epoch",
        "_producer_id",
        "_timestamps",
        "_values",
    )

    def __init__(
        self,
        compression: Compression | int = Compression.NONE,
        producer_id: int = NO_PRODUCER_ID,
        producer_epoch: int = NO_PRODUCER_EPOCH,
        base_sequence: int = NO_SEQUENCE,
        is_transactional: bool = False,
        timestamp_type: int = CREATE_TIME,
        *,
        is_control: bool = False,
    ) -> None:
        if type(compression) is not int and not isinstance(compression, Compression):
            raise EncodeError(f"compression {compression!r} is not a codec id")
        _check_int("compression", int(compression), 0, _MAX_CODEC)
        self._producer_id = _check_int("producer_id", producer_id, _INT64_MIN, _INT64_MAX)
        self._producer_epoch = _check_int("producer_epoch", producer_epoch, _INT16_MIN, _INT16_MAX)
        self._base_sequence = _check_int("base_sequence", base_sequence, _INT32_MIN, _INT32_MAX)
        _check_int("timestamp_type", timestamp_type, CREATE_TIME, LOG_APPEND_TIME)
        if is_transactional and producer_id < 0:
            raise EncodeError("a transactional batch needs a producer id")
        self._attributes = (
            int(compression)
            | (TIMESTAMP_TYPE_MASK if timestamp_type else 0)
            | (TRANSACTIONAL_MASK if is_transactional else 0)
            | (CONTROL_MASK if is_control else 0)
        )
        self._keys: list[bytes | None] = []
        self._values: list[bytes | None] = []
        self._timestamps: list[int] = []
        self._headers: list[bytes] = []

    def append(
        self,
        key: bytes | bytearray | memoryview | None,
        value: bytes | bytearray | memoryview | None,
        timestamp: int | None = None,
        headers: Iterable[tuple[str, bytes | None]] = (),
    ) -> None:
        """Add one record; ``timestamp`` (epoch ms) ``None`` means now, as in Kafka."""
        if key is not None and type(key) is not bytes:
            key = check_bytes("key", key)
        if value is not None and type(value) is not bytes:
            value = check_bytes("value", value)
        if timestamp is None:
            timestamp = int(time.time() * 1000)
        elif type(timestamp) is not int or not _INT64_MIN <= timestamp <= _INT64_MAX:
            raise EncodeError(f"timestamp must be an int64, not {timestamp!r}")
        self._keys.append(key)
        self._values.append(value)
        self._timestamps.append(timestamp)
        self._headers.append(_NO_HEADERS if headers == () else _encode_headers(headers))

    def extend(
        self,
        keys: Sequence[bytes | bytearray | memoryview | None],
        values: Sequence[bytes | bytearray | memoryview | None],
        timestamps: Sequence[int],
        headers: Sequence[Iterable[tuple[str, bytes | None]]] | None = None,
    ) -> None:
        """Add records given as columns (``headers`` None: none have any), as a
        producer keeps them; the same checks as :meth:`append`, paid per column."""
        n = len(values)
        if len(keys) != n or len(timestamps) != n or (headers is not None and len(headers) != n):
            raise EncodeError("keys, values, timestamps and headers must have the same length")
        # Type checks as set lookups over map(type, ...): C loops, not a Python
        # expression per record (a producer extends with every batch it sends).
        if _BYTES_OR_NONE.issuperset(map(type, keys)):
            self._keys.extend(cast("Sequence[bytes | None]", keys))  # checked just above
        else:
            self._keys.extend(check_bytes("key", k) for k in keys)
        if _BYTES_OR_NONE.issuperset(map(type, values)):
            self._values.extend(cast("Sequence[bytes | None]", values))
        else:
            self._values.extend(check_bytes("value", v) for v in values)
        if not _INT.issuperset(map(type, timestamps)) or (
            n and not (_INT64_MIN <= min(timestamps) and max(timestamps) <= _INT64_MAX)
        ):
            for t in timestamps:
                _check_timestamp(t)  # raises, naming the first bad one
        self._timestamps.extend(timestamps)
        if headers is None:
            self._headers.extend(itertools.repeat(_NO_HEADERS, n))
        else:
            self._headers.extend(_NO_HEADERS if h == () else _encode_headers(h) for h in headers)

    def __len__(self) -> int:
        return len(self._values)

    def build(
        self, base_offset: int = 0, *, partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH
    ) -> bytes:
        """Encode the records appended so far as one batch; ``b""`` when there are none.

        ``partition_leader_epoch`` defaults to -1, what Kafka's producer writes
        (kafka-python writes 0; the broker may overwrite it, it is outside the CRC).
        """
        n = len(self._values)
        _check_int("base_offset", base_offset, 0, _INT64_MAX - max(n - 1, 0))
        _check_int("partition_leader_epoch", partition_leader_epoch, _INT32_MIN, _INT32_MAX)
        if n == 0:
            return b""
        base_ts = self._timestamps[0]
        parts, min_ts, max_ts = _encode_records(self._keys, self._values, self._timestamps, self._headers)
        if min_ts - base_ts < _INT64_MIN or max_ts - base_ts > _INT64_MAX:
            raise EncodeError("record timestamps too far apart for int64 timestamp deltas")
        payload = b"".join(parts)
        codec = self._attributes & CODEC_MASK
        if codec:
            payload = compress(codec, payload)
        try:
            tail = _CRC_PART.pack(
                self._attributes,
                n - 1,
                base_ts,
                max_ts,
                self._producer_id,
                self._producer_epoch,
                self._base_sequence,
                n,
            )
            length = len(tail) + len(payload) + 9  # partitionLeaderEpoch, magic, crc
            crc = crc32c(payload, crc32c(tail))
            prefix = _PREFIX.pack(base_offset, length, partition_leader_epoch, MAGIC, crc)
        except struct.error as exc:  # more than an int32 of records
            raise EncodeError(f"record batch too large to encode: {exc}") from exc
        return b"".join((prefix, tail, payload))


#: Record prefixes by shape (timestamp delta, key length, value length, headers
#: length; lengths -1 for null), each a list indexed by offset delta: the bytes up
#: to the key for a keyed record, through the value length for a null key.  A list
#: per shape lets a batch of uniform records take a run of prefixes as one slice.
#: Cleared when it holds more than ``_PREFIXES_MAX`` prefixes, so odd workloads
#: cannot grow it without bound.
_PREFIXES: dict[tuple[int, int, int, int], list[bytes]] = {}
_PREFIXES_MAX = 1 << 16
_prefixes_held = 0


def _prefix_body(ts_delta: int, offset_delta: int, key_len: int, value_len: int, headers_len: int) -> bytes:
    body_len = (
        1  # attributes
        + len(_varint(ts_delta))
        + len(_varint(offset_delta))
        + len(_varint(key_len))
        + max(key_len, 0)
        + len(_varint(value_len))
        + max(value_len, 0)
        + headers_len
    )
    head = [_varint(body_len), b"\x00", _varint(ts_delta), _varint(offset_delta), _varint(key_len)]
    if key_len < 0:
        head.append(_varint(value_len))
    return b"".join(head)


def _prefixes(shape: tuple[int, int, int, int], end: int) -> list[bytes]:
    """The cached prefixes of ``shape`` for offset deltas ``0 .. end - 1`` at least."""
    global _prefixes_held
    run = _PREFIXES.get(shape)
    if run is None or len(run) < end:
        if _prefixes_held + end > _PREFIXES_MAX:
            _PREFIXES.clear()
            _prefixes_held = 0
            run = None
        if run is None:
            run = _PREFIXES[shape] = []
        ts_delta, key_len, value_len, headers_len = shape
        more = [_prefix_body(ts_delta, od, key_len, value_len, headers_len) for od in range(len(run), end)]
        run.extend(more)
        _prefixes_held += len(more)
    return run


def _encode_records(
    keys: list[bytes | None], values: list[bytes | None], timestamps: list[int], headers: list[bytes]
) -> tuple[list[bytes], int, int]:
    """Encoded records (length-prefixed) as parts for one ``join``; min and max timestamps."""
    parts = _encode_uniform(keys, values, timestamps, headers)
    if parts is not None:
        return parts, timestamps[0], timestamps[-1]
    return _encode_each(keys, values, timestamps, headers)


def _encode_each(
    keys: list[bytes | None], values: list[bytes | None], timestamps: list[int], headers: list[bytes]
) -> tuple[list[bytes], int, int]:
    """:func:`_encode_records` for any batch: a loop over the records."""
    parts: list[bytes] = []
    extend = parts.extend
    get = _PREFIXES.get
    base_ts = min_ts = max_ts = timestamps[0]
    od = 0
    for key, value, ts, hdrs in zip(keys, values, timestamps, headers, strict=True):
        if ts > max_ts:
            max_ts = ts
        elif ts < min_ts:
            min_ts = ts
        shape = (
            ts - base_ts,
            -1 if key is None else len(key),
            -1 if value is None else len(value),
            len(hdrs),
        )
        run = get(shape)
        prefix = run[od] if run is not None and od < len(run) else _prefixes(shape, od + 1)[od]
        if key is None:
            if value is None:
                extend((prefix, hdrs))
            else:
                extend((prefix, value, hdrs))
        elif value is None:
            extend((prefix, key, b"\x01", hdrs))
        else:
            extend((prefix, key, _varint(len(value)), value, hdrs))
        od += 1
    return parts, min_ts, max_ts


def _encode_uniform(
    keys: list[bytes | None], values: list[bytes | None], timestamps: list[int], headers: list[bytes]
) -> list[bytes] | None:
    """:func:`_encode_records`'s parts for a producer's usual batch, without a Python
    step per record; None when the batch is not of that kind.

    The usual batch: values of one length (none null), keys all null or all
    of one length, headers of one encoded length, timestamps in order.  Its
    records differ in their prefixes only by offset delta within a run of
    equal timestamps, so each run's prefixes are one slice of the cached
    list for its shape, and the pieces (prefix, [key, value length,] value,
    headers) are laid out by slice assignment: 130 records of 100 bytes
    encode in ~25 µs instead of ~55 µs through the loop, and the producer's
    I/O thread encodes every batch it sends.
    """
    n = len(values)
    if not n or None in values:
        return None
    value_len = len(values[0])  # type: ignore[arg-type]  # no None, checked above
    headers_len = len(headers[0])
    if (
        list(map(len, values)).count(value_len) != n  # type: ignore[arg-type]
        or list(map(len, headers)).count(headers_len) != n
        or timestamps != sorted(timestamps)
    ):
        return None
    keyless = keys.count(None)
    if keyless == n:
        key_len = -1
    elif keyless == 0 and value_len < _VT:
        key_len = len(keys[0])  # type: ignore[arg-type]
        if list(map(len, keys)).count(key_len) != n:  # type: ignore[arg-type]
            return None
    else:
        return None
    base = timestamps[0]
    prefixes: list[bytes] = []
    start = 0
    for ts in sorted(set(timestamps)):  # a batch's records share a few milliseconds
        end = bisect.bisect_right(timestamps, ts, start)
        prefixes += _prefixes((ts - base, key_len, value_len, headers_len), end)[start:end]
        start = end
    if key_len < 0:
        parts: list[bytes] = [b""] * (3 * n)
        parts[0::3] = prefixes
        parts[1::3] = values  # type: ignore[assignment]
        parts[2::3] = headers
    else:
        parts = [b""] * (5 * n)
        parts[0::5] = prefixes
        parts[1::5] = keys  # type: ignore[assignment]
        parts[2::5] = [_varint(value_len)] * n
        parts[3::5] = values  # type: ignore[assignment]
        parts[4::5] = headers
    return parts
