"""Well-framed requests with wrong contents against the real broker process: unknown
topics, offsets out of range, corrupt records, invalid topic names, acks=0 and invalid acks,
long polls, ListOffsets v0 and offset commits.  See :mod:`bad_input` for the isolation
every test checks.
"""

from __future__ import annotations

import os
import select
import struct
import time
import zlib
from collections.abc import Callable

import pytest
from bad_input import (
    Healthy,
    commit_body,
    create_topic,
    expect_closed,
    fetch_all,
    fetch_partition,
    high_watermark,
    list_offsets,
    offset_fetch,
    produce_ok,
    produce_response,
    wait_broker_read_everything,
    wait_until,
)
from broker_process import BrokerProcess
from wire import WireClient, fetch_body, metadata_body, produce_body

import kproto
from kproto import ApiKey, ErrorCode
from kproto.records import build_message_set, read_message_set

PRODUCE, FETCH, LIST_OFFSETS, METADATA = ApiKey.PRODUCE, ApiKey.FETCH, ApiKey.LIST_OFFSETS, ApiKey.METADATA
OFFSET_COMMIT, OFFSET_FETCH = ApiKey.OFFSET_COMMIT, ApiKey.OFFSET_FETCH
INT32_MAX = 2**31 - 1
OUT_OF_RANGE = ErrorCode.OFFSET_OUT_OF_RANGE

# ====================================================================== 1. unknown topic


def test_unknown_topic_without_auto_create(no_auto_create: BrokerProcess) -> None:
    b = no_auto_create
    before = set(os.listdir(b.data_dir))
    with Healthy(b, "existing") as h, WireClient(b.bootstrap) as bad:
        p = produce_response(bad, "nope", 0, build_message_set([(None, b"lost")]))
        assert (p.error_code, p.base_offset) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)

        md = bad.request(METADATA, 0, metadata_body("nope", "existing"))
        errors = {t.name: (t.error_code, len(t.partitions)) for t in md.topics}
        assert errors == {"nope": (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 0), "existing": (ErrorCode.NONE, 1)}

        assert fetch_partition(bad, "nope", 0).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        lo = list_offsets(bad, "nope", -1)
        assert (lo.error_code, list(lo.old_style_offsets)) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])
        # an unknown partition of a known topic is unknown too
        p = produce_response(bad, "existing", 7, build_message_set([(None, b"lost")]))
        assert p.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        # asking did not create it
        md = bad.request(METADATA, 0, metadata_body("nope"))
        assert md.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        h.check()
    assert set(os.listdir(b.data_dir)) == before


# ================================================================ 2. offset out of range


def test_fetch_beyond_high_watermark_and_below_log_start(shared: BrokerProcess, healthy: Healthy) -> None:
    topic = healthy.topic + ".data"
    with WireClient(shared.bootstrap) as c:
        create_topic(c, topic)
        produce_ok(c, topic, [b"a", b"b", b"c"])
        for offset in (4, 1000, 2**62, -1, -(2**63)):
            p = fetch_partition(c, topic, offset)
            assert (p.error_code, p.high_watermark, p.records) == (OUT_OF_RANGE, 3, b""), offset
        # the high watermark itself is in range: nothing yet, no error
        p = fetch_partition(c, topic, 3)
        assert (p.error_code, p.high_watermark, p.records) == (ErrorCode.NONE, 3, b"")
        assert fetch_all(c, topic) == [(0, b"a"), (1, b"b"), (2, b"c")]
    healthy.check()


def test_fetch_below_log_start_after_retention(short_retention: BrokerProcess) -> None:
    b = short_retention
    with Healthy(b, "small") as h, WireClient(b.bootstrap) as c:
        create_topic(c, "rolled")
        for i in range(4):  # 4 appends of 700 bytes: a segment each (log.segment.bytes=1024)
            assert produce_ok(c, "rolled", [bytes([65 + i]) * 700]) == i
        wait_until(
            lambda: list(list_offsets(c, "rolled", -2).old_style_offsets) == [3],
            "retention deleted the closed segments",
        )
        for offset in (0, 2, 5):
            p = fetch_partition(c, "rolled", offset)
            assert (p.error_code, p.high_watermark, p.records) == (OUT_OF_RANGE, 4, b""), offset
        assert fetch_all(c, "rolled", offset=3) == [(3, b"D" * 700)]
        h.check()


# ====================================================================== 4. corrupt CRC


def _flip_value_byte(ms: bytearray) -> None:
    ms[-1] ^= 0xFF  # last byte of the last message's value


def _flip_crc(ms: bytearray) -> None:
    ms[12] ^= 0x01  # first message's CRC field


def _bad_magic(ms: bytearray) -> None:
    ms[16] = 7  # magic 7, with a CRC that matches it: a bad message, not a bad checksum
    size = struct.unpack_from(">i", ms, 8)[0]
    struct.pack_into(">I", ms, 12, zlib.crc32(bytes(ms[16 : 12 + size])))


