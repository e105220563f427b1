"""Size limits and resource bounds against the real broker process: message.max.bytes,
socket.request.max.bytes, and requests that would exhaust the broker (huge CreateTopics,
retention near INT64_MAX).  See :mod:`bad_input` for the isolation every test checks.
"""

from __future__ import annotations

import os
import random
import select
import socket
import struct
import time
from typing import Any

from bad_input import (
    Healthy,
    closing_reason,
    commit_body,
    expect_closed,
    fetch_all,
    high_watermark,
    offset_fetch,
    produce_ok,
    produce_response,
    wait_until,
)
from broker_process import BrokerProcess
from wire import WireClient, metadata_body

import kproto
from kproto import ApiKey, ErrorCode
from kproto.records import Compression, build_message_set

PRODUCE, FETCH, LIST_OFFSETS, METADATA = ApiKey.PRODUCE, ApiKey.FETCH, ApiKey.LIST_OFFSETS, ApiKey.METADATA
OFFSET_COMMIT, OFFSET_FETCH = ApiKey.OFFSET_COMMIT, ApiKey.OFFSET_FETCH
INT32_MAX = 2**31 - 1
OUT_OF_RANGE = ErrorCode.OFFSET_OUT_OF_RANGE

# ================================================================ 3. message.max.bytes


def test_message_larger_than_message_max_bytes(small_messages: BrokerProcess) -> None:
    b = small_messages
    with Healthy(b, "small-ok") as h, WireClient(b.bootstrap) as c:
        topic = "limits"
        c.request(METADATA, 0, metadata_body(topic))
        # Kafka counts a legacy message with its 12-byte offset/size prefix: 12 + 14 + 974 = 1000
        exact = build_message_set([(None, b"x" * 974)])
        assert len(exact) == 1000
        assert produce_ok(c, topic, [b"x" * 974]) == 0
        too_big = [
            build_message_set([(None, b"y" * 975)]),  # 1001 bytes
            build_message_set([(None, b"y" * 1000)], magic=1),
            build_message_set([(None, b"small"), (None, b"y" * 2000)]),  # the whole set is refused
            build_message_set([(None, random.Random(1).randbytes(2000))], compression=Compression.GZIP),
        ]
        for records in too_big:
            p = produce_response(c, topic, 0, records)
            assert (p.error_code, p.base_offset) == (ErrorCode.MESSAGE_TOO_LARGE, -1)
            assert high_watermark(c, topic) == 1, "nothing of a refused set may be appended"
        # smaller messages in the same partition still work
        assert produce_ok(c, topic, [b"small", b"also small"]) == 1
        assert fetch_all(c, topic) == [(0, b"x" * 974), (1, b"small"), (2, b"also small")]
        h.check()


# ======================================================== 8. socket.request.max.bytes


def test_oversized_frame_prefix_closes_at_once(small_requests: BrokerProcess) -> None:
    b = small_requests
    since = len(b.lines)
    with Healthy(b, "ok") as h, WireClient(b.bootstrap) as bad:
        started = time.monotonic()
        # Only the prefix: a broker that waited for (or buffered) the announced megabyte would
        # never close this connection; this one must decide on the four bytes alone.
        bad.send_raw(struct.pack(">i", 1_000_000))
        expect_closed(bad)
        assert time.monotonic() - started < 5
        assert closing_reason(b, bad, since) == "frame of 1000000 bytes exceeds the limit of 2048 bytes"
        h.check()


def test_request_size_limit_boundary(small_requests: BrokerProcess) -> None:
    """socket.request.max.bytes bounds the size field (the frame without its prefix), as in Kafka."""
    b = small_requests

    def metadata_frame(payload: int) -> bytes:
        frame = kproto.encode_request(METADATA, 0, 1, metadata_body(), client_id="c" * (payload - 14))
        assert len(frame) == payload + 4
        return frame

    since = len(b.lines)
    with Healthy(b, "ok2") as h, WireClient(b.bootstrap) as at_limit, WireClient(b.bootstrap) as over:
        at_limit.send_raw(metadata_frame(2048))
        frame = at_limit.read_frame()
        assert frame is not None and kproto.decode_response(METADATA, 0, frame).correlation_id == 1
        over.send_raw(metadata_frame(2049))
        expect_closed(over)
        assert closing_reason(b, over, since) == "frame of 2049 bytes exceeds the limit of 2048 bytes"
        h.check()


# ================================================== 18. resource exhaustion by request


def create_topics_body(*topics: tuple[str, int], validate_only: bool = False) -> dict[str, Any]:
    return {
        "topics": [
            {"name": name, "num_partitions": n, "replication_factor": 1, "assignments": [], "configs": []}
            for name, n in topics
        ],
        "timeout_ms": 1000,
        "validate_only": validate_only,
    }


