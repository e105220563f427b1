"""Produce with ``struct``, both ends: a broker's half and a producer's half (v0-v13 each).

Produce is the request a busy producer sends thousands of times a second;
through the Construct grammar its decode cost ~30 µs and its response ~20 µs
on the broker, more than the append itself, and on the client the encode
~35 µs and the response decode ~27 µs per request, a quarter of what the
producer's I/O thread spends on a 16 KiB batch.  Here each is a handful of
``struct`` calls:

* the broker's half: :func:`decode_produce_request`, :func:`encode_produce_response`;
* the producer's half: :func:`encode_produce_request`, :func:`decode_produce_response`.

The grammar in :mod:`kproto.messages.produce` stays the reference: property
tests (``tests/kproto/test_produce_fast.py``) check that whatever a fast
decoder accepts, the grammar decodes to the same values, and that each fast
encoder is byte for byte the grammar's encoding, at every version kproto
declares up to ``BROKER_MAX_VERSION`` for the broker's half and
``MAX_VERSION`` for the producer's (a struct fast path is only trusted with
such a proof).  :mod:`kproto.fetch_fast` is its sibling for Fetch responses.

Rules of this module:

* The decoder never raises and never decides what is an error: anything it
  does not take in stride (a short frame, a bad length, invalid UTF-8,
  trailing bytes, a version outside 0-13, a tagged field) makes it return
  ``None``, and the caller decodes with Construct, which raises the usual
  :class:`kproto.DecodeError` or reads the tagged fields.  So bad input is
  answered exactly as before.
* Each partition's records are a ``bytearray`` (one copy out of the frame):
  :func:`kproto.records.assign_batches` patches offsets into it in place
  instead of copying it once more.
* v13 names topics by id: both halves read and write the 16-byte ids in
  place of the names (a decoded request topic's ``name`` is then "", its
  ``topic_id`` the id); a producer's answer gets its names back from the
  ids the producer sent (``names``), "" for an id it did not send.

Produce request v0-v8, header v1::

    size int32, api_key int16, api_version int16, correlation_id int32,
    client_id nullable_string,
    transactional_id nullable_string            (v3+)
    acks int16, timeout_ms int32,
    [name string, [index int32, records nullable_bytes]]

Produce request v9-v12 (flexible), header v2: the same fields, with
``uvarint(n + 1)`` lengths and counts (0 = null) and a tagged-field count
(``tags``, always 0 here) ending the header and every struct::

    size, api_key, api_version, correlation_id, client_id nullable_string, tags,
    transactional_id compact_nullable_string, acks int16, timeout_ms int32,
    [name compact_string, [index int32, records compact_nullable_bytes, tags], tags], tags

Produce request v13: v12 with ``topic_id uuid`` (16 bytes) in place of ``name``.

Produce response v0-v8::

    size int32, correlation_id int32,
    [name string,
     [index int32, error_code int16, base_offset int64,
      log_append_time_ms int64                   (v2+)
      log_start_offset int64                     (v5+)
      [record_errors] (always empty here), error_message nullable_string (v8+)]]
    throttle_time_ms int32                       (v1+)

Produce response v9-v12 (flexible), header v1 (``correlation_id, tags``): the
v8 fields with compact lengths and a tagged-field count ending each struct;
v10's tagged ``current_leader`` (per partition) and ``node_endpoints``
(top level) name a new leader after NOT_LEADER_OR_FOLLOWER, which a single
broker never answers, so they are never written, and a response carrying
them is left to the grammar.  v13: a topic's 16-byte ``topic_id`` in place
of its ``name``.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from kproto import ApiKey, Request
from kproto.codec import decode_response
from kproto.uvarint import uvarint_bytes

__all__ = [
    "BROKER_MAX_VERSION",
    "FIRST_TOPIC_ID",
    "MAX_VERSION",
    "PartitionAck",
    "PartitionProduceData",
    "ProduceRequestData",
    "TopicProduceData",
    "acks_from_body",
    "decode_produce_request",
    "decode_produce_response",
    "encode_produce_request",
    "encode_produce_response",
    "produce_acks",
]

MAX_VERSION = 13
"""The newest version of the producer's half: the request encoder and the response decoder."""
BROKER_MAX_VERSION = 13
"""The newest version of the broker's half: the request decoder and the response encoder."""
FIRST_FLEXIBLE = 9  # from this version on: compact lengths, tagged fields, request header v2
FIRST_TOPIC_ID = 13  # from this version on: a topic is its 16-byte id, not its name

