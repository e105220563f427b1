"""``python -m kproto pcap`` on captures built in the test: TCP reassembly, pairing, resynchronising.

Each capture is made of frames kproto encodes, cut into TCP segments the way
a test needs (split, coalesced, repeated, lost, started late), written with
dpkt as tcpdump would, then read back through the command's entry point.
"""

from __future__ import annotations

import pytest
from inspect_support import (
    LINK_ETHERNET,
    LINK_LINUX_SLL,
    LINK_LINUX_SLL2,
    LINK_NULL,
    LINK_RAW,
    Capture,
    TcpConnection,
    api_versions_request,
    api_versions_response,
    inspect,
    metadata_request,
    metadata_response,
    summary,
)

import kproto

REQUEST, RESPONSE = "request", "response"


def _exchange(conn: TcpConnection, correlation_id: int, **split: tuple[int, ...]) -> None:
    conn.send(metadata_request(correlation_id), split=split.get("request", ()))
    conn.reply(metadata_response(correlation_id), split=split.get("response", ()))


def test_a_request_and_its_response_are_paired_and_decoded() -> None:
    cap = Capture()
    conn = TcpConnection(cap, client_port=40001).handshake()
    _exchange(conn, 7)
    conn.close()
    status, events = inspect(cap.pcap())
    assert status == 0
    assert summary(events) == [(1, REQUEST, "Metadata", 7, None), (1, RESPONSE, "Metadata", 7, None)]
    request, response = events
    assert request["connection"] == {"id": 1, "src": "127.0.0.1:40001", "dst": "127.0.0.1:9092"}
    assert response["connection"] == {"id": 1, "src": "127.0.0.1:9092", "dst": "127.0.0.1:40001"}
    assert request["client_id"] == "tester" and request["version"] == 4 and request["api_key"] == 3
    assert request["body"]["topics"] == [{"name": "events"}]
    assert response["body"]["topics"][0]["name"] == "events"
    assert response["body"]["brokers"][0]["port"] == 9092
    assert "client_id" not in response
    assert response["latency_ms"] == pytest.approx(response["ts"] * 1000 - request["ts"] * 1000, abs=0.01)
    assert request["time"].endswith("Z") and request["time"].startswith("2023-11-14T22:13:20")


def test_frames_split_over_segments_and_several_in_one_segment() -> None:
    cap = Capture()
    conn = TcpConnection(cap, client_port=40002).handshake()
    _exchange(conn, 1, request=(1, 3, 10), response=(2, 20))  # a size prefix cut in two, too
    conn.send(metadata_request(2) + metadata_request(3) + api_versions_request(4)[:5])
    conn.send(api_versions_request(4)[5:])
    conn.reply(metadata_response(2) + metadata_response(3) + api_versions_response(4), split=(3,))
    status, events = inspect(cap.pcap())
    assert status == 0
    assert summary(events) == [
        (1, REQUEST, "Metadata", 1, None),
        (1, RESPONSE, "Metadata", 1, None),
        (1, REQUEST, "Metadata", 2, None),
        (1, REQUEST, "Metadata", 3, None),
        (1, REQUEST, "ApiVersions", 4, None),
        (1, RESPONSE, "Metadata", 2, None),
        (1, RESPONSE, "Metadata", 3, None),
        (1, RESPONSE, "ApiVersions", 4, None),
    ]
    assert events[-1]["body"]["api_keys"] == [{"api_key": 3, "min_version": 0, "max_version": 8}]


