"""ListOffsets v0-v11 in process: offsets by time, at every version boundary.

v0 answers a list of segment start offsets (``max_num_offsets``); v1 one
offset and its timestamp; v2 adds the isolation level and throttle_time_ms
(without an open transaction read_committed sees everything: the
transactional cases are in ``test_read_committed.py``); v4 leader epochs (-1 here); v6 is
flexible; v7 the max-timestamp lookup (-3), v8 earliest local (-4), v9
latest tiered (-5), v10 a timeout, v11 earliest pending upload (-6).  What
can fail: latest/earliest confused, a time lookup off by one record or one
segment, a field missing at some version.
"""

from __future__ import annotations

from typing import Any

from kproto import ApiKey, ErrorCode
from kproto.records import Compression, build_message_set

from .bodies import batch, produce_one
from .harness import InProcessBroker

LIST_OFFSETS = ApiKey.LIST_OFFSETS


async def list_offsets(
    b: InProcessBroker,
    topic: str,
    timestamp: int,
    version: int,
    partition: int = 0,
    max_num: int = 1,
    isolation_level: int = 1,
) -> Any:
    body = {
        "replica_id": -1,
        "isolation_level": isolation_level,
        "timeout_ms": 1000,
        "topics": [
            {
                "name": topic,
                "partitions": [
                    {
                        "partition_index": partition,
                        "current_leader_epoch": -1,
                        "timestamp": timestamp,
                        "max_num_offsets": max_num,
                    }
                ],
            }
        ],
    }
    return await b.request(LIST_OFFSETS, version, body)


async def test_list_offsets_versions(broker: InProcessBroker) -> None:
    topic = "lo-modern"
    base = 1_800_000_000_000
    await produce_one(broker, topic, batch([b"a", b"b", b"c"], timestamps=[base, base + 10, base + 20]))
    await produce_one(broker, topic, build_message_set([(None, b"m1", base + 30)], magic=1), 2)
    await produce_one(
        broker, topic, batch([b"d", b"e"], timestamps=[base + 40, base + 50], compression=Compression.SNAPPY)
    )
    v0 = (await list_offsets(broker, topic, -1, 0)).topics[0].partitions[0]
    assert list(v0.old_style_offsets) == [6]
    for version in range(1, 12):
        resp = await list_offsets(broker, topic, -1, version)
        p = resp.topics[0].partitions[0]
        assert (p.error_code, p.offset, p.timestamp) == (0, 6, -1)
        assert (await list_offsets(broker, topic, -2, version)).topics[0].partitions[0].offset == 0
        if version >= 2:
            assert resp.throttle_time_ms == 0
        if version >= 4:
            assert p.leader_epoch == -1
    cases = {
        base - 5: (0, base),
        base: (0, base),
        base + 11: (2, base + 20),
        base + 25: (3, base + 30),
        base + 31: (4, base + 40),
        base + 45: (5, base + 50),
    }
    for target, (offset, ts) in cases.items():
        p = (await list_offsets(broker, topic, target, 5)).topics[0].partitions[0]
        assert (p.error_code, p.offset, p.timestamp) == (0, offset, ts), target
    after = (await list_offsets(broker, topic, base + 51, 1)).topics[0].partitions[0]
    assert (after.error_code, after.offset, after.timestamp) == (0, -1, -1)
    unknown = (await list_offsets(broker, topic, -1, 5, partition=9)).topics[0].partitions[0]
    assert unknown.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    # the special timestamps, each from the version that defines it
    special = {-3: (7, (0, 5, base + 50)), -4: (8, (0, 0, -1)), -5: (9, (0, -1, -1)), -6: (11, (0, -1, -1))}
    for timestamp, (since, answer) in special.items():
        early = (await list_offsets(broker, topic, timestamp, since - 1)).topics[0].partitions[0]
        assert (early.error_code, early.offset) == (ErrorCode.INVALID_REQUEST, -1), timestamp
        p = (await list_offsets(broker, topic, timestamp, since)).topics[0].partitions[0]
        assert (p.error_code, p.offset, p.timestamp) == answer, timestamp


async def test_max_timestamp_is_the_first_record_with_the_largest_time(broker: InProcessBroker) -> None:
    base = 1_800_000_000_000
    await produce_one(broker, "late", batch([b"a", b"b", b"c"], timestamps=[base, base + 90, base + 10]))
    await produce_one(broker, "late", batch([b"d"], timestamps=[base + 90]))  # equal: the first one wins
    p = (await list_offsets(broker, "late", -3, 7)).topics[0].partitions[0]
    assert (p.offset, p.timestamp) == (1, base + 90)
    empty = await list_offsets(broker, "empty-topic", -3, 11, partition=0)
    assert empty.topics[0].partitions[0].error_code in (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 0)


async def test_list_offsets_v0_segment_starts(make_broker: Any) -> None:
    """v0 (Kafka 0.8's getOffsetsBefore): segment start offsets before a time, newest first, at most n."""
    b = make_broker("log.segment.bytes=1024")
    for _ in range(10):
        await produce_one(b, "lo-v0", build_message_set([(None, b"x" * 300)]), 0)
    latest = list(
        (await list_offsets(b, "lo-v0", -1, 0, max_num=100)).topics[0].partitions[0].old_style_offsets
    )
    assert latest[0] == 10 and latest[-1] == 0 and latest == sorted(latest, reverse=True) and len(latest) > 2
    two = (await list_offsets(b, "lo-v0", -1, 0, max_num=2)).topics[0].partitions[0].old_style_offsets
    assert list(two) == latest[:2]
    earliest = (await list_offsets(b, "lo-v0", -2, 0, max_num=10)).topics[0].partitions[0].old_style_offsets
    assert list(earliest) == [0]
    unknown = (await list_offsets(b, "lo-v0-missing", -1, 0)).topics[0].partitions[0]
    assert unknown.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


async def test_list_offsets_by_time_across_segments(make_broker: Any) -> None:
    b = make_broker("log.segment.bytes=2048")
    base = 1_900_000_000_000
    for i in range(40):
        await produce_one(b, "lo-segs", batch([b"x" * 100], timestamps=[base + i * 1000]))
    assert len(list((b.data_dir / "lo-segs-0").glob("*.log"))) > 3
    for i in (0, 7, 23, 39):
        p = (await list_offsets(b, "lo-segs", base + i * 1000 - 1, 4)).topics[0].partitions[0]
        assert (p.offset, p.timestamp) == (i, base + i * 1000)