_HEAD = struct.Struct(">ihhih")  # size, api key, version, correlation id, client_id length
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_ACKS_TIMEOUT_COUNT = struct.Struct(">hii")  # acks, timeout_ms, topic count
_I32_I32 = struct.Struct(">ii")  # (partition index, records length) / (size, correlation id)
_EMPTY: dict[object, object] = {}
_NO_NAMES: dict[bytes, str] = {}  # a v13 answer decoded without the request's ids: topics ""
_new = object.__new__
_PRODUCE = int(ApiKey.PRODUCE)  # a plain int: comparing with an enum member costs a microsecond


class PartitionProduceData(NamedTuple):
    index: int  # type: ignore[assignment]  # shadows tuple.index; the name is the protocol's
    records: bytearray | None


class TopicProduceData(NamedTuple):
    name: str  # "" from v13
    partition_data: list[PartitionProduceData]
    topic_id: bytes = b""  # v13+


class ProduceRequestData(NamedTuple):
    """The body of a Produce request (``transactional_id`` is ``None`` before v3)."""

    transactional_id: str | None
    acks: int
    timeout_ms: int
    topic_data: list[TopicProduceData]


class _Reject(Exception):  # noqa: N818 - a signal inside this module, never seen outside
    """Not for the fast path: let the grammar decide."""


_DECLINED = (struct.error, UnicodeDecodeError, IndexError, _Reject)
"""What reading past the end or a bad field raises here: the frame goes to the grammar."""


def _uvarint(frame: bytes | bytearray, pos: int) -> tuple[int, int]:
    """The unsigned varint at ``pos`` (at most 5 bytes: 32 bits) and the position after it."""
    byte = frame[pos]
    if byte < 0x80:
        return byte, pos + 1
    value = byte & 0x7F
    for shift in (7, 14, 21, 28):
        pos += 1
        byte = frame[pos]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos + 1
    raise _Reject


def _no_tags(frame: bytes | bytearray, pos: int) -> int:
    """The position after an empty tagged-field section; one with fields is the grammar's."""
    if frame[pos] != 0:
        raise _Reject
    return pos + 1


def decode_produce_request(frame: bytes | bytearray) -> Request | None:
    """The Produce request in ``frame`` (size prefix included), or ``None``.

    ``None`` means "decode it with :func:`kproto.decode_request`": the frame is
    not a Produce v0-v8 request this decoder reads to the last byte.  The
    size prefix must already be validated against the maximum request size
    (the network layer's frame decoder does).
    """
    try:
        return _decode(frame)
    except _DECLINED:
        return None


def _string(frame: bytes | bytearray, pos: int, n: int, end: int, nullable: bool) -> tuple[str | None, int]:
    """The string of length ``n`` at ``pos`` and the position after it."""
    if n < 0:
        if n == -1 and nullable:
            return None, pos
        raise _Reject
    stop = pos + n
    if stop > end:
        raise _Reject
    return frame[pos:stop].decode("utf-8") if n else "", stop


def _topic_head(frame: bytes | bytearray, pos: int, end: int) -> tuple[str, int, int]:
    """A topic entry's name and partition count (requests and responses alike), and the
    position after them."""
    (n,) = _I16.unpack_from(frame, pos)
    name, pos = _string(frame, pos + 2, n, end, False)
    (count,) = _I32.unpack_from(frame, pos)
    if count < 0:
        raise _Reject
    return name, count, pos + 4  # type: ignore[return-value]  # not nullable: _string raised


