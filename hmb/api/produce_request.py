"""Produce v0-v8 with ``struct``: the request decoded, the response encoded.

Produce is the request a busy producer sends thousands of times a second;
through the Construct grammar its decode cost ~30 µs and its response ~20 µs,
more than the append itself.  Here both are a handful of ``struct`` calls.
The grammar in :mod:`kproto.messages.produce` stays the reference: property
tests (``tests/hmb/test_produce_fast_path.py``) check that whatever
:func:`decode_produce_request` accepts, ``kproto.decode_request`` decodes to
the same values, and that :func:`encode_produce_response` is byte for byte
``kproto.encode_response`` (DESIGN.md: a struct fast path needs such a proof).

Rules of this module:

* The decoder never raises and never decides what is an error: anything it
  does not take in stride (a short frame, a bad length, invalid UTF-8,
  trailing bytes, a version outside 0-8) makes it return ``None``, and the
  caller decodes with Construct, which raises the usual :class:`kproto.DecodeError`.
  So bad input is answered exactly as before.
* Each partition's records are a ``bytearray`` (one copy out of the frame):
  :func:`kproto.records.assign_batches` patches offsets into it in place
  instead of copying it once more.

Produce request v0-v8, header v1 (none of these versions is flexible)::

    size int32, api_key int16, api_version int16, correlation_id int32,
    client_id nullable_string,
    transactional_id nullable_string            (v3+)
    acks int16, timeout_ms int32,
    [name string, [index int32, records nullable_bytes]]

Produce response v0-v8::

    size int32, correlation_id int32,
    [name string,
     [index int32, error_code int16, base_offset int64,
      log_append_time_ms int64                   (v2+)
      log_start_offset int64                     (v5+)
      [record_errors] (always empty here), error_message nullable_string (v8+)]]
    throttle_time_ms int32                       (v1+)
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from kproto import ApiKey, Request

__all__ = [
    "MAX_VERSION",
    "PartitionProduceData",
    "ProduceRequestData",
    "TopicProduceData",
    "decode_produce_request",
    "encode_produce_response",
]

MAX_VERSION = 8

_HEAD = struct.Struct(">ihhih")  # size, api key, version, correlation id, client_id length
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_ACKS_TIMEOUT_COUNT = struct.Struct(">hii")  # acks, timeout_ms, topic count
_I32_I32 = struct.Struct(">ii")  # (partition index, records length) / (size, correlation id)
_EMPTY: dict[object, object] = {}
_new = object.__new__
_PRODUCE = int(ApiKey.PRODUCE)  # a plain int: comparing with an enum member costs a microsecond


class PartitionProduceData(NamedTuple):
    index: int  # type: ignore[assignment]  # shadows tuple.index; the name is the protocol's
    records: bytearray | None


class TopicProduceData(NamedTuple):
    name: str
    partition_data: list[PartitionProduceData]


class ProduceRequestData(NamedTuple):
    """The body of a Produce request (``transactional_id`` is ``None`` before v3)."""

    transactional_id: str | None
    acks: int
    timeout_ms: int
    topic_data: list[TopicProduceData]


class _Reject(Exception):  # noqa: N818 - a signal inside this module, never seen outside
    """Not for the fast path: let the grammar decide."""


def decode_produce_request(frame: bytes | bytearray) -> Request | None:
    """The Produce request in ``frame`` (size prefix included), or ``None``.

    ``None`` means "decode it with :func:`kproto.decode_request`": the frame is
    not a Produce v0-v8 request this decoder reads to the last byte.  The
    size prefix must already be validated against the maximum request size
    (the network layer's frame decoder does).
    """
    try:
        return _decode(frame)
    except (struct.error, UnicodeDecodeError, _Reject):
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


def _decode(frame: bytes | bytearray) -> Request:
    size, api_key, version, correlation_id, n = _HEAD.unpack_from(frame, 0)
    end = len(frame)
    if api_key != _PRODUCE or not 0 <= version <= MAX_VERSION or size != end - 4:
        raise _Reject
    client_id, pos = _string(frame, 14, n, end, True)
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
            (n,) = _I16.unpack_from(frame, pos)
            name, pos = _string(frame, pos + 2, n, end, False)
            (count,) = _I32.unpack_from(frame, pos)
            pos += 4
            if count < 0:
                raise _Reject
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
            topic_data.append(TopicProduceData(name, partitions))  # type: ignore[arg-type]
    finally:
        view.release()
    if pos != end:
        raise _Reject
    request: Request = _new(Request)
    # Request is a frozen dataclass, whose __init__ sets each field through
    # object.__setattr__ (2-3 µs); filling the instance dict directly is the same object.
    request.__dict__.update(
        api_key=api_key,
        version=version,
        correlation_id=correlation_id,
        client_id=client_id,
        body=ProduceRequestData(transactional_id, acks, timeout_ms, topic_data),
        header_tagged_fields=_EMPTY,
    )
    return request


_PARTITION = struct.Struct(">ihq")  # index, error_code, base_offset
_PARTITION_V2 = struct.Struct(">ihqq")  # + log_append_time_ms
_PARTITION_V5 = struct.Struct(">ihqqq")  # + log_start_offset
_V8_TAIL = struct.Struct(">ih").pack(0, -1)  # no record errors, null error message

PartitionResult = tuple[int, int, int, int]
"""``(index, error_code, base_offset, log_start_offset)`` of one partition's append."""


def encode_produce_response(
    version: int,
    correlation_id: int,
    responses: list[tuple[str, list[PartitionResult]]],
    *,
    throttle_time_ms: int = 0,
) -> bytes:
    """The Produce response frame of ``version`` (size prefix included).

    ``log_append_time_ms`` is -1 (CreateTime topics), per-record errors are
    empty and the error message null: what this broker always answers.
    """
    out = bytearray(_I32_I32.pack(0, correlation_id))
    out += _I32.pack(len(responses))
    for name, partitions in responses:
        raw = name.encode("utf-8")
        out += _I16.pack(len(raw))
        out += raw
        out += _I32.pack(len(partitions))
        for index, code, base, start in partitions:
            if version >= 5:
                out += _PARTITION_V5.pack(index, code, base, -1, start)
                if version >= 8:
                    out += _V8_TAIL
            elif version >= 2:
                out += _PARTITION_V2.pack(index, code, base, -1)
            else:
                out += _PARTITION.pack(index, code, base)
    if version >= 1:
        out += _I32.pack(throttle_time_ms)
    _I32.pack_into(out, 0, len(out) - 4)
    return bytes(out)
