"""The Produce struct fast path, both halves, agrees with the Construct grammar.

A ``struct`` fast path is only trusted with a property test proving it equals the
grammar on generated inputs, at every version it handles: kproto's declared Produce
versions up to ``BROKER_MAX_VERSION`` for the broker's half (v0-v8, the classic
layouts, v9-v12, the flexible ones, v13 with topic ids) and up to ``MAX_VERSION``
for the producer's half (the same versions); a version the grammar declares past a
half is declined and refused by it, and goes through the grammar (checked here too).
Decoding: whatever :func:`decode_produce_request` returns,
``kproto.decode_request`` decodes to the same values, on valid frames and on mutated
ones (where the fast path may only decline, so that the grammar raises the usual
error); and it declines nothing valid without tagged fields.  Encoding:
:func:`encode_produce_response` is byte for byte ``kproto.encode_response``.  The
producer's half likewise: :func:`encode_produce_request` is byte for byte the grammar's
request, and :func:`decode_produce_response` reads what the grammar reads or declines.
Golden vectors from kafka-python, an independent implementation, for the flexible
layouts are in ``test_produce_fast_golden.py``.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kproto
from kproto import ApiKey
from kproto.produce_fast import (
    BROKER_MAX_VERSION,
    FIRST_TOPIC_ID,
    MAX_VERSION,
    PartitionAck,
    acks_from_body,
    decode_produce_request,
    decode_produce_response,
    encode_produce_request,
    encode_produce_response,
    produce_acks,
)
from kproto.registry import REQUESTS

INT16 = st.integers(-(2**15), 2**15 - 1)
INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
DECLARED = range(
    REQUESTS[ApiKey.PRODUCE].min_version, min(REQUESTS[ApiKey.PRODUCE].max_version, MAX_VERSION) + 1
)
BROKER_DECLARED = range(
    REQUESTS[ApiKey.PRODUCE].min_version, min(REQUESTS[ApiKey.PRODUCE].max_version, BROKER_MAX_VERSION) + 1
)
VERSIONS = st.sampled_from(DECLARED)
BROKER_VERSIONS = st.sampled_from(BROKER_DECLARED)
TOPIC_ID = st.binary(min_size=16, max_size=16)

partition = st.fixed_dictionaries({"index": INT32, "records": st.one_of(st.none(), st.binary(max_size=300))})
topic = st.fixed_dictionaries(
    {"name": TEXT, "topic_id": TOPIC_ID, "partition_data": st.lists(partition, max_size=3)}
)
body = st.fixed_dictionaries(
    {
        "transactional_id": st.one_of(st.none(), TEXT),
        "acks": INT16,
        "timeout_ms": INT32,
        "topic_data": st.lists(topic, max_size=3),
    }
)


def _plain(request: kproto.Request) -> dict[str, Any]:
    """A request as plain values, ``transactional_id`` only where the version has it."""
    b = request.body
    out: dict[str, Any] = {
        "api_key": request.api_key,
        "version": request.version,
        "correlation_id": request.correlation_id,
        "client_id": request.client_id,
        "header_tagged_fields": dict(request.header_tagged_fields),
        "acks": b.acks,
        "timeout_ms": b.timeout_ms,
        "topic_data": [
            (
                t.name if request.version < FIRST_TOPIC_ID else bytes(t.topic_id),
                [(p.index, None if p.records is None else bytes(p.records)) for p in t.partition_data],
            )
            for t in b.topic_data
        ],
    }
    if request.version >= 3:
        out["transactional_id"] = b.transactional_id
    return out


def _grammar(frame: bytes) -> kproto.Request | None:
    try:
        return kproto.decode_request(frame)
    except kproto.KprotoError:
        return None


def _agree(frame: bytes) -> None:
    fast = decode_produce_request(frame)
    reference = _grammar(frame)
    if fast is not None:
        assert reference is not None, "the fast path accepted what the grammar refuses"
        assert _plain(fast) == _plain(reference)
        for t in fast.body.topic_data:
            for p in t.partition_data:
                assert p.records is None or isinstance(p.records, bytearray)
    elif reference is not None and reference.api_key == 0 and reference.version in BROKER_DECLARED:
        if not _has_tagged_fields(reference):  # tagged fields are left to the grammar
            pytest.fail("the fast path declined a valid Produce request")


def _has_tagged_fields(request: kproto.Request) -> bool:
    b = request.body
    return bool(
        request.header_tagged_fields
        or b.get("tagged_fields")
        or any(t.get("tagged_fields") for t in b.topic_data)
        or any(p.get("tagged_fields") for t in b.topic_data for p in t.partition_data)
    )


@settings(max_examples=400)
@given(BROKER_VERSIONS, INT32, st.one_of(st.none(), TEXT), body)
def test_valid_requests_decode_as_the_grammar_does(
    version: int, cid: int, client_id: str | None, b: dict[str, Any]
) -> None:
    frame = kproto.encode_request(0, version, cid, b, client_id=client_id)
    fast = decode_produce_request(frame)
    assert fast is not None
    assert _plain(fast) == _plain(kproto.decode_request(frame))


def _reframe(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


@settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow])
@given(BROKER_VERSIONS, INT32, st.one_of(st.none(), TEXT), body, st.data())
def test_mutated_requests_never_decode_differently(
    version: int, cid: int, client_id: str | None, b: dict[str, Any], data: st.DataObject
) -> None:
    frame = kproto.encode_request(0, version, cid, b, client_id=client_id)
    payload = bytearray(frame[4:])
    kind = data.draw(st.sampled_from(["bytes", "int16", "int32", "cut", "extend", "raw-size"]))
    if kind == "bytes":  # overwrite a few bytes anywhere (lengths, counts, UTF-8, the version)
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, len(payload) - 1))
            payload[i] = data.draw(st.integers(0, 255))
    elif kind in ("int16", "int32"):  # a length or count field set to an edge value
        width = 2 if kind == "int16" else 4
        i = data.draw(st.integers(0, max(0, len(payload) - width)))
        value = data.draw(
            st.sampled_from([-2, -1, 0, 1, 2**15 - 1, -(2**15)] if width == 2 else [-2, -1, 0, 1, 2**31 - 1])
        )
        payload[i : i + width] = value.to_bytes(width, "big", signed=True)
    elif kind == "cut":
        del payload[data.draw(st.integers(0, len(payload) - 1)) :]
    elif kind == "extend":
        payload += data.draw(st.binary(min_size=1, max_size=8))
    if kind == "raw-size":  # the size prefix itself is wrong
        frame = struct.pack(">i", len(payload) + data.draw(st.sampled_from([-1, 1, 100]))) + bytes(payload)
    else:
        frame = _reframe(bytes(payload))
    _agree(frame)


@pytest.mark.parametrize("frame", [b"", b"\0\0\0\0", b"\0\0\0\2\0\0", _reframe(b"\0\0\0\x09" + bytes(8))])
def test_short_and_foreign_frames_are_declined(frame: bytes) -> None:
    assert decode_produce_request(frame) is None


def test_other_api_keys_are_declined() -> None:
    frame = kproto.encode_request(3, 1, 1, {"topics": []}, client_id="c")  # Metadata v1
    assert decode_produce_request(frame) is None


partition_result = st.tuples(INT32, INT16, INT64, INT64)
responses = st.lists(st.tuples(TEXT, TOPIC_ID, st.lists(partition_result, max_size=4)), max_size=3)


@settings(max_examples=400)
@given(BROKER_VERSIONS, INT32, responses, INT32)
def test_response_matches_construct_grammar(version: int, cid: int, rs: Any, throttle: int) -> None:
    by_id = version >= FIRST_TOPIC_ID
    keyed = [(topic_id if by_id else name, partitions) for name, topic_id, partitions in rs]
    ours = encode_produce_response(version, cid, keyed, throttle_time_ms=throttle)
    body = {
        "responses": [
            {
                "name": name,
                "topic_id": topic_id,
                "partition_responses": [
                    {
                        "index": index,
                        "error_code": code,
                        "base_offset": base,
                        "log_append_time_ms": -1,
                        "log_start_offset": start,
                        "record_errors": [],
                        "error_message": None,
                    }
                    for index, code, base, start in partitions
                ],
            }
            for name, topic_id, partitions in rs
        ],
        "throttle_time_ms": throttle,
    }
    assert ours == kproto.encode_response(0, version, cid, body)


# ---------------------------------------------------------------- the producer's half


@settings(max_examples=400)
@given(VERSIONS, INT32, st.one_of(st.none(), TEXT), body)
def test_request_encoding_matches_construct_grammar(
    version: int, cid: int, client_id: str | None, b: dict[str, Any]
) -> None:
    key = "topic_id" if version >= FIRST_TOPIC_ID else "name"
    topics = [(t[key], [(p["index"], p["records"]) for p in t["partition_data"]]) for t in b["topic_data"]]
    ours = encode_produce_request(
        version, cid, client_id, b["acks"], b["timeout_ms"], topics, b["transactional_id"]
    )
    assert ours == kproto.encode_request(0, version, cid, b, client_id=client_id)


def test_every_declared_version_is_handled() -> None:
    """Each version kproto declares, explicitly (the property tests draw them at random)."""
    b = {"transactional_id": None, "acks": 1, "timeout_ms": 100, "topic_data": []}
    for version in BROKER_DECLARED:
        frame = kproto.encode_request(0, version, 5, b, client_id="c")
        assert decode_produce_request(frame) is not None, version
        response = {"responses": [], "throttle_time_ms": 0}
        assert encode_produce_response(version, 5, []) == kproto.encode_response(0, version, 5, response)
        if version in DECLARED:  # the producer's half
            assert encode_produce_request(version, 5, "c", 1, 100, []) == frame, version
            assert decode_produce_response(version, kproto.encode_response(0, version, 5, response)) == []


def test_request_encoding_refuses_versions_it_does_not_know() -> None:
    with pytest.raises(ValueError):
        encode_produce_request(MAX_VERSION + 1, 1, "c", 1, 1000, [])


def test_the_producers_half_reaches_topic_ids() -> None:
    """Produce v13, the newest version Kafka defines, is the producer's too (no grammar on its path)."""
    assert MAX_VERSION == BROKER_MAX_VERSION == FIRST_TOPIC_ID == 13
    assert 13 in DECLARED