def _decode(frame: bytes | bytearray) -> Request:
    size, api_key, version, correlation_id, n = _HEAD.unpack_from(frame, 0)
    end = len(frame)
    if api_key != _PRODUCE or not 0 <= version <= BROKER_MAX_VERSION or size != end - 4:
        raise _Reject
    client_id, pos = _string(frame, 14, n, end, True)
    if version >= FIRST_FLEXIBLE:
        return _decode_flexible(frame, version, correlation_id, client_id, _no_tags(frame, pos))
    transactional_id = None
    if version >= 3:
        (n,) = _I16.unpack_from(frame, pos)
        transactional_id, pos = _string(frame, pos + 2, n, end, True)
    acks, timeout_ms, topics = _ACKS_TIMEOUT_COUNT.unpack_from(frame, pos)
    pos += 10
    if topics < 0:
        raise _Reject
    view = memoryview(frame)
    topic_data = []
    try:
        for _ in range(topics):
            name, count, pos = _topic_head(frame, pos, end)
            partitions = []
            for _ in range(count):
                index, n = _I32_I32.unpack_from(frame, pos)
                pos += 8
                if n < 0:
                    if n != -1:
                        raise _Reject
                    partitions.append(PartitionProduceData(index, None))
                    continue
                stop = pos + n
                if stop > end:
                    raise _Reject
                partitions.append(PartitionProduceData(index, bytearray(view[pos:stop])))
                pos = stop
            topic_data.append(TopicProduceData(name, partitions))
    finally:
        view.release()
    if pos != end:
        raise _Reject
    return _request(
        version, correlation_id, client_id, ProduceRequestData(transactional_id, acks, timeout_ms, topic_data)
    )


def _request(version: int, correlation_id: int, client_id: str | None, body: ProduceRequestData) -> Request:
    request: Request = _new(Request)
    # Request is a frozen dataclass, whose __init__ sets each field through
    # object.__setattr__ (2-3 µs); filling the instance dict directly is the same object.
    request.__dict__.update(
        api_key=_PRODUCE,
        version=version,
        correlation_id=correlation_id,
        client_id=client_id,
        body=body,
        header_tagged_fields=_EMPTY,
    )
    return request


def _decode_flexible(
    frame: bytes | bytearray, version: int, correlation_id: int, client_id: str | None, pos: int
) -> Request:
    """The body of a v9+ request, from ``pos`` (after the header's tagged fields)."""
    end = len(frame)
    n, pos = _uvarint(frame, pos)
    transactional_id, pos = _string(frame, pos, n - 1, end, True)
    acks, timeout_ms = _I16_I32.unpack_from(frame, pos)
    topics, pos = _uvarint(frame, pos + 6)
    if topics == 0:  # a null array
        raise _Reject
    by_id = version >= FIRST_TOPIC_ID
    view = memoryview(frame)
    topic_data = []
    try:
        for _ in range(topics - 1):
            name: str | None = ""
            if by_id:
                topic_id, pos = bytes(frame[pos : pos + 16]), pos + 16
                if pos > end:
                    raise _Reject
            else:
                n, pos = _uvarint(frame, pos)
                name, pos = _string(frame, pos, n - 1, end, False)
                topic_id = b""
            count, pos = _uvarint(frame, pos)
            if count == 0:
                raise _Reject
            partitions = []
            for _ in range(count - 1):
                (index,) = _I32.unpack_from(frame, pos)
                n, pos = _uvarint(frame, pos + 4)
                if n == 0:
                    records = None
                else:
                    stop = pos + n - 1
                    if stop > end:
                        raise _Reject
                    records = bytearray(view[pos:stop])
                    pos = stop
                partitions.append(PartitionProduceData(index, records))
                pos = _no_tags(frame, pos)
            topic_data.append(TopicProduceData(name, partitions, topic_id))  # type: ignore[arg-type]  # not null
            pos = _no_tags(frame, pos)
    finally:
        view.release()
    if _no_tags(frame, pos) != end:
        raise _Reject
    return _request(
        version, correlation_id, client_id, ProduceRequestData(transactional_id, acks, timeout_ms, topic_data)
    )


_PARTITION = struct.Struct(">ihq")  # index, error_code, base_offset
_PARTITION_V2 = struct.Struct(">ihqq")  # + log_append_time_ms
_PARTITION_V5 = struct.Struct(">ihqqq")  # + log_start_offset
_V8_TAIL = struct.Struct(">ih").pack(0, -1)  # no record errors, null error message

PartitionResult = tuple[int, int, int, int]
"""``(index, error_code, base_offset, log_start_offset)`` of one partition's append."""


