"""Bad frames against the real broker process: unknown keys and versions, truncated and
oversized-looking frames, garbage, clients that go away mid-request, and responses kept
in request order.  See :mod:`bad_input` for what every test checks besides its own outcome.
"""

from __future__ import annotations

import os
import re
import socket
import struct

import pytest
from bad_input import (
    Healthy,
    broker_holds_socket,
    broker_side,
    closing_reason,
    create_topic,
    drain,
    expect_closed,
    fetch_all,
    high_watermark,
    peer,
    produce_ok,
    raw_frame,
    tcp_table,
    wait_broker_read_everything,
    wait_until,
)
from broker_process import BrokerProcess
from hypothesis import given, settings
from hypothesis import strategies as st
from wire import WireClient, fetch_body, metadata_body, produce_body

import kproto
from kproto import ApiKey, ErrorCode
from kproto.records import build_message_set

PRODUCE, FETCH, LIST_OFFSETS, METADATA = ApiKey.PRODUCE, ApiKey.FETCH, ApiKey.LIST_OFFSETS, ApiKey.METADATA
OFFSET_COMMIT, OFFSET_FETCH = ApiKey.OFFSET_COMMIT, ApiKey.OFFSET_FETCH
INT32_MAX = 2**31 - 1
OUT_OF_RANGE = ErrorCode.OFFSET_OUT_OF_RANGE

# ============================================================ 6. unknown key / version


UNSUPPORTED = [(9999, 0), (4, 0), (-1, 0), (METADATA, 99), (PRODUCE, 14), (FETCH, 19), (METADATA, -1)]


@pytest.mark.parametrize(("api_key", "version"), UNSUPPORTED, ids=[f"{k}v{v}" for k, v in UNSUPPORTED])
def test_unsupported_api_key_or_version_closes(
    shared: BrokerProcess, healthy: Healthy, api_key: int, version: int
) -> None:
    since = len(shared.lines)
    with WireClient(shared.bootstrap) as bad:
        bad.send_raw(raw_frame(api_key, version, 7, struct.pack(">i", 0)))
        expect_closed(bad)
        reason = closing_reason(shared, bad, since)
    assert reason.startswith(f"unsupported request {ApiKey.name_of(api_key)} v{version}"), reason
    healthy.check()


def _bad_then_good(broker: BrokerProcess, attempts: int) -> list[str]:
    """Send a bad request with good ones pipelined behind it, ``attempts`` times; the peers used."""
    good = b"".join(
        kproto.encode_request(METADATA, 0, cid, metadata_body(), client_id="x") for cid in range(8, 13)
    )
    peers = []
    for _ in range(attempts):
        with WireClient(broker.bootstrap) as bad:
            bad.send_raw(raw_frame(9999, 0, 7, struct.pack(">i", 0)) + good)
            expect_closed(bad)  # nothing after the bad request is answered
            peers.append(peer(bad))
    return peers


def test_requests_behind_a_bad_one_are_not_served(shared: BrokerProcess, healthy: Healthy) -> None:
    _bad_then_good(shared, 20)
    healthy.check()


def test_close_reason_logged_when_more_requests_follow(shared: BrokerProcess) -> None:
    # 40 attempts: with the race as it is, all 40 reasons logged has odds below 1e-4
    since = len(shared.lines)
    for name in _bad_then_good(shared, 40):
        pattern = rf"closing connection from {re.escape(name)}: unsupported request"
        shared.wait_for_log(pattern, timeout=2, since=since)


# ==================================================================== 7. truncated frame


def test_truncated_frame_then_disconnect(shared: BrokerProcess, healthy: Healthy) -> None:
    with WireClient(shared.bootstrap) as bad:
        name = peer(bad)
        bad.send_raw(struct.pack(">i", 100) + b"0123456789")
    shared.wait_for_log(
        rf" INFO hmb\.net\.connection: {re.escape(name)} disconnected in the middle "
        r"of a request \(14 bytes\)"
    )
    healthy.check()


# ======================================================================= 9. garbage


@pytest.mark.parametrize("framing", ["as-is", "exact-prefix"])
def test_random_garbage(shared: BrokerProcess, healthy: Healthy, framing: str) -> None:
    garbage = os.urandom(64 * 1024)
    if framing == "exact-prefix":  # a well-formed frame around garbage: reaches the header/body decoders
        garbage = kproto.add_prefix(garbage[4:])
    with socket.create_connection(("127.0.0.1", shared.port), timeout=10) as s:
        s.sendall(garbage)
        s.shutdown(socket.SHUT_WR)  # whatever the prefix announced, the broker gets EOF
        drain(s)  # returns when the broker closes: it must (bounded by the timeout)
    assert shared.alive(), f"garbage starting {garbage[:16].hex()} killed the broker"
    healthy.check()


