"""Golden vectors from an independent implementation: kafka-python 3.0.12's
JSON-driven codec (``kafka.protocol`` outside ``kafka.protocol.old``).

For every API and version kproto declares that kafka-python can encode,
requests and responses alike, with values generated from kproto's
declarations (tagged fields included, at their defaults or not): the two
frames are byte-identical, kproto decodes kafka-python's bytes to the same
values, and kafka-python decodes kproto's bytes to the same values.  The
headers are part of the frame, so kproto's choice of header version per
(key, version) is checked too (ApiVersions responses: always v0).

kafka-python drops tags it does not know when it encodes, so the bodies
here carry only declared tagged fields; kproto's round trip of unknown tags
is tested in ``test_codec.py``.  A pair kafka-python cannot encode is
skipped with its reason in :data:`NO_GOLDEN`: nothing is dropped silently.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_python_json import CLASSES, decode_theirs, from_theirs, spec_versions, to_theirs
from kproto_strategies import PER_VERSION, REQUEST_VERSIONS, RESPONSE_VERSIONS, ids, message_strategy, plain

import kproto
import kproto.registry
from kproto.schema import Message

# (api key, version, kind) -> why there is no golden vector.
NO_GOLDEN: dict[tuple[int, int, str], str] = {}

# API keys kproto declares from Apache's specs because kafka-python 3.0.12 has
# no class for them (checked by test_keys_without_a_peer_are_the_listed_ones).
NO_PEER: dict[int, str] = {
    38: "CreateDelegationToken: not in kafka-python",
    39: "RenewDelegationToken: not in kafka-python",
    40: "ExpireDelegationToken: not in kafka-python",
    41: "DescribeDelegationToken: not in kafka-python",
    7: "ControlledShutdown: inter-broker, no class in kafka-python",
    64: "UnregisterBroker: not in kafka-python",
    68: "ConsumerGroupHeartbeat: not in kafka-python",
    69: "ConsumerGroupDescribe: not in kafka-python",
    71: "GetTelemetrySubscriptions: not in kafka-python",
    72: "PushTelemetry: not in kafka-python",
    80: "AddRaftVoter: not in kafka-python",
    81: "RemoveRaftVoter: not in kafka-python",
}

INT32 = st.integers(-(2**31), 2**31 - 1)


def _kind(msg: Message) -> str:
    return "request" if msg.name.endswith("Request") else "response"


def _golden_params(pairs: list[tuple[Message, int]]) -> list[Any]:
    out = []
    for msg, version in pairs:
        if msg.api_key in NO_PEER:
            continue
        reason = NO_GOLDEN.get((msg.api_key, version, _kind(msg)))
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        out.append(pytest.param(msg, version, marks=marks, id=ids([(msg, version)])[0]))
    return out


def test_keys_without_a_peer_are_the_listed_ones() -> None:
    declared = {m.api_key for m, _ in REQUEST_VERSIONS}
    assert {key for key in declared if (key, "request") not in CLASSES} == set(NO_PEER)


def test_kafka_python_can_encode_every_version_kproto_declares() -> None:
    """kafka-python encodes any version from 0 to its spec's newest; kproto
    must not declare a version above that for a key both have."""
    for msg, version in REQUEST_VERSIONS + RESPONSE_VERSIONS:
        theirs = spec_versions(msg.api_key, _kind(msg))
        if theirs is not None:
            assert version <= theirs[1], (msg.name, version)


@pytest.mark.parametrize(("msg", "version"), _golden_params(REQUEST_VERSIONS))
@given(data=st.data(), correlation_id=INT32, client_id=st.none() | st.text(max_size=8))
@PER_VERSION
def test_request_bytes_match_kafka_python(
    msg: Message, version: int, data: st.DataObject, correlation_id: int, client_id: str | None
) -> None:
    body = data.draw(message_strategy(msg, version, unknown_tags=False))
    theirs_msg = to_theirs(msg, version, body)
    theirs_msg.with_header(correlation_id=correlation_id, client_id=client_id)
    theirs = bytes(theirs_msg.encode(header=True, framed=True))
    ours = kproto.encode_request(msg.api_key, version, correlation_id, body, client_id=client_id)
    assert ours == theirs
    decoded = kproto.decode_request(theirs)
    assert plain(decoded.body) == body and decoded.client_id == client_id
    back = decode_theirs(msg, version, ours)
    assert back.header.correlation_id == correlation_id and back.header.client_id == client_id
    assert from_theirs(msg, version, back) == body


@pytest.mark.parametrize(("msg", "version"), _golden_params(RESPONSE_VERSIONS))
@given(data=st.data(), correlation_id=INT32)
@PER_VERSION
def test_response_bytes_match_kafka_python(
    msg: Message, version: int, data: st.DataObject, correlation_id: int
) -> None:
    body = data.draw(message_strategy(msg, version, unknown_tags=False))
    theirs_msg = to_theirs(msg, version, body)
    theirs_msg.with_header(correlation_id=correlation_id)
    theirs = bytes(theirs_msg.encode(header=True, framed=True))
    ours = kproto.encode_response(msg.api_key, version, correlation_id, body)
    assert ours == theirs
    assert plain(kproto.decode_response(msg.api_key, version, theirs).body) == body
    back = decode_theirs(msg, version, ours)
    assert back.header.correlation_id == correlation_id
    assert from_theirs(msg, version, back) == body


# (api key, kind) of kafka-python's specs kproto does not follow, and why.  Empty:
# every spec kafka-python 3.0.12 ships is a client-facing key kproto declares.
NOT_DECLARED: dict[tuple[int, str], str] = {}


def test_kproto_declares_every_key_and_version_of_kafka_pythons_specs() -> None:
    """A new kafka-python (or a new spec in it) fails here until kproto catches up."""
    lacking = []
    for (key, kind), cls in sorted(CLASSES.items()):
        if (key, kind) in NOT_DECLARED:
            continue
        table = kproto.registry.REQUESTS if kind == "request" else kproto.registry.RESPONSES
        low, high = cls.valid_versions
        msg = table.get(key)
        if msg is None or msg.min_version > low or msg.max_version < high:
            lacking.append((cls.name, f"{low}-{high}", None if msg is None else str(msg.valid)))
    assert lacking == []


def test_init_producer_id_flexible() -> None:
    """InitProducerId v2-v4 (flexible; v3 adds producer id and epoch) against hand-made bytes."""
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
