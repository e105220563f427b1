"""Golden vectors from an independent implementation: kafka-python 3.0.12's
classic protocol classes (``kafka.protocol.old``).

For every API and version kproto declares, with values generated from the
declarations: kafka-python's frame and kproto's frame are byte-identical,
kproto decodes kafka-python's bytes to the same values, and kafka-python
decodes kproto's bytes to the same values.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.protocol.old import commit, fetch, find_coordinator, list_offsets, metadata, produce
from kafka.protocol.old.api import RequestHeader, ResponseHeader
from kproto_strategies import (
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

KAFKA_PYTHON: dict[int, tuple[Any, Any]] = {
    0: (produce.ProduceRequest, produce.ProduceResponse),
    1: (fetch.FetchRequest, fetch.FetchResponse),
    2: (list_offsets.ListOffsetsRequest, list_offsets.ListOffsetsResponse),
    3: (metadata.MetadataRequest, metadata.MetadataResponse),
    8: (commit.OffsetCommitRequest, commit.OffsetCommitResponse),
    9: (commit.OffsetFetchRequest, commit.OffsetFetchResponse),
    10: (find_coordinator.FindCoordinatorRequest, find_coordinator.FindCoordinatorResponse),
}

INT32 = st.integers(-(2**31), 2**31 - 1)


def _framed(*parts: bytes) -> bytes:
    payload = b"".join(parts)
    return len(payload).to_bytes(4, "big") + payload


def test_every_declared_api_has_a_golden_counterpart() -> None:
    assert set(KAFKA_PYTHON) == {m.api_key for m, _ in REQUEST_VERSIONS}


@pytest.mark.parametrize(("msg", "version"), REQUEST_VERSIONS, ids=ids(REQUEST_VERSIONS))
@given(data=st.data(), correlation_id=INT32, client_id=st.none() | st.text(max_size=8))
def test_request_bytes_match_kafka_python(
    msg: Message, version: int, data: st.DataObject, correlation_id: int, client_id: str | None
) -> None:
    body = data.draw(message_strategy(msg, version))
    cls = KAFKA_PYTHON[msg.api_key][0][version]
    theirs_body = cls(*to_positional(msg.fields, version, body)).encode()
    theirs = _framed(RequestHeader(msg.api_key, version, correlation_id, client_id).encode(), theirs_body)
    ours = kproto.encode_request(msg.api_key, version, correlation_id, body, client_id=client_id)
    assert ours == theirs
    decoded = kproto.decode_request(theirs)
    assert plain(decoded.body) == body and decoded.client_id == client_id
    header_len = 4 + 8 + 2 + len((client_id or "").encode()) if client_id is not None else 4 + 10
    assert from_positional(msg.fields, version, cls.decode(ours[header_len:])) == body


@pytest.mark.parametrize(("msg", "version"), RESPONSE_VERSIONS, ids=ids(RESPONSE_VERSIONS))
@given(data=st.data(), correlation_id=INT32)
def test_response_bytes_match_kafka_python(
    msg: Message, version: int, data: st.DataObject, correlation_id: int
) -> None:
    body = data.draw(message_strategy(msg, version))
    cls = KAFKA_PYTHON[msg.api_key][1][version]
    theirs = _framed(
        ResponseHeader(correlation_id).encode(),
        cls(*to_positional(msg.fields, version, body)).encode(),
    )
    ours = kproto.encode_response(msg.api_key, version, correlation_id, body)
    assert ours == theirs
    assert plain(kproto.decode_response(msg.api_key, version, theirs).body) == body
    assert from_positional(msg.fields, version, cls.decode(ours[8:])) == body