def encode_produce_response(
    version: int,
    correlation_id: int,
    responses: Sequence[tuple[str | bytes, list[PartitionResult]]],
    *,
    throttle_time_ms: int = 0,
    log_append_times: Mapping[tuple[Any, int], int] | None = None,
    error_messages: Mapping[tuple[Any, int], str] | None = None,
) -> bytes:
    """The Produce response frame of ``version`` (0-13, size prefix included).

    Each topic is its name, or from v13 its 16-byte id.  ``log_append_time_ms``
    (v2+) is the stamp ``log_append_times`` gives a (topic, partition) of a
    LogAppendTime topic, else -1; per-record errors are empty, and the error
    message (v8) is what ``error_messages`` gives a (topic, partition), else null.
    """
    out = bytearray(_I32_I32.pack(0, correlation_id))
    if version >= FIRST_FLEXIBLE:
        _flexible_response(out, responses, log_append_times, version >= FIRST_TOPIC_ID)
        out += _I32.pack(throttle_time_ms)
        out.append(0)  # no tagged fields
        _I32.pack_into(out, 0, len(out) - 4)
        return bytes(out)
    out += _I32.pack(len(responses))
    for name, partitions in responses:
        if not isinstance(name, str):
            raise ValueError(f"Produce response v{version} names its topics")
        raw = name.encode("utf-8")
        out += _I16.pack(len(raw))
        out += raw
        out += _I32.pack(len(partitions))
        for index, code, base, start in partitions:
            stamp = log_append_times.get((name, index), -1) if log_append_times else -1
            if version >= 5:
                out += _PARTITION_V5.pack(index, code, base, stamp, start)
                if version >= 8:
                    message = error_messages.get((name, index)) if error_messages else None
                    if message is None:
                        out += _V8_TAIL
                    else:
                        text = message.encode("utf-8")
                        out += _I32.pack(0) + _I16.pack(len(text)) + text
            elif version >= 2:
                out += _PARTITION_V2.pack(index, code, base, stamp)
            else:
                out += _PARTITION.pack(index, code, base)
    if version >= 1:
        out += _I32.pack(throttle_time_ms)
    _I32.pack_into(out, 0, len(out) - 4)
    return bytes(out)


_FLEXIBLE_TAIL = b"\x01\x00\x00"  # no record errors, null error message, no tagged fields


def _flexible_response(
    out: bytearray,
    responses: Sequence[tuple[str | bytes, list[PartitionResult]]],
    log_append_times: Mapping[tuple[Any, int], int] | None,
    by_id: bool,
) -> None:
    """The v9+ body up to ``throttle_time_ms``, after a header without tagged fields."""
    out.append(0)  # the response header's tagged fields
    out += uvarint_bytes(len(responses) + 1)
    for name, partitions in responses:
        if by_id:
            if not isinstance(name, (bytes, bytearray)) or len(name) != 16:
                raise ValueError(f"Produce response v13+ gives topic ids (16 bytes), not {name!r}")
            out += name
        elif isinstance(name, str):
            raw = name.encode("utf-8")
            out += uvarint_bytes(len(raw) + 1)
            out += raw
        else:
            raise ValueError("Produce response before v13 names its topics")
        out += uvarint_bytes(len(partitions) + 1)
        for index, code, base, start in partitions:
            stamp = log_append_times.get((name, index), -1) if log_append_times else -1
            out += _PARTITION_V5.pack(index, code, base, stamp, start)
            out += _FLEXIBLE_TAIL
        out.append(0)


# ---------------------------------------------------------------- the producer's half

_REQUEST_HEAD = struct.Struct(">ihhi")  # size (patched at the end), api key, version, correlation id
_RESPONSE_HEAD = struct.Struct(">iii")  # size, correlation id, topic count
_I16_I32 = struct.Struct(">hi")  # acks, timeout_ms


def _put_string(out: list[bytes], text: str | None) -> int:
    """Append a (nullable) int16-prefixed string to ``out``; its encoded length."""
    if text is None:
        out.append(b"\xff\xff")
        return 2
    raw = text.encode("utf-8")
    out.append(_I16.pack(len(raw)))
    out.append(raw)
    return 2 + len(raw)