def _truncate(ms: bytearray) -> None:
    del ms[-3:]


def _tiny_size(ms: bytearray) -> None:
    struct.pack_into(">i", ms, 8, 3)


@pytest.mark.parametrize(
    "corrupt",
    [_flip_value_byte, _flip_crc, _bad_magic, _truncate, _tiny_size],
    ids=["value-byte-flipped", "crc-flipped", "magic-7", "truncated", "size-too-small"],
)
def test_corrupt_message_set(
    shared: BrokerProcess,
    healthy: Healthy,
    corrupt: Callable[[bytearray], None],
) -> None:
    topic = healthy.topic + ".data"
    with WireClient(shared.bootstrap) as c:
        create_topic(c, topic)
        produce_ok(c, topic, [b"good"])
        ms = bytearray(build_message_set([(b"k1", b"first value"), (b"k2", b"second value")]))
        corrupt(ms)
        p = produce_response(c, topic, 0, bytes(ms))
        assert (p.error_code, p.base_offset) == (ErrorCode.CORRUPT_MESSAGE, -1)
        assert high_watermark(c, topic) == 1, "nothing of a corrupt set may be appended"
        assert fetch_all(c, topic) == [(0, b"good")]
    healthy.check()


# ================================================================ 5. invalid topic names

INVALID_NAMES = ["bad/name", "..", ".", "a" * 250, "with space", "", "../../etc", "ümlaut", "tab\tname"]


def test_invalid_topic_names(shared: BrokerProcess, healthy: Healthy) -> None:
    before = set(os.listdir(shared.data_dir))
    with WireClient(shared.bootstrap) as c:
        md = c.request(METADATA, 0, metadata_body(*INVALID_NAMES, "a" * 249))
        codes = {t.name: t.error_code for t in md.topics}
        expected = dict.fromkeys(INVALID_NAMES, ErrorCode.INVALID_TOPIC_EXCEPTION)
        assert codes == {**expected, "a" * 249: ErrorCode.NONE}
        for name in INVALID_NAMES:
            p = produce_response(c, name, 0, build_message_set([(None, b"x")]))
            assert p.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name
    assert set(os.listdir(shared.data_dir)) - before == {"a" * 249 + "-0"}
    healthy.check()


# ========================================================================== 12. acks=0


def test_acks_zero_gets_no_response(shared: BrokerProcess, healthy: Healthy) -> None:
    topic = healthy.topic + ".data"
    with WireClient(shared.bootstrap) as c:
        c.request(METADATA, 0, metadata_body(topic))
        c.send(PRODUCE, 0, produce_body(topic, 0, build_message_set([(None, b"fire and forget")]), acks=0))
        cid = c.send(METADATA, 0, metadata_body(topic))
        frame = c.read_frame()
        assert frame is not None
        assert kproto.decode_response(METADATA, 0, frame).correlation_id == cid
        assert fetch_all(c, topic) == [(0, b"fire and forget")]
    healthy.check()


def test_acks_zero_error_closes_connection_like_kafka(shared: BrokerProcess, healthy: Healthy) -> None:
    with WireClient(shared.bootstrap) as c:
        c.send(PRODUCE, 0, produce_body(healthy.topic, 99, build_message_set([(None, b"x")]), acks=0))
        c.send(METADATA, 0, metadata_body(healthy.topic))
        expect_closed(c)
    healthy.check()


# ========================================================================== 13. bad acks


@pytest.mark.parametrize("acks", [2, -3, 100])  # -2 is rAck (tests/api/test_rack.py)
def test_invalid_required_acks(shared: BrokerProcess, healthy: Healthy, acks: int) -> None:
    topic = healthy.topic + ".data"
    with WireClient(shared.bootstrap) as c:
        create_topic(c, topic)
        produce_ok(c, topic, [b"before"])
        p = produce_response(c, topic, 0, build_message_set([(None, b"never")]), acks=acks)
        assert (p.error_code, p.base_offset) == (ErrorCode.INVALID_REQUIRED_ACKS, -1)
        assert fetch_all(c, topic) == [(0, b"before")]
    healthy.check()


# ================================================================ 15. long-poll fetch


def test_long_poll_wakes_on_produce(shared: BrokerProcess, healthy: Healthy) -> None:
    topic = healthy.topic + ".data"
    with WireClient(shared.bootstrap) as producer, WireClient(shared.bootstrap) as consumer:
        create_topic(producer, topic)
        produce_ok(producer, topic, [b"old"])
        started = time.monotonic()
        cid = consumer.send(FETCH, 0, fetch_body(topic, 0, 1, max_wait_ms=5000, min_bytes=1))
        # Ordering "the fetch waits" before "the produce" by a condition, not a sleep: the broker
        # process has read the whole fetch (its socket's receive queue is empty).  Its handler then
        # runs to the wait on the partition's append event without yielding to I/O, so a produce
        # read from another socket afterwards can only be appended later (one trio loop).  Were
        # this reasoning wrong, the fetch would find the data at once: the test could pass
        # without exercising the wake-up, never fail falsely.
        wait_broker_read_everything(shared, consumer.sock)
        readable, _, _ = select.select([consumer.sock], [], [], 0)
        assert not readable, "the fetch was answered before any data arrived: min_bytes ignored"
        produce_ok(producer, topic, [b"new"])
        frame = consumer.read_frame()
        elapsed = time.monotonic() - started
        assert frame is not None
        resp = kproto.decode_response(FETCH, 0, frame)
        assert resp.correlation_id == cid
        p = resp.body.responses[0].partitions[0]
        assert (p.error_code, p.high_watermark) == (ErrorCode.NONE, 2)
        assert [(r.offset, r.value) for r in read_message_set(p.records)] == [(1, b"new")]
        assert elapsed < 4, f"answered after {elapsed:.2f}s of max_wait 5s: not woken by the append"
    healthy.check()