_plausible_header = st.builds(
    lambda key, version, cid, body: struct.pack(">hhih", key, version, cid, 4) + b"hypo" + body,
    st.sampled_from([0, 1, 2, 3, 8, 9, 10]),
    st.integers(0, 1),
    st.integers(-(2**31), INT32_MAX),
    st.binary(max_size=300),
)
GARBAGE = st.one_of(
    st.binary(min_size=1, max_size=2048),  # anything
    st.binary(max_size=2048).map(kproto.add_prefix),  # well framed, anything inside
    _plausible_header.map(kproto.add_prefix),  # a header the broker accepts, a garbage body
)


def test_hypothesis_garbage(shared: BrokerProcess, healthy: Healthy) -> None:
    @settings(max_examples=60, deadline=None)
    @given(data=GARBAGE)
    def one(data: bytes) -> None:
        with socket.create_connection(("127.0.0.1", shared.port), timeout=10) as s:
            try:
                s.sendall(data)
                s.shutdown(socket.SHUT_WR)
            except (BrokenPipeError, ConnectionResetError):
                pass  # closed already: fine
            drain(s)
        assert shared.alive()

    one()
    healthy.check()


# ============================================== 10. bad size prefix, short frame, junk


def _body_cut_short() -> bytes:
    frame = kproto.encode_request(PRODUCE, 0, 1, produce_body("t", 0, build_message_set([(None, b"v" * 50)])))
    return kproto.add_prefix(frame[4:-20])


def _huge_array_count() -> bytes:
    return raw_frame(METADATA, 0, 1, struct.pack(">i", INT32_MAX))


def _negative_array_count() -> bytes:
    return raw_frame(METADATA, 0, 1, struct.pack(">i", -2))


def _huge_bytes_length() -> bytes:
    body = struct.pack(">hih", 1, 1000, 1) + b"t" + struct.pack(">iii", 1, 0, INT32_MAX) + b"x" * 10
    return raw_frame(PRODUCE, 0, 1, body)


def _client_id_past_end() -> bytes:
    return kproto.add_prefix(struct.pack(">hhih", METADATA, 0, 1, 30000) + b"abc")


def _invalid_utf8_topic() -> bytes:
    return raw_frame(METADATA, 0, 1, struct.pack(">ih", 1, 2) + b"\xff\xfe")


BAD_FRAMES: dict[str, tuple[bytes, str]] = {
    "negative-size": (struct.pack(">i", -5) + b"x" * 10, r"negative frame size -5"),
    "min-int-size": (struct.pack(">i", -(2**31)), r"negative frame size -2147483648"),
    "zero-length": (struct.pack(">i", 0), r"request frame of 4 bytes is shorter than a header"),
    "shorter-than-header": (kproto.add_prefix(b"\x00\x03\x00"), r"request frame of 7 bytes is shorter than"),
    "body-cut-short": (_body_cut_short(), r"malformed request: cannot decode ProduceRequest"),
    "huge-array-count": (_huge_array_count(), r"malformed request: cannot decode MetadataRequest"),
    "negative-array-count": (_negative_array_count(), r"malformed request: "),
    "huge-bytes-length": (_huge_bytes_length(), r"malformed request: cannot decode ProduceRequest"),
    "client-id-past-end": (_client_id_past_end(), r"malformed request: cannot decode request header"),
    "invalid-utf8-topic": (_invalid_utf8_topic(), r"malformed request: cannot decode MetadataRequest"),
}


@pytest.mark.parametrize("case", list(BAD_FRAMES))
def test_bad_frame_closes_with_reason(shared: BrokerProcess, healthy: Healthy, case: str) -> None:
    data, expected = BAD_FRAMES[case]
    since = len(shared.lines)
    with WireClient(shared.bootstrap) as bad:
        bad.send_raw(data)
        expect_closed(bad)
        reason = closing_reason(shared, bad, since)
    assert re.match(expected, reason), reason
    healthy.check()


# ================================================================ 11. client goes away