def encode_produce_request(
    version: int,
    correlation_id: int,
    client_id: str | None,
    acks: int,
    timeout_ms: int,
    topics: Sequence[tuple[str | bytes, list[tuple[int, bytes | None]]]],
    transactional_id: str | None = None,
) -> bytes:
    """The Produce request frame of ``version`` (0-13, size prefix included).

    ``topics`` is ``[(topic, [(partition, records or None), ...]), ...]``, each
    topic its name, or from v13 its 16-byte id (ValueError for the other
    kind: the caller's bug); ``transactional_id`` is written from v3 on, as
    the grammar does.  Raises ``struct.error`` for a value out of its
    field's range (the grammar raises EncodeError; a producer never builds
    such a request).
    """
    if not 0 <= version <= MAX_VERSION:
        raise ValueError(f"Produce v{version} is not v0-v{MAX_VERSION}")
    out: list[bytes] = [b""]  # the head, filled in once the size is known
    size = 8 + _put_string(out, client_id)  # api key, version, correlation id, client id
    if version >= FIRST_FLEXIBLE:
        by_id = version >= FIRST_TOPIC_ID
        size += _flexible_request(out, acks, timeout_ms, topics, transactional_id, by_id)
        out[0] = _REQUEST_HEAD.pack(size, _PRODUCE, version, correlation_id)
        return b"".join(out)
    if version >= 3:
        size += _put_string(out, transactional_id)
    out.append(_ACKS_TIMEOUT_COUNT.pack(acks, timeout_ms, len(topics)))
    size += 10
    for name, partitions in topics:
        if not isinstance(name, str):
            raise ValueError(f"Produce request v{version} names its topics")
        size += _put_string(out, name) + 4
        out.append(_I32.pack(len(partitions)))
        for index, records in partitions:
            if records is None:
                out.append(_I32_I32.pack(index, -1))
                size += 8
            else:
                out.append(_I32_I32.pack(index, len(records)))
                out.append(records)
                size += 8 + len(records)
    out[0] = _REQUEST_HEAD.pack(size, _PRODUCE, version, correlation_id)
    return b"".join(out)


def _flexible_request(
    out: list[bytes],
    acks: int,
    timeout_ms: int,
    topics: Sequence[tuple[str | bytes, list[tuple[int, bytes | None]]]],
    transactional_id: str | None,
    by_id: bool,
) -> int:
    """Append a v9+ request after its client id (the header's tagged fields on); its size.
    Topics are 16-byte ids when ``by_id`` (v13+), names before."""
    first = len(out)
    append = out.append
    append(b"\x00")  # the header's tagged fields
    if transactional_id is None:
        append(b"\x00")
    else:
        raw = transactional_id.encode("utf-8")
        append(uvarint_bytes(len(raw) + 1))
        append(raw)
    append(_I16_I32.pack(acks, timeout_ms))
    append(uvarint_bytes(len(topics) + 1))
    for topic, partitions in topics:
        if by_id:
            if not isinstance(topic, (bytes, bytearray)) or len(topic) != 16:
                raise ValueError(f"Produce request v13+ gives topic ids (16 bytes), not {topic!r}")
            append(topic)
        elif isinstance(topic, str):
            raw = topic.encode("utf-8")
            append(uvarint_bytes(len(raw) + 1))
            append(raw)
        else:
            raise ValueError("Produce request before v13 names its topics")
        append(uvarint_bytes(len(partitions) + 1))
        for index, records in partitions:
            append(_I32.pack(index))
            if records is None:
                append(b"\x00\x00")  # null records, no tagged fields
            else:
                append(uvarint_bytes(len(records) + 1))
                append(records)
                append(b"\x00")  # the partition's tagged fields
        append(b"\x00")  # the topic's tagged fields
    append(b"\x00")  # the body's tagged fields
    return sum(map(len, out[first:]))


class PartitionAck(NamedTuple):
    """One partition's answer to a Produce request, as a producer needs it.

    ``log_append_time_ms`` is -1 before v2 and for CreateTime topics;
    ``error_message`` is ``None`` before v8.  From v13 the answer names a
    topic by its 16-byte ``topic_id``, and ``topic`` is the name the
    decoder's ``names`` give that id (the producer sent the ids), else "".
    """

    topic: str
    partition: int
    error_code: int
    base_offset: int
    log_append_time_ms: int
    error_message: str | None
    topic_id: bytes = b""  # v13+


def decode_produce_response(
    version: int, frame: bytes | bytearray, names: Mapping[bytes, str] | None = None
) -> list[PartitionAck] | None:
    """The partitions' answers in a Produce response frame (size prefix included), or ``None``.

    From v13 each ack's ``topic`` is ``names[topic_id]`` ("" without).
    ``None`` means "decode it with :func:`kproto.decode_response`": anything
    this decoder does not read to the last byte, including v8 per-record
    errors (a broker rejecting single records; rare, and the grammar reads
    them).  Like the broker's decoder, it never raises.
    """
    if not 0 <= version <= MAX_VERSION:
        return None
    try:
        if version >= FIRST_FLEXIBLE:
            by_id = version >= FIRST_TOPIC_ID
            return _decode_flexible_response(
                frame, (_NO_NAMES if names is None else names) if by_id else None
            )
        return _decode_response(version, frame)
    except _DECLINED:
        return None