def test_long_poll_without_data_returns_empty_after_max_wait(shared: BrokerProcess, healthy: Healthy) -> None:
    topic = healthy.topic + ".data"
    with WireClient(shared.bootstrap) as c:
        create_topic(c, topic)
        produce_ok(c, topic, [b"only"])
        started = time.monotonic()
        p = fetch_partition(c, topic, 1, max_wait_ms=500, min_bytes=1)
        elapsed = time.monotonic() - started
        assert (p.error_code, p.high_watermark, p.records) == (ErrorCode.NONE, 1, b"")
        assert 0.45 <= elapsed < 3, elapsed
    healthy.check()


# ================================================================ 16. ListOffsets v0


def test_list_offsets(shared: BrokerProcess, healthy: Healthy) -> None:
    topic = healthy.topic + ".data"
    with WireClient(shared.bootstrap) as c:
        c.request(METADATA, 0, metadata_body(topic))
        empty = list_offsets(c, topic, -1)
        assert (empty.error_code, list(empty.old_style_offsets)) == (ErrorCode.NONE, [0])
        produce_ok(c, topic, [b"a", b"b", b"c"])
        latest = list_offsets(c, topic, -1)
        assert latest.error_code == ErrorCode.NONE
        assert latest.old_style_offsets[0] == 3 == high_watermark(c, topic)
        assert list(list_offsets(c, topic, -1, max_num=1).old_style_offsets) == [3]
        earliest = list_offsets(c, topic, -2)
        assert (earliest.error_code, list(earliest.old_style_offsets)) == (ErrorCode.NONE, [0])
        for t, part in (("no-such-topic-here", 0), (topic, 5)):
            lo = list_offsets(c, t, -1, partition=part)
            assert (lo.error_code, list(lo.old_style_offsets)) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])
    healthy.check()


# ====================================================== 17. OffsetCommit / OffsetFetch


def test_offset_commit_errors(shared: BrokerProcess, healthy: Healthy) -> None:
    topic = healthy.topic
    with WireClient(shared.bootstrap) as c:

        def commit(group: str, offset: int, metadata: str | None = "", version: int = 1) -> int:
            body = commit_body(group, topic, 0, offset, metadata)
            return int(c.request(OFFSET_COMMIT, version, body).topics[0].partitions[0].error_code)

        never = offset_fetch(c, "group-a", topic)
        assert (never.committed_offset, never.error_code) == (-1, ErrorCode.NONE)

        assert commit("group-a", 5, "m" * 4096) == ErrorCode.NONE  # the limit itself is fine
        assert commit("group-a", 6, "m" * 4097) == ErrorCode.OFFSET_METADATA_TOO_LARGE
        got = offset_fetch(c, "group-a", topic)
        assert (got.committed_offset, got.metadata, got.error_code) == (5, "m" * 4096, ErrorCode.NONE)

        assert commit("", 7) == ErrorCode.INVALID_GROUP_ID
        assert commit("", 7, version=0) == ErrorCode.INVALID_GROUP_ID
        assert commit("group-a", 8, None, version=0) == ErrorCode.NONE  # null metadata is allowed
        assert offset_fetch(c, "group-a", topic, version=0).committed_offset == 8
        never = offset_fetch(c, "group-b", topic)
        assert (never.committed_offset, never.error_code) == (-1, ErrorCode.NONE)
    healthy.check()


def test_committed_offset_survives_kill_9(broker: BrokerProcess) -> None:
    with WireClient(broker.bootstrap) as c:
        c.request(METADATA, 0, metadata_body("t"))
        produce_ok(c, "t", [b"a", b"b"])
        resp = c.request(OFFSET_COMMIT, 1, commit_body("g", "t", 0, 2, "after b"))
        assert resp.topics[0].partitions[0].error_code == ErrorCode.NONE
    broker.kill()
    broker.restart()
    with WireClient(broker.bootstrap) as c:
        got = offset_fetch(c, "g", "t")
        assert (got.committed_offset, got.metadata, got.error_code) == (2, "after b", ErrorCode.NONE)
        assert fetch_all(c, "t") == [(0, b"a"), (1, b"b")]
