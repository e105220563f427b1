"""Golden vectors from an independent implementation: kafka-python 3.0.12's
classic protocol classes (``kafka.protocol.old``).

For every API and version kproto declares, with values generated from the
declarations: kafka-python's frame and kproto's frame are byte-identical,
kproto decodes kafka-python's bytes to the same values, and kafka-python
decodes kproto's bytes to the same values.  The header kafka-python puts in
front (v1 or flexible v2 for requests, v0 or flexible v1 for responses;
ApiVersions responses always v0) is kafka-python's own choice, so kproto's
header versions are checked too.

Where kafka-python has no class for a version kproto declares, the pair is
skipped with its reason in :data:`NO_GOLDEN`; nothing is dropped silently.
"""

from __future__ import annotations

from io import BytesIO
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.protocol.old import (
    admin,
    api_versions,
    commit,
    fetch,
    find_coordinator,
    group,
    init_producer_id,
    list_offsets,
    metadata,
    produce,
)
from kafka.protocol.old.types import Array, BitField, Schema
from kproto_strategies import (
    PER_VERSION,
    REQUEST_VERSIONS,
    RESPONSE_VERSIONS,
    from_positional,
    ids,
    message_strategy,
    plain,
    to_positional,
)

import kproto
from kproto.schema import Message

KAFKA_PYTHON: dict[int, tuple[list[Any], list[Any]]] = {
    0: (produce.ProduceRequest, produce.ProduceResponse),
    1: (fetch.FetchRequest, fetch.FetchResponse),
    2: (list_offsets.ListOffsetsRequest, list_offsets.ListOffsetsResponse),
    3: (metadata.MetadataRequest, metadata.MetadataResponse),
    8: (commit.OffsetCommitRequest, commit.OffsetCommitResponse),
    9: (commit.OffsetFetchRequest, commit.OffsetFetchResponse),
    10: (find_coordinator.FindCoordinatorRequest, find_coordinator.FindCoordinatorResponse),
    11: (group.JoinGroupRequest, group.JoinGroupResponse),
    12: (group.HeartbeatRequest, group.HeartbeatResponse),
    13: (group.LeaveGroupRequest, group.LeaveGroupResponse),
    14: (group.SyncGroupRequest, group.SyncGroupResponse),
    15: (admin.DescribeGroupsRequest, admin.DescribeGroupsResponse),
    16: (admin.ListGroupsRequest, admin.ListGroupsResponse),
    18: (api_versions.ApiVersionsRequest, api_versions.ApiVersionsResponse),
    19: (admin.CreateTopicsRequest, admin.CreateTopicsResponse),
    20: (admin.DeleteTopicsRequest, admin.DeleteTopicsResponse),
    22: (init_producer_id.InitProducerIdRequest, init_producer_id.InitProducerIdResponse),
}

_NO_FLEXIBLE_INIT = "kafka-python's classes stop at InitProducerId v1; see test_init_producer_id_flexible"

# (api key, version, "request" | "response") -> why there is no golden vector.
NO_GOLDEN: dict[tuple[int, int, str], str] = {
    (19, 4, "request"): "kafka-python declares CreateTopics v0-v3 only",
    (19, 4, "response"): "kafka-python declares CreateTopics v0-v3 only",
    (15, 4, "request"): "kafka-python declares DescribeGroups v0-v3 only",
    (15, 4, "response"): "kafka-python declares DescribeGroups v0-v3 only",
    (22, 2, "request"): _NO_FLEXIBLE_INIT,
    (22, 2, "response"): _NO_FLEXIBLE_INIT,
    (22, 3, "request"): _NO_FLEXIBLE_INIT,
    (22, 3, "response"): _NO_FLEXIBLE_INIT,
    (22, 4, "request"): _NO_FLEXIBLE_INIT,
    (22, 4, "response"): _NO_FLEXIBLE_INIT,
}

# kafka-python classes whose API_VERSION attribute is wrong (the layout is right):
# (api key, version, kind) -> the API_VERSION they claim.
MISLABELLED: dict[tuple[int, int, str], int] = {
    (16, 2, "request"): 1,  # ListGroupsRequest_v2.API_VERSION = 1; the body is empty in both
}

INT32 = st.integers(-(2**31), 2**31 - 1)


def _bitfields(schema: Any, values: Any, to_theirs: bool) -> Any:
    """Convert kafka-python's ``BitField`` values (authorized operations).

    kafka-python reads that int32 as a set of bit numbers (``None`` for
    Kafka's "not requested", -2**31); kproto keeps Kafka's int32.
    """
    if schema is BitField:
        if to_theirs:
            return {bit for bit in range(32) if values & (1 << bit)}
        bits = sum(1 << bit for bit in (values if values is not None else {31}))
        return bits - (1 << 32) if bits >= 1 << 31 else bits
    if isinstance(schema, Schema) and values is not None:
        return type(values)(_bitfields(t, v, to_theirs) for t, v in zip(schema.fields, values, strict=False))
    if isinstance(schema, Array) and values is not None:
        return [_bitfields(schema.array_of, v, to_theirs) for v in values]
    return values


def _theirs(cls: Any, grammar: Any, body: Any) -> bytes:
    """kafka-python's encoding of ``body`` (kproto's dict form)."""
    return bytes(cls(*_bitfields(cls.SCHEMA, to_positional(grammar, body), True)).encode())