def test_a_request_refuses_a_topic_key_of_the_wrong_kind() -> None:
    """Names before v13, 16-byte ids from v13: anything else is the caller's bug, not a frame."""
    part = [(0, b"x")]
    for version, key in ((12, b"\x01" * 16), (8, b"\x01" * 16), (13, "topic"), (13, b"short")):
        with pytest.raises(ValueError):
            encode_produce_request(version, 1, "c", 1, 100, [(key, part)])


ack_partition = st.fixed_dictionaries(
    {
        "index": INT32,
        "error_code": INT16,
        "base_offset": INT64,
        "log_append_time_ms": INT64,
        "log_start_offset": INT64,
        "record_errors": st.just([]),
        "error_message": st.one_of(st.none(), TEXT),
    }
)
ack_body = st.fixed_dictionaries(
    {
        "responses": st.lists(
            st.fixed_dictionaries(
                {
                    "name": TEXT,
                    "topic_id": TOPIC_ID,
                    "partition_responses": st.lists(ack_partition, max_size=3),
                }
            ),
            max_size=3,
        ),
        "throttle_time_ms": INT32,
    }
)


def _grammar_acks(version: int, frame: bytes) -> list[PartitionAck] | None:
    try:
        body = kproto.decode_response(0, version, frame).body
    except kproto.KprotoError:
        return None
    return acks_from_body(version, body)