def test_retransmitted_and_overlapping_segments_are_decoded_once() -> None:
    cap = Capture()
    conn = TcpConnection(cap, client_port=40003).handshake()
    frame = metadata_request(1)
    conn.send(frame, ack=False)
    conn.segment(frame, to_broker=True, offset=-len(frame))  # the whole frame again
    conn.segment(frame[-6:] + metadata_request(2)[:4], to_broker=True, offset=-6)  # overlaps the end
    conn.skip(4)
    conn.send(metadata_request(2)[4:])
    conn.reply(metadata_response(1) + metadata_response(2))
    status, events = inspect(cap.pcap())
    assert status == 0
    assert summary(events) == [
        (1, REQUEST, "Metadata", 1, None),
        (1, REQUEST, "Metadata", 2, None),
        (1, RESPONSE, "Metadata", 1, None),
        (1, RESPONSE, "Metadata", 2, None),
    ]


def test_segments_captured_out_of_order_are_put_back_in_order() -> None:
    cap = Capture()
    conn = TcpConnection(cap, client_port=40004).handshake()
    frame = metadata_request(5)
    conn.segment(frame[10:], to_broker=True, offset=10)
    conn.segment(frame[:10], to_broker=True, offset=0)
    conn.skip(len(frame))
    conn.reply(metadata_response(5))
    status, events = inspect(cap.pcap())
    assert status == 0
    assert summary(events) == [(1, REQUEST, "Metadata", 5, None), (1, RESPONSE, "Metadata", 5, None)]


def test_two_connections_reusing_correlation_ids_are_kept_apart() -> None:
    cap = Capture()
    first = TcpConnection(cap, client_port=40005).handshake()
    second = TcpConnection(cap, client_port=40006, client_seq=9_000_000, broker_seq=4_294_967_000).handshake()
    first.send(metadata_request(1, "a"))
    second.send(api_versions_request(1))
    second.reply(api_versions_response(1), split=(100,))  # the broker's sequence numbers wrap here
    first.reply(metadata_response(1, "a"))
    status, events = inspect(cap.pcap())
    assert status == 0
    assert summary(events) == [
        (1, REQUEST, "Metadata", 1, None),
        (2, REQUEST, "ApiVersions", 1, None),
        (2, RESPONSE, "ApiVersions", 1, None),
        (1, RESPONSE, "Metadata", 1, None),
    ]
    assert events[3]["body"]["topics"][0]["name"] == "a"
    assert events[1]["connection"]["src"] == "127.0.0.1:40006"


def test_a_capture_that_starts_mid_stream_resynchronises() -> None:
    """No handshake, and the first bytes are the tail of a request and of a response."""
    cap = Capture()
    conn = TcpConnection(cap, client_port=40007)
    before = metadata_request(1)
    conn.segment(before[9:], to_broker=True, offset=0)
    conn.skip(len(before) - 9)
    conn.reply(metadata_response(1)[15:])
    _exchange(conn, 2)
    conn.send(api_versions_request(3), split=(2,))
    conn.reply(api_versions_response(3))
    status, events = inspect(cap.pcap())
    assert status == 1
    assert summary(events) == [
        (1, REQUEST, None, None, "Unsynchronised"),
        (1, REQUEST, "Metadata", 2, None),
        (1, RESPONSE, None, None, "Unsynchronised"),
        (1, RESPONSE, "Metadata", 2, None),
        (1, REQUEST, "ApiVersions", 3, None),
        (1, RESPONSE, "ApiVersions", 3, None),
    ]
    assert events[0]["skipped_bytes"] == len(before) - 9
    assert "middle of this connection" in events[0]["error"]["message"]
    assert events[2]["skipped_bytes"] == len(metadata_response(1)) - 15


def test_bytes_lost_by_the_capture_are_reported_and_the_frames_after_them_decode() -> None:
    cap = Capture()
    conn = TcpConnection(cap, client_port=40008).handshake()
    big = metadata_request(1, "t" * 300)
    conn.segment(big[:100], to_broker=True, offset=0)
    conn.segment(big[200:], to_broker=True, offset=200)  # bytes 100-200 never captured
    conn.skip(len(big))
    conn.ack(to_broker=False)
    conn.reply(metadata_response(1, "t" * 300))  # still paired: the request's header was seen
    conn.send(b"\0\0\0\x10" + b"\0" * 3, ack=False)  # and a frame the capture ends inside
    status, events = inspect(cap.pcap())
    assert status == 1
    assert summary(events) == [
        (1, REQUEST, "Metadata", 1, "MissingBytes"),
        (1, RESPONSE, "Metadata", 1, None),
        (1, REQUEST, None, None, "TruncatedFrame"),
    ]
    assert events[0]["missing_bytes"] == 100 and events[0]["skipped_bytes"] == len(big) - 100
    assert events[1]["body"]["topics"][0]["name"] == "t" * 300