def test_create_topics_bounded_like_kafka(shared: BrokerProcess, healthy: Healthy) -> None:
    """Found by bench/fuzz_live.py: num_partitions = 2**31 - 1 had the broker create partition
    directories until it ran out (and block every other connection meanwhile).  Kafka's
    controller bounds one request to 10,000 records (a topic and each partition is one):
    beyond that every topic of the request gets POLICY_VIOLATION and nothing is created."""
    before = set(os.listdir(shared.data_dir))
    with WireClient(shared.bootstrap, timeout=5) as c:
        # refused up front: creating (and rolling back) 2**31 directories would outlast the 5 s timeout
        got = c.request(ApiKey.CREATE_TOPICS, 1, create_topics_body(("huge", INT32_MAX), ("small", 1)))
        assert [(t.name, t.error_code, t.error_message) for t in got.topics] == [
            (name, ErrorCode.POLICY_VIOLATION, "Unable to perform excessively large batch operation.")
            for name in ("huge", "small")
        ]
        # the boundary: 1 topic record + 9,999 partition records is allowed (validated only here)
        ok = c.request(ApiKey.CREATE_TOPICS, 1, create_topics_body(("edge", 9_999), validate_only=True))
        assert ok.topics[0].error_code == ErrorCode.NONE
        over = c.request(ApiKey.CREATE_TOPICS, 1, create_topics_body(("edge", 10_000), validate_only=True))
        assert over.topics[0].error_code == ErrorCode.POLICY_VIOLATION
    assert set(os.listdir(shared.data_dir)) == before  # nothing was created
    healthy.check()


def test_large_create_topics_does_not_stall_other_connections(
    shared: BrokerProcess, healthy: Healthy
) -> None:
    """Creating 4,000 partitions takes the broker seconds of file work; it used to do them
    in one piece, and every other client waited.  Now, while the request is under way,
    another connection is answered (ordering, not timing: its answers arrive before the
    CreateTopics response), sees the topic as not yet available, and cannot create it
    a second time."""
    with WireClient(shared.bootstrap, timeout=60) as big, WireClient(shared.bootstrap, timeout=10) as other:
        big.send(ApiKey.CREATE_TOPICS, 1, create_topics_body(("wide", 4_000)))
        wait_until(lambda: any(n.startswith("wide-") for n in os.listdir(shared.data_dir)), "creation began")
        meta = other.request(ApiKey.METADATA, 1, {"topics": [{"name": "wide"}]})
        again = other.request(ApiKey.CREATE_TOPICS, 1, create_topics_body(("wide", 1)))
        assert not _readable(big.sock), "CreateTopics finished before the other connection was served"
        assert meta.topics[0].error_code == ErrorCode.LEADER_NOT_AVAILABLE and not meta.topics[0].partitions
        assert again.topics[0].error_code == ErrorCode.TOPIC_ALREADY_EXISTS
        frame = big.read_frame()
        assert frame is not None
        done = kproto.decode_response(ApiKey.CREATE_TOPICS, 1, frame).body
        assert done.topics[0].error_code == ErrorCode.NONE
        meta = other.request(ApiKey.METADATA, 1, {"topics": [{"name": "wide"}]})
        assert len(meta.topics[0].partitions) == 4_000
        other.sock.settimeout(60)  # a bound on the wait, not a speed target: it is ~1 s here
        deleted = other.request(ApiKey.DELETE_TOPICS, 1, {"topic_names": ["wide"], "timeout_ms": 30_000})
        assert deleted.responses[0].error_code == ErrorCode.NONE  # the shared broker stays small
    healthy.check()


def _readable(sock: socket.socket) -> bool:
    return bool(select.select([sock], [], [], 0)[0])


def test_offset_commit_retention_near_int64_max(shared: BrokerProcess, healthy: Healthy) -> None:
    """Found by bench/fuzz_live.py: OffsetCommit v2-v4 with retention_time_ms near 2**63 made
    the expire timestamp (commit time + retention) overflow its int64 field: an internal error
    that closed the connection.  It is clamped, and the commit succeeds."""
    topic = healthy.topic
    with WireClient(shared.bootstrap) as c:
        for retention in (2**63 - 1, 2**62):
            body = {**commit_body("huge-retention", topic, 0, 3), "retention_time_ms": retention}
            del body["topics"][0]["partitions"][0]["commit_timestamp"]
            resp = c.request(OFFSET_COMMIT, 2, body)
            assert resp.topics[0].partitions[0].error_code == ErrorCode.NONE
        assert offset_fetch(c, "huge-retention", topic).committed_offset == 3
    healthy.check()
