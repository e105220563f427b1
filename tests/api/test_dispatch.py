"""The dispatcher's rules in process: what closes a connection and what is answered.

In the order they apply to a frame: Produce tries the struct fast path
first and must answer exactly as the general path; an unreadable header
closes; ApiVersions newer than ours gets UNSUPPORTED_VERSION in the v0
layout, listing what we serve; any other unknown key or version closes with
a reason naming the served range; a body that does not parse closes; a
failed Produce with acks=0 closes (the producer's only sign).  Whether the
network layer then really closes the socket is tested on the real process
in ``tests/system/test_bad_input_frames.py``.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hmb.api.dispatch
import kproto
from hmb.api import HANDLERS
from hmb.api.context import CloseConnection
from kproto import ApiKey, ErrorCode
from kproto.records import build_message_set

from .bodies import batch, make_topic, metadata_body, produce_body
from .harness import InProcessBroker

UNSUPPORTED = [(9999, 0), (4, 0), (-1, 0), (ApiKey.METADATA, 99), (ApiKey.PRODUCE, 14), (ApiKey.FETCH, 19)]


def raw_frame(
    api_key: int, version: int, correlation_id: int, body: bytes, client_id: bytes = b"bad"
) -> bytes:
    """A request frame built by hand (any key/version, any body), header v1."""
    header = struct.pack(">hhih", api_key, version, correlation_id, len(client_id)) + client_id
    return kproto.add_prefix(header + body)


async def closes(b: InProcessBroker, frame: bytes) -> str:
    """The reason the dispatcher gives for closing the connection on ``frame``."""
    with pytest.raises(CloseConnection) as exc:
        await b.dispatch(frame)
    return str(exc.value)


@pytest.mark.parametrize(("api_key", "version"), UNSUPPORTED, ids=[f"{k}v{v}" for k, v in UNSUPPORTED])
async def test_unsupported_api_key_or_version_closes(
    broker: InProcessBroker, api_key: int, version: int
) -> None:
    reason = await closes(broker, raw_frame(api_key, version, 7, b"\x00" * 16))
    assert reason.startswith(f"unsupported request {ApiKey.name_of(api_key)} v{version}")
    served = HANDLERS.get(api_key)
    if served is not None:
        assert f"(supported v{served.min_version}-v{served.max_version})" in reason


async def test_a_newer_api_versions_gets_error_35_in_the_v0_layout(broker: InProcessBroker) -> None:
    # ApiVersions v5, newer than any Kafka (flexible header v2: ..., client_id, no tagged fields)
    client_id = b"future-client"
    payload = struct.pack(">hhih", ApiKey.API_VERSIONS, 5, 77, len(client_id)) + client_id + b"\x00" + b"\x00"
    frame = await broker.dispatch(struct.pack(">i", len(payload)) + payload)
    assert frame is not None, "the broker must answer, not close"
    resp = kproto.decode_response(ApiKey.API_VERSIONS, 0, frame)
    assert resp.correlation_id == 77 and resp.body.error_code == ErrorCode.UNSUPPORTED_VERSION
    table = {k.api_key: (k.min_version, k.max_version) for k in resp.body.api_keys}
    assert table == {h.api_key: (h.min_version, h.max_version) for h in HANDLERS.values()}
    assert (await broker.request(ApiKey.METADATA, 0, metadata_body())).brokers  # still served


@pytest.mark.parametrize("size", [0, 3, 7])
async def test_a_frame_shorter_than_a_header_closes(broker: InProcessBroker, size: int) -> None:
    assert "shorter than a header" in await closes(broker, kproto.add_prefix(b"\x00" * size))


BAD_BODIES = {
    "body cut short": raw_frame(ApiKey.METADATA, 0, 1, struct.pack(">i", 1) + struct.pack(">h", 10) + b"abc"),
    "huge array count": raw_frame(ApiKey.METADATA, 0, 1, struct.pack(">i", 2**31 - 1)),
    "negative array count": raw_frame(ApiKey.METADATA, 1, 1, struct.pack(">i", -5)),
    "client id past the end": kproto.add_prefix(struct.pack(">hhih", ApiKey.METADATA, 0, 1, 500) + b"x"),
    "invalid utf-8 topic": raw_frame(ApiKey.METADATA, 0, 1, struct.pack(">ih", 1, 2) + b"\xff\xfe"),
}


@pytest.mark.parametrize("case", list(BAD_BODIES))
async def test_a_body_that_does_not_parse_closes(broker: InProcessBroker, case: str) -> None:
    assert "malformed request" in await closes(broker, BAD_BODIES[case])


async def test_bytes_after_a_body_are_ignored_as_kafka_does(broker: InProcessBroker) -> None:
    """librdkafka's flexible "all topics" Metadata request carries three bytes after its body."""
    frame = kproto.encode_request(
        ApiKey.METADATA,
        12,
        1,
        {"topics": None, "allow_auto_topic_creation": True, "include_topic_authorized_operations": False},
    )
    padded = kproto.add_prefix(frame[4:] + b"\x01\x00\x00")
    answer = await broker.dispatch(padded)
    assert answer is not None and kproto.decode_response(ApiKey.METADATA, 12, answer).correlation_id == 1


