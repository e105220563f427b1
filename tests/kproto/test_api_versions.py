"""ApiVersions (api key 18) byte for byte, checked by hand against Kafka's
protocol guide and ``ApiVersions{Request,Response}.json``.

What matters on the wire: v3 is flexible (compact strings and arrays, a
tagged-field section after every struct, request header v2) but the
response header stays v0 whatever the version; the response's feature
fields are tagged and written only when they differ from their defaults
(old librdkafka fails otherwise); and an UNSUPPORTED_VERSION answer uses the
v0 body layout whatever version was asked.
"""

from __future__ import annotations

from io import BytesIO

import pytest
from kafka.protocol.old.api_versions import ApiVersionsResponse_v3
from kproto_strategies import plain

import kproto

CORRELATION_ID = 7
API_KEYS = [
    {"api_key": 0, "min_version": 0, "max_version": 8},
    {"api_key": 18, "min_version": 0, "max_version": 3},
]
DEFAULT_TAGS = {
    "supported_features": [],
    "finalized_features_epoch": -1,
    "finalized_features": [],
    "zk_migration_ready": False,
}


def _frame(hex_payload: str) -> bytes:
    payload = bytes.fromhex(hex_payload.replace(" ", ""))
    return len(payload).to_bytes(4, "big") + payload


def test_header_versions_of_api_versions() -> None:
    assert [kproto.request_header_version(18, v) for v in range(5)] == [1, 1, 1, 2, 2]
    assert [kproto.response_header_version(18, v) for v in range(5)] == [0, 0, 0, 0, 0]
    assert kproto.supported_versions()[18] == (0, 4)


def test_v0_request() -> None:
    frame = _frame(
        "0012 0000 00000007"  # api key 18, version 0, correlation id 7
        "0001 63"  # client id "c" (int16 length)
    )  # the body is empty
    assert kproto.encode_request(18, 0, CORRELATION_ID, {}, client_id="c") == frame
    req = kproto.decode_request(frame)
    assert (req.api_key, req.version, req.client_id, plain(req.body)) == (18, 0, "c", {})


def test_v3_request_is_flexible_with_header_v2() -> None:
    body = {"client_software_name": "kproto", "client_software_version": "0.1"}
    frame = _frame(
        "0012 0003 00000007"  # api key 18, version 3, correlation id 7
        "0001 63"  # client id "c": still an int16-length string in header v2
        "00"  # header tagged fields: none
        "07 6b70726f746f"  # compact string: uvarint(len + 1), "kproto"
        "04 302e31"  # compact string "0.1"
        "00"  # body tagged fields: none
    )
    assert kproto.encode_request(18, 3, CORRELATION_ID, body, client_id="c") == frame
    req = kproto.decode_request(frame)
    assert plain(req.body) == {**body, "tagged_fields": {}}
    assert req.header_tagged_fields == {}


def test_v0_response() -> None:
    frame = _frame(
        "00000007"  # response header v0: correlation id
        "0000"  # error code 0
        "00000002"  # api_keys: int32 count
        "0000 0000 0008"  # Produce 0-8
        "0012 0000 0003"  # ApiVersions 0-3
    )
    body = {"error_code": 0, "api_keys": API_KEYS}
    assert kproto.encode_response(18, 0, CORRELATION_ID, body) == frame
    assert plain(kproto.decode_response(18, 0, frame).body) == body


V3_RESPONSE_HEAD = (
    "00000007"  # response header v0, even for the flexible v3 (no tagged fields)
    "0000"  # error code 0
    "03"  # api_keys: compact array, uvarint(count + 1)
    "0000 0000 0008 00"  # Produce 0-8, then the element's (empty) tagged fields
    "0012 0000 0003 00"  # ApiVersions 0-3
    "00000000"  # throttle time
)


def test_v3_response_writes_no_tagged_fields_at_their_defaults() -> None:
    frame = _frame(V3_RESPONSE_HEAD + "00")  # no tagged fields
    body = {"error_code": 0, "api_keys": API_KEYS, "throttle_time_ms": 0}
    assert kproto.encode_response(18, 3, CORRELATION_ID, body) == frame
    explicit = {**body, "tagged_fields": DEFAULT_TAGS}  # defaults given explicitly: still not written
    assert kproto.encode_response(18, 3, CORRELATION_ID, explicit) == frame
    decoded = kproto.decode_response(18, 3, frame).body
    assert plain(decoded.tagged_fields) == DEFAULT_TAGS
    # the decoded form, defaults filled in, re-encodes to the same bytes
    assert kproto.encode_response(18, 3, CORRELATION_ID, decoded) == frame


def test_v3_response_writes_non_default_tagged_fields_in_tag_order() -> None:
    frame = _frame(
        V3_RESPONSE_HEAD + "02"  # two tagged fields
        "00 09"  # tag 0 (supported_features), 9 bytes
        "02 03 6676 0001 0014 00"  # compact array of 1: "fv", versions 1-20, no tags
        "03 01 01"  # tag 3 (zk_migration_ready), 1 byte: true
    )
    tags = {
        "zk_migration_ready": True,
        "supported_features": [{"name": "fv", "min_version": 1, "max_version": 20}],
    }
    body = {"error_code": 0, "api_keys": API_KEYS, "throttle_time_ms": 0, "tagged_fields": tags}
    assert kproto.encode_response(18, 3, CORRELATION_ID, body) == frame
    decoded = plain(kproto.decode_response(18, 3, frame).body.tagged_fields)
    assert decoded == {
        **DEFAULT_TAGS,
        "supported_features": [{"name": "fv", "min_version": 1, "max_version": 20, "tagged_fields": {}}],
        "zk_migration_ready": True,
    }


def test_unsupported_version_answer_uses_the_v0_layout() -> None:
    """A client asked v3 (say); the broker cannot answer that version, so it
    sends error 35 in the v0 body layout with what it supports.  The client
    reads the error code first and decodes the rest as v0."""
    frame = _frame(
        "00000007"  # response header v0
        "0023"  # error code 35 UNSUPPORTED_VERSION
        "00000002"  # api_keys: int32 count, as in v0
        "0000 0000 0008"
        "0012 0000 0003"
    )
    body = {"error_code": kproto.ErrorCode.UNSUPPORTED_VERSION, "api_keys": API_KEYS}
    assert kproto.encode_response(18, 0, CORRELATION_ID, body) == frame
    error_code = int.from_bytes(frame[8:10], "big", signed=True)
    assert error_code == 35
    resp = kproto.decode_response(18, 0, frame)
    assert resp.correlation_id == CORRELATION_ID and plain(resp.body) == body
    # kproto does not guess: as a v3 body these bytes are malformed
    with pytest.raises(kproto.DecodeError):
        kproto.decode_response(18, 3, frame)
    # a real client (kafka-python), having sent v3, reads the same bytes this way too
    theirs = ApiVersionsResponse_v3.decode(BytesIO(frame), header=True, framed=True)
    assert theirs.error_code == 35
    assert [tuple(k) for k in theirs.api_keys] == [(0, 0, 8), (18, 0, 3)]