def test_a_response_without_a_captured_request_is_reported_not_guessed() -> None:
    cap = Capture()
    conn = TcpConnection(cap, client_port=40009).handshake()
    conn.reply(metadata_response(99))
    status, events = inspect(cap.pcap())
    assert status == 1
    assert summary(events) == [(1, RESPONSE, None, 99, "UnmatchedResponse")]
    assert bytes.fromhex(events[0]["frame_data"]) == metadata_response(99)


def test_undecodable_frames_name_kprotos_error_and_the_stream_goes_on() -> None:
    cap = Capture()
    conn = TcpConnection(cap, client_port=40010).handshake()
    unknown = kproto.add_prefix(b"\x7f\x00\x00\x01\x00\x00\x00\x05\xff\xff")  # api key 32512
    broken = bytearray(metadata_request(6))
    broken[-5:] = b"\xff\xff\xff\xff\xff"  # the array's length claims far more than follows
    conn.send(unknown + bytes(broken) + metadata_request(7))
    conn.reply(metadata_response(7))
    status, events = inspect(cap.pcap())
    assert status == 1
    assert summary(events) == [
        (1, REQUEST, "Unknown(32512)", 5, "UnsupportedVersionError"),
        (1, REQUEST, "Metadata", 6, "DecodeError"),
        (1, REQUEST, "Metadata", 7, None),
        (1, RESPONSE, "Metadata", 7, None),
    ]
    assert events[1]["error"]["api_key"] == 3 and events[1]["error"]["version"] == 4


def test_produce_with_acks_0_expects_no_response() -> None:
    cap = Capture()
    conn = TcpConnection(cap, client_port=40011).handshake()
    body = {"transactional_id": None, "acks": 0, "timeout_ms": 100, "topic_data": []}
    conn.send(kproto.encode_request(kproto.ApiKey.PRODUCE, 3, 1, body, client_id="p"))
    conn.send(metadata_request(1))  # the same correlation id again: only this one is answered
    conn.reply(metadata_response(1))
    status, events = inspect(cap.pcap())
    assert status == 0
    assert summary(events)[-1] == (1, RESPONSE, "Metadata", 1, None)


@pytest.mark.parametrize(
    ("link_type", "ng"),
    [
        (LINK_ETHERNET, True),
        (LINK_LINUX_SLL, False),
        (LINK_LINUX_SLL2, False),
        (LINK_NULL, False),
        (LINK_RAW, False),
    ],
    ids=["ethernet-pcapng", "linux-cooked", "linux-cooked-v2", "bsd-loopback", "raw-ip"],
)
@pytest.mark.parametrize("ip", ["127.0.0.1", "::1"])
def test_link_types_file_formats_and_ip_versions(link_type: int, ng: bool, ip: str) -> None:
    cap = Capture(link_type=link_type)
    conn = TcpConnection(cap, client_port=40012, client_ip=ip, broker_ip=ip).handshake()
    _exchange(conn, 3, request=(7,))
    status, events = inspect(cap.pcap(ng=ng))
    assert status == 0
    assert summary(events) == [(1, REQUEST, "Metadata", 3, None), (1, RESPONSE, "Metadata", 3, None)]
    broker = "[::1]:9092" if ip == "::1" else "127.0.0.1:9092"
    assert events[0]["connection"]["dst"] == broker