def _decode_flexible_response(
    frame: bytes | bytearray, names: Mapping[bytes, str] | None
) -> list[PartitionAck]:
    """A v9+ answer; ``names`` (v13+, possibly empty) says topics are ids and names them."""
    size, _correlation_id = _I32_I32.unpack_from(frame, 0)
    end = len(frame)
    if size != end - 4:
        raise _Reject
    topics, pos = _uvarint(frame, _no_tags(frame, 8))
    if topics == 0:
        raise _Reject
    acks: list[PartitionAck] = []
    step = _PARTITION_V5.size
    for _ in range(topics - 1):
        if names is not None:
            topic_id, pos = bytes(frame[pos : pos + 16]), pos + 16
            if pos > end:
                raise _Reject
            name: str | None = names.get(topic_id, "")
        else:
            n, pos = _uvarint(frame, pos)
            name, pos = _string(frame, pos, n - 1, end, False)
            topic_id = b""
        count, pos = _uvarint(frame, pos)
        if count == 0:
            raise _Reject
        for _ in range(count - 1):
            index, code, base, stamp, _start = _PARTITION_V5.unpack_from(frame, pos)
            errors, pos = _uvarint(frame, pos + step)
            if errors != 1:  # per-record errors (or a null array): the grammar's job
                raise _Reject
            n, pos = _uvarint(frame, pos)
            message, pos = _string(frame, pos, n - 1, end, True)
            pos = _no_tags(frame, pos)  # v10's current leader: the grammar's job
            acks.append(PartitionAck(name, index, code, base, stamp, message, topic_id))  # type: ignore[arg-type]
        pos = _no_tags(frame, pos)
    if _no_tags(frame, pos + 4) != end:  # after throttle_time_ms; v10's node endpoints: the grammar's
        raise _Reject
    return acks


def _decode_response(version: int, frame: bytes | bytearray) -> list[PartitionAck]:
    size, _correlation_id, topics = _RESPONSE_HEAD.unpack_from(frame, 0)
    end = len(frame)
    if size != end - 4 or topics < 0:
        raise _Reject
    pos = 12
    acks: list[PartitionAck] = []
    layout = _PARTITION_V5 if version >= 5 else _PARTITION_V2 if version >= 2 else _PARTITION
    step = layout.size
    for _ in range(topics):
        name, count, pos = _topic_head(frame, pos, end)
        for _ in range(count):
            fields = layout.unpack_from(frame, pos)
            pos += step
            message = None
            if version >= 8:
                (errors,) = _I32.unpack_from(frame, pos)
                if errors != 0:  # per-record errors (or a null array): the grammar's job
                    raise _Reject
                (n,) = _I16.unpack_from(frame, pos + 4)
                message, pos = _string(frame, pos + 6, n, end, True)
            acks.append(
                PartitionAck(
                    name,
                    fields[0],
                    fields[1],
                    fields[2],
                    fields[3] if version >= 2 else -1,
                    message,
                )
            )
    if version >= 1:
        pos += 4  # throttle_time_ms
    if pos != end:
        raise _Reject
    return acks


def produce_acks(
    version: int, frame: bytes | bytearray, names: Mapping[bytes, str] | None = None
) -> list[PartitionAck]:
    """The partitions' answers in a Produce response frame: the fast decoder, or the
    grammar for what it declines (raising :class:`kproto.DecodeError` as the grammar does);
    from v13 ``names`` name the topic ids."""
    acks = decode_produce_response(version, frame, names)
    if acks is not None:
        return acks
    return acks_from_body(version, decode_response(_PRODUCE, version, bytes(frame)).body, names)


def acks_from_body(version: int, body: Any, names: Mapping[bytes, str] | None = None) -> list[PartitionAck]:
    """A Produce response body decoded by the grammar, as :class:`PartitionAck` rows
    (from v13 each topic named by ``names``, "" for an id they lack)."""
    by_id = version >= FIRST_TOPIC_ID
    names = names or {}
    return [
        PartitionAck(
            names.get(bytes(t.topic_id), "") if by_id else t.name,
            p.index,
            p.error_code,
            p.base_offset,
            p.log_append_time_ms if version >= 2 else -1,
            p.error_message if version >= 8 else None,
            bytes(t.topic_id) if by_id else b"",
        )
        for t in body.responses
        for p in t.partition_responses
    ]