async def test_the_request_size_limit(make_broker: Any) -> None:
    b = make_broker("socket.request.max.bytes=2048")
    small = kproto.encode_request(ApiKey.METADATA, 1, 1, metadata_body("t" * 100))
    assert await b.dispatch(small) is not None
    big = kproto.encode_request(ApiKey.METADATA, 1, 2, metadata_body(*[f"t{i:04}" for i in range(500)]))
    assert len(big) > 2048
    assert "malformed request" in await closes(b, big)


async def test_a_failed_produce_with_acks_0_closes(broker: InProcessBroker) -> None:
    """Kafka closes the socket: with acks=0 that is the producer's only sign of failure."""
    records = build_message_set([(None, b"x")])
    assert "acks=0 failed" in await closes(
        broker, broker.encode(ApiKey.PRODUCE, 0, produce_body("nope", records, acks=0))
    )
    await make_topic(broker, "acks0")
    assert await broker.send(ApiKey.PRODUCE, 0, produce_body("acks0", records, acks=0)) is None


@pytest.mark.parametrize("version", [0, 2, 3, 5, 8, 9, 10, 11])
async def test_the_produce_fast_path_answers_as_the_general_path(
    make_broker: Any, monkeypatch: pytest.MonkeyPatch, version: int
) -> None:
    records = batch([b"a", b"b"]) if version >= 3 else build_message_set([(None, b"a")])
    answers = []
    for fast in (True, False):
        if not fast:
            monkeypatch.setattr(hmb.api.dispatch, "decode_produce_request", lambda frame: None)
        b = make_broker()
        await make_topic(b, "fast")
        b.correlation_id = 100
        body = produce_body("fast", records)
        body["topic_data"].append(
            {"name": "fast-missing", "partition_data": [{"index": 0, "records": records}]}
        )
        answers.append(
            (await b.send(ApiKey.PRODUCE, version, body), await b.send(ApiKey.PRODUCE, version, body))
        )
    assert answers[0] == answers[1]
    assert kproto.decode_response(ApiKey.PRODUCE, version, answers[0][1]).body.responses[
        0
    ].partition_responses[0].base_offset == (2 if version >= 3 else 1)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.one_of(
        st.binary(max_size=64),
        st.tuples(st.sampled_from(sorted(HANDLERS)), st.integers(-1, 12), st.binary(max_size=48)).map(
            lambda t: struct.pack(">hhi", t[0], t[1], 1) + t[2]
        ),
    )
)
def test_garbage_is_answered_or_closes_never_crashes(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    """Any frame: an answer, silence, or CloseConnection; no other exception reaches the network layer."""
    import trio

    b = InProcessBroker(tmp_path_factory.mktemp("garbage"))
    try:

        async def main() -> None:
            try:
                await b.dispatch(kproto.add_prefix(data))
            except CloseConnection:
                pass

        trio.run(main)
    finally:
        b.close()