def _from_theirs(cls: Any, grammar: Any, stream: BytesIO) -> Any:
    """Decode with kafka-python's schema (not ``cls.decode``: kafka-python's
    ApiVersions response falls back to the v0 layout on any error code)."""
    return from_positional(grammar, _bitfields(cls.SCHEMA, cls.SCHEMA.decode(stream), False))


def _framed(*parts: bytes) -> bytes:
    payload = b"".join(parts)
    return len(payload).to_bytes(4, "big") + payload


def _golden_params(pairs: list[tuple[Message, int]], kind: str) -> list[Any]:
    out = []
    for msg, version in pairs:
        reason = NO_GOLDEN.get((msg.api_key, version, kind))
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        out.append(pytest.param(msg, version, marks=marks, id=ids([(msg, version)])[0]))
    return out


def _kafka_python_class(msg: Message, version: int, kind: str) -> Any:
    classes = KAFKA_PYTHON[msg.api_key][0 if kind == "request" else 1]
    cls = classes[version]
    assert cls.API_KEY == msg.api_key
    assert cls.API_VERSION == MISLABELLED.get((msg.api_key, version, kind), version)
    return cls


def test_every_declared_api_has_a_golden_counterpart() -> None:
    assert set(KAFKA_PYTHON) == {m.api_key for m, _ in REQUEST_VERSIONS}
    assert {m.api_key for m, _ in REQUEST_VERSIONS} == {m.api_key for m, _ in RESPONSE_VERSIONS}


def test_every_declared_version_is_golden_or_skipped_with_a_reason() -> None:
    for kind, pairs in (("request", REQUEST_VERSIONS), ("response", RESPONSE_VERSIONS)):
        for msg, version in pairs:
            classes = KAFKA_PYTHON[msg.api_key][0 if kind == "request" else 1]
            has_class = version < len(classes)
            skipped = (msg.api_key, version, kind) in NO_GOLDEN
            assert has_class != skipped, (msg.name, version, "golden-tested xor listed in NO_GOLDEN")


@pytest.mark.parametrize(("msg", "version"), _golden_params(REQUEST_VERSIONS, "request"))
@given(data=st.data(), correlation_id=INT32, client_id=st.none() | st.text(max_size=8))
@PER_VERSION
def test_request_bytes_match_kafka_python(
    msg: Message, version: int, data: st.DataObject, correlation_id: int, client_id: str | None
) -> None:
    body = data.draw(message_strategy(msg, version))
    cls = _kafka_python_class(msg, version, "request")
    grammar = msg.plain_struct(version)
    header = cls.header_class()(msg.api_key, version, correlation_id, client_id).encode()
    theirs = _framed(header, _theirs(cls, grammar, body))
    ours = kproto.encode_request(msg.api_key, version, correlation_id, body, client_id=client_id)
    assert ours == theirs
    decoded = kproto.decode_request(theirs)
    assert plain(decoded.body) == body and decoded.client_id == client_id
    stream = BytesIO(ours[4:])
    cls.parse_header(stream)
    assert _from_theirs(cls, grammar, stream) == body
    assert stream.read() == b""


@pytest.mark.parametrize(("msg", "version"), _golden_params(RESPONSE_VERSIONS, "response"))
@given(data=st.data(), correlation_id=INT32)
@PER_VERSION
def test_response_bytes_match_kafka_python(
    msg: Message, version: int, data: st.DataObject, correlation_id: int
) -> None:
    body = data.draw(message_strategy(msg, version))
    cls = _kafka_python_class(msg, version, "response")
    grammar = msg.plain_struct(version)
    theirs = _framed(
        cls.header_class()(correlation_id).encode(),
        _theirs(cls, grammar, body),
    )
    ours = kproto.encode_response(msg.api_key, version, correlation_id, body)
    assert ours == theirs
    assert plain(kproto.decode_response(msg.api_key, version, theirs).body) == body
    stream = BytesIO(ours[4:])
    cls.parse_header(stream)
    assert _from_theirs(cls, grammar, stream) == body
    assert stream.read() == b""


def test_init_producer_id_flexible() -> None:
    """InitProducerId v2-v4 (flexible; v3 adds producer id and epoch) against hand-made bytes
    from Kafka's JSON spec, since kafka-python has no legacy class for them."""
    from kproto.messages import init_producer_id

    body = {"transactional_id": None, "transaction_timeout_ms": 60000}
    body.update(producer_id=-1, producer_epoch=-1)
    frame = kproto.encode_request(22, 3, 7, body, client_id="c")
    header = b"\x00\x16\x00\x03\x00\x00\x00\x07\x00\x01c\x00"  # request header v2: tagged fields
    assert frame[4:] == header + b"\x00" + (60000).to_bytes(4, "big") + b"\xff" * 8 + b"\xff\xff" + b"\x00"
    assert kproto.encode_request(22, 2, 7, body, client_id="c")[4:] == (
        b"\x00\x16\x00\x02\x00\x00\x00\x07\x00\x01c\x00" + b"\x00" + (60000).to_bytes(4, "big") + b"\x00"
    )
    answer = (7).to_bytes(4, "big") + b"\x00" + bytes(4) + bytes(2) + (5).to_bytes(8, "big") + b"\x00\x01\x00"
    decoded = kproto.decode_response(22, 4, len(answer).to_bytes(4, "big") + answer).body
    assert (decoded.error_code, decoded.producer_id, decoded.producer_epoch) == (0, 5, 1)
    assert init_producer_id.REQUEST.is_flexible(2) and not init_producer_id.REQUEST.is_flexible(1)