@settings(max_examples=400)
@given(VERSIONS, INT32, ack_body)
def test_valid_responses_decode_as_the_grammar_does(version: int, cid: int, b: dict[str, Any]) -> None:
    frame = kproto.encode_response(0, version, cid, b)
    fast = decode_produce_response(version, frame)
    assert fast is not None
    assert fast == _grammar_acks(version, frame) == produce_acks(version, frame)


@settings(max_examples=1000, suppress_health_check=[HealthCheck.too_slow])
@given(VERSIONS, INT32, ack_body, st.data())
def test_mutated_responses_never_decode_differently(
    version: int, cid: int, b: dict[str, Any], data: st.DataObject
) -> None:
    payload = bytearray(kproto.encode_response(0, version, cid, b)[4:])
    kind = data.draw(st.sampled_from(["bytes", "cut", "extend"]))
    if kind == "bytes" and payload:
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, len(payload) - 1))
            payload[i] = data.draw(st.integers(0, 255))
    elif kind == "cut":
        del payload[data.draw(st.integers(0, len(payload) - 1)) :]
    else:
        payload += data.draw(st.binary(min_size=1, max_size=8))
    frame = _reframe(bytes(payload))
    fast = decode_produce_response(version, frame)
    if fast is not None:
        assert fast == _grammar_acks(version, frame), "the fast path read what the grammar reads otherwise"


def test_per_record_errors_fall_back_to_the_grammar() -> None:
    """v8 record errors (one bad record in a batch) are left to the grammar, and read."""
    body = {
        "responses": [
            {
                "name": "t",
                "partition_responses": [
                    {
                        "index": 0,
                        "error_code": 87,  # INVALID_RECORD
                        "base_offset": -1,
                        "log_append_time_ms": -1,
                        "log_start_offset": 0,
                        "record_errors": [{"batch_index": 3, "batch_index_error_message": "bad"}],
                        "error_message": "one record was bad",
                    }
                ],
            }
        ],
        "throttle_time_ms": 0,
    }
    frame = kproto.encode_response(0, 8, 5, body)
    assert decode_produce_response(8, frame) is None
    assert produce_acks(8, frame) == [PartitionAck("t", 0, 87, -1, -1, "one record was bad")]
    with pytest.raises(kproto.KprotoError):
        produce_acks(8, frame[:-3])


def test_a_response_refuses_a_topic_key_of_the_wrong_kind() -> None:
    """Names before v13, 16-byte ids from v13: anything else is the caller's bug, not a frame."""
    part = [(0, 0, 0, 0)]
    for version, key in ((12, b"\x01" * 16), (8, b"\x01" * 16), (13, "topic"), (13, b"short")):
        with pytest.raises(ValueError):
            encode_produce_response(version, 1, [(key, part)])
