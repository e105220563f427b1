"""Requests and responses as whole frames: round trips for every API and
version kproto declares, and the errors a broker relies on."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kproto_strategies import (
    PER_VERSION,
    REQUEST_VERSIONS,
    RESPONSE_VERSIONS,
    ids,
    message_strategy,
    plain,
)

import kproto
from kproto.schema import Message

INT32 = st.integers(-(2**31), 2**31 - 1)
CLIENT_ID = st.none() | st.text(max_size=10)


@pytest.mark.parametrize(("msg", "version"), REQUEST_VERSIONS, ids=ids(REQUEST_VERSIONS))
@given(data=st.data(), correlation_id=INT32, client_id=CLIENT_ID)
@PER_VERSION
def test_request_round_trip(
    msg: Message, version: int, data: st.DataObject, correlation_id: int, client_id: str | None
) -> None:
    body = data.draw(message_strategy(msg, version))
    frame = kproto.encode_request(msg.api_key, version, correlation_id, body, client_id=client_id)
    req = kproto.decode_request(frame)
    # request header v0 (ControlledShutdown v0) has no client id: it is not sent
    sent_client_id = client_id if kproto.request_header_version(msg.api_key, version) > 0 else None
    assert (req.api_key, req.version, req.correlation_id, req.client_id) == (
        msg.api_key,
        version,
        correlation_id,
        sent_client_id,
    )
    assert plain(req.body) == body
    # decoding and re-encoding is byte-identical
    assert kproto.encode_request(msg.api_key, version, correlation_id, req.body, client_id=client_id) == frame


@pytest.mark.parametrize(("msg", "version"), RESPONSE_VERSIONS, ids=ids(RESPONSE_VERSIONS))
@given(data=st.data(), correlation_id=INT32)
@PER_VERSION
def test_response_round_trip(msg: Message, version: int, data: st.DataObject, correlation_id: int) -> None:
    body = data.draw(message_strategy(msg, version))
    frame = kproto.encode_response(msg.api_key, version, correlation_id, body)
    resp = kproto.decode_response(msg.api_key, version, frame)
    assert resp.correlation_id == correlation_id
    assert plain(resp.body) == body


def test_the_0_8_2_core_is_declared() -> None:
    versions = kproto.supported_versions()
    for key, (lo, hi) in {
        0: (0, 0),
        1: (0, 0),
        2: (0, 0),
        3: (0, 0),
        8: (0, 1),
        9: (0, 1),
        10: (0, 0),
    }.items():
        assert versions[key][0] <= lo and versions[key][1] >= hi


def test_offset_commit_versions_differ_as_kafka_declares() -> None:
    body = {
        "group_id": "g",
        "generation_id": 3,
        "member_id": "m",
        "topics": [
            {
                "name": "t",
                "partitions": [
                    {
                        "partition_index": 0,
                        "committed_offset": 42,
                        "commit_timestamp": -1,
                        "committed_metadata": None,
                    }
                ],
            }
        ],
    }
    v0 = kproto.decode_request(kproto.encode_request(8, 0, 1, body))
    v1 = kproto.decode_request(kproto.encode_request(8, 1, 1, body))
    assert "generation_id" not in v0.body and v1.body.generation_id == 3
    assert "commit_timestamp" not in v0.body.topics[0].partitions[0]
    assert v1.body.topics[0].partitions[0].commit_timestamp == -1


def test_unknown_api_key_and_version_raise_unsupported_with_a_readable_peek() -> None:
    frame = kproto.encode_request(3, 0, 99, {"topics": []})
    forged = frame[:4] + b"\x00\x03\x00\x63" + frame[8:]  # Metadata v99
    with pytest.raises(kproto.UnsupportedVersionError) as err:
        kproto.decode_request(forged)
    assert (err.value.api_key, err.value.version) == (3, 99)
    assert kproto.peek_request(forged) == kproto.RequestPeek(3, 99, 99)
    with pytest.raises(kproto.UnsupportedVersionError):
        kproto.decode_request(frame[:4] + b"\x03\xe7" + frame[6:])  # api key 999
    with pytest.raises(kproto.UnsupportedVersionError):
        kproto.encode_request(0, 42, 1, {})


def test_truncated_body_names_api_version_and_field() -> None:
    body = {
        "acks": 1,
        "timeout_ms": 100,
        "topic_data": [{"name": "events", "partition_data": [{"index": 0, "records": b"x" * 20}]}],
    }
    frame = kproto.encode_request(0, 0, 5, body, client_id="c")
    cut = frame[:-5]
    cut = len(cut[4:]).to_bytes(4, "big") + cut[4:]
    with pytest.raises(kproto.DecodeError) as err:
        kproto.decode_request(cut)
    assert err.value.api_key == 0 and err.value.version == 0
    assert "topic_data" in str(err.value.where) and "records" in str(err.value.where)


def test_trailing_bytes_and_wrong_prefix_are_errors() -> None:
    frame = kproto.encode_request(3, 0, 1, {"topics": []})
    longer = (len(frame) - 4 + 1).to_bytes(4, "big") + frame[4:] + b"\x00"
    with pytest.raises(kproto.DecodeError, match="unexpected bytes"):
        kproto.decode_request(longer)
    with pytest.raises(kproto.DecodeError, match="size prefix"):
        kproto.decode_request(frame + b"\x00")
    with pytest.raises(kproto.FrameTooLargeError):
        kproto.decode_request(frame, max_size=len(frame) - 5)


def test_encode_errors_are_kproto_errors() -> None:
    with pytest.raises(kproto.EncodeError):
        kproto.encode_request(3, 0, 1, {})  # missing field
    with pytest.raises(kproto.EncodeError):
        kproto.encode_request(3, 0, 1, {"topics": [{"name": None}]})  # null in a non-nullable string
    with pytest.raises(kproto.EncodeError):
        kproto.encode_response(10, 0, 1, {"error_code": 70000, "node_id": 0, "host": "h", "port": 1})


def test_header_versions() -> None:
    assert kproto.request_header_version(0, 0) == 1
    assert kproto.response_header_version(0, 0) == 0
    assert kproto.response_header_version(kproto.ApiKey.API_VERSIONS, 3) == 0


def test_frame_decoder_splits_a_byte_stream() -> None:
    frames = [kproto.encode_request(3, 0, i, {"topics": [{"name": f"t{i}"}]}) for i in range(5)]
    stream = b"".join(frames)
    dec = kproto.FrameDecoder()
    out = []
    for i in range(len(stream)):  # one byte at a time: the worst the network can do
        dec.feed(stream[i : i + 1])
        while (f := dec.next_frame()) is not None:
            out.append(f)
    assert out == frames
    assert dec.buffered == 0


def test_frame_decoder_refuses_oversized_and_negative_prefixes() -> None:
    dec = kproto.FrameDecoder(max_size=1000)
    dec.feed((1001).to_bytes(4, "big"))
    with pytest.raises(kproto.FrameTooLargeError):
        dec.next_frame()
    dec = kproto.FrameDecoder()
    dec.feed(b"\xff\xff\xff\xfe")
    with pytest.raises(kproto.DecodeError):
        dec.next_frame()


def test_error_codes_and_api_keys() -> None:
    assert kproto.ErrorCode(10) is kproto.ErrorCode.MESSAGE_TOO_LARGE
    assert kproto.ErrorCode.NOT_LEADER_OR_FOLLOWER.retriable
    assert kproto.ErrorCode.CORRUPT_MESSAGE.retriable  # CorruptRecordException is retriable in Kafka
    assert not kproto.ErrorCode.MESSAGE_TOO_LARGE.retriable
    assert kproto.ErrorCode.REQUEST_TIMED_OUT.retriable
    assert kproto.ErrorCode.of(31337) is kproto.ErrorCode.UNKNOWN_SERVER_ERROR
    assert [c.value for c in kproto.ErrorCode][:3] == [-1, 0, 1]
    assert len({c.value for c in kproto.ErrorCode}) == 129  # -1 .. 127, none missing
    assert kproto.ApiKey.OFFSETS is kproto.ApiKey.LIST_OFFSETS
    assert kproto.ApiKey.name_of(1000) == "UNKNOWN_API_KEY_1000"