def test_disconnect_mid_request(shared: BrokerProcess, healthy: Healthy) -> None:
    topic = healthy.topic + ".data"
    with WireClient(shared.bootstrap) as c:
        create_topic(c, topic)
        produce_ok(c, topic, [b"kept"])
    frame = kproto.encode_request(PRODUCE, 0, 1, produce_body(topic, 0, build_message_set([(None, b"lost")])))
    since = len(shared.lines)
    with WireClient(shared.bootstrap) as bad:
        name = peer(bad)
        bad.send_raw(frame[: len(frame) // 2])
    half = len(frame) // 2
    shared.wait_for_log(
        rf"{re.escape(name)} disconnected in the middle of a request \({half} bytes\)", since=since
    )
    with WireClient(shared.bootstrap) as c:
        assert fetch_all(c, topic) == [(0, b"kept")], "half a request must not be appended"
    healthy.check()


@pytest.fixture(scope="module")
def big_partition(shared: BrokerProcess) -> tuple[str, int]:
    """A partition of ~8 MiB, more than the loopback socket buffers of both ends hold."""
    topic, value = "big", b"v" * 100_000
    with WireClient(shared.bootstrap) as c:
        c.request(METADATA, 0, metadata_body(topic))
        for _ in range(4):
            produce_ok(c, topic, [value] * 20)
    return topic, 80


@pytest.mark.parametrize("abort", [True, False], ids=["reset", "close"])
def test_disconnect_mid_response(
    shared: BrokerProcess, healthy: Healthy, big_partition: tuple[str, int], abort: bool
) -> None:
    topic, count = big_partition
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)  # before connect: no autotuning
    s.settimeout(10)
    s.connect(("127.0.0.1", shared.port))
    ours = s.getsockname()[1]
    s.sendall(kproto.encode_request(FETCH, 0, 1, fetch_body(topic, 0, 0, max_bytes=16 << 20)))

    # The response has started to arrive and the broker has more of it queued: it is in the
    # middle of writing (8 MiB do not fit in our 64 KiB window plus its send buffer) ...
    def mid_response() -> bool:
        table = tcp_table()
        mine, theirs = table.get((ours, shared.port)), table.get((shared.port, ours))
        return mine is not None and theirs is not None and mine.rx_queue > 0 and theirs.tx_queue > 0

    wait_until(mid_response, "the broker is in the middle of the response")
    side = broker_side(shared, s)
    assert side is not None
    if abort:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()  # ... and we go away without reading it
    wait_until(lambda: not broker_holds_socket(shared, side.inode), "the broker closed its end", timeout=10)
    with WireClient(shared.bootstrap) as c:  # the partition itself is intact and served in full
        assert len(fetch_all(c, topic)) == count
    healthy.check()


def test_disconnect_during_long_poll_releases_connection(broker: BrokerProcess) -> None:
    """A client that closes while its fetch long-polls must not keep a broker socket for max_wait."""
    with Healthy(broker, "quiet") as h:
        bad = WireClient(broker.bootstrap)
        hw = high_watermark(bad, "quiet")
        bad.send(FETCH, 0, fetch_body("quiet", 0, hw, max_wait_ms=INT32_MAX, min_bytes=1))
        wait_broker_read_everything(broker, bad.sock)
        side = broker_side(broker, bad.sock)
        assert side is not None
        bad.close()
        wait_until(
            lambda: not broker_holds_socket(broker, side.inode),
            "the broker closed the socket of the departed client",
            timeout=3,
        )
        h.check()


# =========================================================== 14. responses in order


def test_pipelined_responses_come_back_in_request_order(shared: BrokerProcess, healthy: Healthy) -> None:
    topic = healthy.topic + ".data"
    kinds = [PRODUCE, METADATA, FETCH, LIST_OFFSETS]
    with WireClient(shared.bootstrap) as c:
        c.request(METADATA, 0, metadata_body(topic))
        lo_body = {
            "replica_id": -1,
            "topics": [
                {"name": topic, "partitions": [{"partition_index": 0, "timestamp": -1, "max_num_offsets": 1}]}
            ],
        }
        sent: list[tuple[int, int]] = []
        frames = bytearray()
        for i in range(50):
            api = kinds[i % len(kinds)]
            body = {
                PRODUCE: produce_body(topic, 0, build_message_set([(None, b"%d" % i)])),
                METADATA: metadata_body(topic),
                FETCH: fetch_body(topic, 0, 0, max_bytes=256),
                LIST_OFFSETS: lo_body,
            }[api]
            c.correlation_id += 1
            frames += kproto.encode_request(api, 0, c.correlation_id, body, client_id="pipeline")
            sent.append((api, c.correlation_id))
        c.send_raw(bytes(frames))  # all 50 at once, nothing read in between
        got = []
        bases = []
        for api, _ in sent:
            frame = c.read_frame()
            assert frame is not None
            resp = kproto.decode_response(api, 0, frame)
            got.append(resp.correlation_id)
            if api == PRODUCE:
                p = resp.body.responses[0].partition_responses[0]
                assert p.error_code == ErrorCode.NONE
                bases.append(p.base_offset)
            if api == LIST_OFFSETS:  # sees exactly the produces before it
                assert list(resp.body.topics[0].partitions[0].old_style_offsets) == [len(bases)]
        assert got == [cid for _, cid in sent]
        assert bases == list(range(len(bases)))
        assert [v for _, v in fetch_all(c, topic)] == [b"%d" % i for i in range(0, 50, 4)]
    healthy.check()