def test_the_port_filter_picks_the_broker_side() -> None:
    cap = Capture()
    other = TcpConnection(cap, client_port=40013, broker_port=9093).handshake()
    conn = TcpConnection(cap, client_port=40014).handshake()
    _exchange(other, 1)
    _exchange(conn, 2)
    assert summary(inspect(cap.pcap())[1]) == [
        (1, REQUEST, "Metadata", 2, None),
        (1, RESPONSE, "Metadata", 2, None),
    ]
    status, events = inspect(cap.pcap(), "--port", "9093", "--port", "9092")
    assert status == 0
    assert [(e["connection"]["id"], e["correlation_id"]) for e in events] == [(1, 1), (1, 1), (2, 2), (2, 2)]
    assert events[0]["connection"]["dst"] == "127.0.0.1:9093"


def test_a_snap_length_that_cuts_a_segment_is_reported() -> None:
    cap = Capture()
    conn = TcpConnection(cap, client_port=40015).handshake()
    conn.send(metadata_request(1, "x" * 2000))
    conn.reply(metadata_response(1, "x" * 2000))
    conn.send(metadata_request(2))
    conn.reply(metadata_response(2))
    status, events = inspect(cap.pcap(snaplen=1000))
    assert status == 1
    kinds = summary(events)
    assert kinds[0] == (1, REQUEST, "Metadata", 1, "MissingBytes")
    assert kinds[1] == (1, RESPONSE, "Metadata", 1, "MissingBytes")
    assert kinds[2:] == [(1, REQUEST, "Metadata", 2, None), (1, RESPONSE, "Metadata", 2, None)]


def test_not_a_capture_exits_2() -> None:
    status, events = inspect(b"this is not a pcap")
    assert (status, events) == (2, [])


def test_a_port_reused_by_a_new_connection_starts_a_new_connection() -> None:
    cap = Capture()
    conn = TcpConnection(cap, client_port=40016)
    conn.handshake()
    conn.resend_syn()  # still the same connection
    _exchange(conn, 1)
    conn.close()
    again = TcpConnection(cap, client_port=40016, client_seq=777_000, broker_seq=888_000).handshake()
    _exchange(again, 1)
    status, events = inspect(cap.pcap())
    assert status == 0
    assert summary(events) == [
        (1, REQUEST, "Metadata", 1, None),
        (1, RESPONSE, "Metadata", 1, None),
        (2, REQUEST, "Metadata", 1, None),
        (2, RESPONSE, "Metadata", 1, None),
    ]


def test_an_api_versions_request_newer_than_kproto_and_its_v0_answer() -> None:
    """A client asks ApiVersions v99; the broker answers in the v0 layout, as Kafka does."""
    cap = Capture()
    conn = TcpConnection(cap, client_port=40017).handshake()
    conn.send(kproto.add_prefix(b"\x00\x12\x00\x63\x00\x00\x00\x01\x00\x01c\x00"))
    conn.reply(kproto.encode_response(kproto.ApiKey.API_VERSIONS, 0, 1, {"error_code": 35, "api_keys": []}))
    status, events = inspect(cap.pcap())
    assert summary(events) == [
        (1, REQUEST, "ApiVersions", 1, "UnsupportedVersionError"),
        (1, RESPONSE, "ApiVersions", 1, None),
    ]
    assert events[1]["decoded_as_version"] == 0 and events[1]["body"]["error_code"] == 35
    assert status == 1


def test_a_capture_of_responses_only_reports_them_skipped_in_one_event() -> None:
    """tcpdump 'src port 9092' sees no request: no response can be decoded, and none is guessed."""
    cap = Capture()
    conn = TcpConnection(cap, client_port=40018)
    replies = metadata_response(1) + metadata_response(2)
    conn.reply(replies, split=(5, 30), ack=False)
    status, events = inspect(cap.pcap())
    assert status == 1
    assert summary(events) == [(1, RESPONSE, None, None, "Unsynchronised")]
    assert events[0]["skipped_bytes"] == len(replies)
