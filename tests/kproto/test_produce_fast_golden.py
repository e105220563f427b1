"""The Produce struct fast path against kafka-python's JSON-driven codec, an independent peer.

``test_produce_fast.py`` proves the fast path equal to kproto's own grammar; this
module checks both against bytes that kafka-python 3 builds from Apache's message
specs, at every version the fast path handles, the flexible v9-v13 above all (compact
lengths, tagged-field sections, request header v2 and response header v1, v13's 16-byte
topic ids in place of names): the
producer's request encoding and the broker's response encoding must be kafka-python's
bytes exactly, and each fast decoder must read kafka-python's bytes to the values they
were built from.  A v10+ response that carries the tagged ``current_leader`` (a leader
change, written here by kproto's grammar) is declined by the fast decoder and read by
the grammar.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka_python_json import to_theirs
from test_produce_fast import DECLARED, INT16, INT32, INT64, TEXT, TOPIC_ID, body

import kproto
from kproto import ApiKey
from kproto.messages import produce
from kproto.produce_fast import (
    FIRST_FLEXIBLE,
    FIRST_TOPIC_ID,
    PartitionAck,
    decode_produce_request,
    decode_produce_response,
    encode_produce_request,
    encode_produce_response,
    produce_acks,
)

VERSIONS = st.sampled_from(DECLARED)


def _tagged(value: dict[str, Any], version: int) -> dict[str, Any]:
    """``value`` with empty tagged-field sections where a flexible version has them."""
    if version < FIRST_FLEXIBLE:
        return value
    out = {k: [_tagged(i, version) for i in v] if isinstance(v, list) else v for k, v in value.items()}
    return {**out, "tagged_fields": {}}


def _their_request(version: int, cid: int, client_id: str | None, b: dict[str, Any]) -> bytes:
    theirs = to_theirs(produce.REQUEST, version, _tagged(b, version))
    theirs.with_header(correlation_id=cid, client_id=client_id)
    return bytes(theirs.encode(header=True, framed=True))


@settings(max_examples=300)
@given(VERSIONS, INT32, st.one_of(st.none(), TEXT), body)
def test_requests_are_kafka_pythons_bytes(
    version: int, cid: int, client_id: str | None, b: dict[str, Any]
) -> None:
    theirs = _their_request(version, cid, client_id, b)
    key = "topic_id" if version >= FIRST_TOPIC_ID else "name"
    topics = [(t[key], [(p["index"], p["records"]) for p in t["partition_data"]]) for t in b["topic_data"]]
    ours = encode_produce_request(
        version, cid, client_id, b["acks"], b["timeout_ms"], topics, b["transactional_id"]
    )
    assert ours == theirs
    decoded = decode_produce_request(theirs)
    assert decoded is not None
    assert (decoded.api_key, decoded.version, decoded.correlation_id, decoded.client_id) == (
        ApiKey.PRODUCE,
        version,
        cid,
        client_id,
    )
    read = [
        (
            t.name if version < FIRST_TOPIC_ID else bytes(t.topic_id),
            [(p.index, None if p.records is None else bytes(p.records)) for p in t.partition_data],
        )
        for t in decoded.body.topic_data
    ]
    assert read == topics
    assert (decoded.body.acks, decoded.body.timeout_ms) == (b["acks"], b["timeout_ms"])
    assert decoded.body.transactional_id == (b["transactional_id"] if version >= 3 else None)


partition_result = st.tuples(INT32, INT16, INT64, INT64)
results = st.lists(st.tuples(TEXT, TOPIC_ID, st.lists(partition_result, max_size=4)), max_size=3)


def _keyed(rs: Any, version: int) -> list[tuple[str | bytes, Any]]:
    """``(name, topic id, partitions)`` rows as the fast path takes them: by name, by id from v13."""
    return [
        (topic_id if version >= FIRST_TOPIC_ID else name, partitions) for name, topic_id, partitions in rs
    ]


def _response_body(
    rs: list[tuple[str, bytes, list[tuple[int, int, int, int]]]], throttle: int
) -> dict[str, Any]:
    return {
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


def _their_response(version: int, cid: int, b: dict[str, Any]) -> bytes:
    theirs = to_theirs(produce.RESPONSE, version, _tagged(b, version))
    theirs.with_header(correlation_id=cid)
    return bytes(theirs.encode(header=True, framed=True))


@settings(max_examples=300)
@given(VERSIONS, INT32, results, INT32)
def test_responses_are_kafka_pythons_bytes(version: int, cid: int, rs: Any, throttle: int) -> None:
    theirs = _their_response(version, cid, _response_body(rs, throttle))
    assert encode_produce_response(version, cid, _keyed(rs, version), throttle_time_ms=throttle) == theirs
    by_id = version >= FIRST_TOPIC_ID
    expected = [
        PartitionAck("" if by_id else name, index, code, base, -1, None, topic_id if by_id else b"")
        for name, topic_id, partitions in rs
        for index, code, base, _ in partitions
    ]
    assert decode_produce_response(version, theirs) == expected


_ID = bytes(range(1, 17))


@pytest.mark.parametrize("version", [v for v in DECLARED if v >= 10])
def test_a_new_leader_in_a_response_is_read_by_the_grammar(version: int) -> None:
    b = _response_body([("t", _ID, [(0, 6, -1, -1)])], 0)  # NOT_LEADER_OR_FOLLOWER
    partition = b["responses"][0]["partition_responses"][0]
    tagged = _tagged(b, version)
    tagged["responses"][0]["partition_responses"][0]["tagged_fields"] = {
        "current_leader": {"leader_id": 2, "leader_epoch": 7, "tagged_fields": {}}
    }
    frame = kproto.encode_response(ApiKey.PRODUCE, version, 9, tagged)
    assert frame != _their_response(version, 9, b), "the tagged field is written"
    assert decode_produce_response(version, frame) is None
    topic_id = _ID if version >= FIRST_TOPIC_ID else b""
    expected = PartitionAck("t", 0, 6, -1, -1, partition["error_message"], topic_id)
    assert produce_acks(version, frame, {_ID: "t"}) == [expected], (
        "named from its id on the grammar's path too"
    )


@pytest.mark.parametrize("version", [v for v in DECLARED if v >= FIRST_FLEXIBLE])
def test_a_request_with_tagged_fields_is_read_by_the_grammar(version: int) -> None:
    partition = {"index": 0, "records": b"x", "tagged_fields": {5: b"\x01"}}  # a tag Kafka may add one day
    b = {
        "transactional_id": None,
        "acks": 1,
        "timeout_ms": 100,
        "topic_data": [{"name": "t", "topic_id": _ID, "partition_data": [partition], "tagged_fields": {}}],
        "tagged_fields": {},
    }
    frame = kproto.encode_request(ApiKey.PRODUCE, version, 1, b, client_id="c")
    assert decode_produce_request(frame) is None
    assert bytes(kproto.decode_request(frame).body.topic_data[0].partition_data[0].records) == b"x"


def test_v13_names_topics_by_id_exactly_as_kafka_python_does() -> None:
    """One fixed v13 exchange (topic ids, a transactional id, null and real records), both ways:
    not left to the draw of the property tests above."""
    other = bytes(range(100, 116))
    b = {
        "transactional_id": "txn",
        "acks": -1,
        "timeout_ms": 30_000,
        "topic_data": [
            {"name": "orders", "topic_id": _ID, "partition_data": [{"index": 0, "records": b"\x07" * 40}]},
            {"name": "audit", "topic_id": other, "partition_data": [{"index": 3, "records": None}]},
        ],
    }
    theirs = _their_request(13, 77, "producer-1", b)
    topics = [(_ID, [(0, b"\x07" * 40)]), (other, [(3, None)])]
    assert encode_produce_request(13, 77, "producer-1", -1, 30_000, topics, "txn") == theirs
    assert _ID in theirs and b"orders" not in theirs, "v13 carries the id, not the name"
    rs = [
        ("orders", _ID, [(0, 0, 42, 0)]),
        ("audit", other, [(3, 3, -1, -1)]),
    ]  # 3: UNKNOWN_TOPIC_OR_PARTITION
    frame = _their_response(13, 77, _response_body(rs, 5))
    assert encode_produce_response(13, 77, _keyed(rs, 13), throttle_time_ms=5) == frame
    assert (
        decode_produce_response(13, frame)
        == produce_acks(13, frame)
        == [
            PartitionAck("", 0, 0, 42, -1, None, _ID),
            PartitionAck("", 3, 3, -1, -1, None, other),
        ]
    )
    named = [PartitionAck("orders", 0, 0, 42, -1, None, _ID), PartitionAck("", 3, 3, -1, -1, None, other)]
    assert decode_produce_response(13, frame, {_ID: "orders"}) == named, "the ids the producer sent, named"
