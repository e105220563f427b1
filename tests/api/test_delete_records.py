"""DeleteRecords v0-v2 in process: the log start offset moves forward, durably.

v1 adds nothing a broker answers differently, v2 is flexible.  What a tool
relies on: the low watermark answered is where reads now start; fetching
below it is OFFSET_OUT_OF_RANGE; ListOffsets earliest follows it; whole
segments below it are deleted; the start survives a restart; an offset
beyond the high watermark, an unknown partition, each is refused alone and
deletes nothing.
"""

from __future__ import annotations

from typing import Any

import pytest

from kproto import ApiKey, ErrorCode

from .bodies import batch, create, fetch_one, produce_one, spec
from .harness import InProcessBroker


@pytest.fixture
def broker(make_broker: Any) -> InProcessBroker:
    return make_broker("log.segment.bytes=1024")  # a segment every few appends


def body(topic: str, *deletions: tuple[int, int]) -> dict[str, Any]:
    return {
        "topics": [
            {"name": topic, "partitions": [{"partition_index": p, "offset": o} for p, o in deletions]}
        ],
        "timeout_ms": 1000,
    }


async def earliest(b: InProcessBroker, topic: str) -> int:
    req = {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [
            {
                "name": topic,
                "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -2}],
            }
        ],
    }
    return int((await b.request(ApiKey.LIST_OFFSETS, 5, req)).topics[0].partitions[0].offset)


@pytest.mark.parametrize("version", [0, 1, 2])
async def test_records_below_the_offset_are_gone(broker: InProcessBroker, version: int) -> None:
    await create(broker, 4, spec("t", 2))
    for i in range(20):
        assert (await produce_one(broker, "t", batch([b"v%d" % i + b"x" * 200]))).error_code == 0
    segments_before = len(list((broker.data_dir / "t-0").glob("*.log")))
    resp = await broker.request(ApiKey.DELETE_RECORDS, version, body("t", (0, 13), (1, 5), (7, 1)))
    answers = {p.partition_index: (p.error_code, p.low_watermark) for p in resp.topics[0].partitions}
    assert answers == {
        0: (ErrorCode.NONE, 13),
        1: (ErrorCode.OFFSET_OUT_OF_RANGE, -1),  # partition 1 is empty: 5 is beyond its end
        7: (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1),
    }
    assert len(list((broker.data_dir / "t-0").glob("*.log"))) < segments_before  # whole segments removed
    assert (await fetch_one(broker, "t", 12)).error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    assert (await fetch_one(broker, "t", 13)).error_code == ErrorCode.NONE
    assert await earliest(broker, "t") == 13
    broker.restart()
    assert await earliest(broker, "t") == 13  # kept in log-start-offset-checkpoint
    assert "t 0 13" in (broker.data_dir / "log-start-offset-checkpoint").read_text()


async def test_the_high_watermark_and_never_backwards(broker: InProcessBroker) -> None:
    await create(broker, 4, spec("t"))
    for i in range(3):
        await produce_one(broker, "t", batch([b"v%d" % i]))
    done = await broker.request(ApiKey.DELETE_RECORDS, 2, body("t", (0, -1)))
    assert done.topics[0].partitions[0].low_watermark == 3  # -1: up to the high watermark
    back = await broker.request(ApiKey.DELETE_RECORDS, 2, body("t", (0, 1)))
    assert back.topics[0].partitions[0].low_watermark == 3  # never moves back
    beyond = await broker.request(ApiKey.DELETE_RECORDS, 2, body("t", (0, 99)))
    assert beyond.topics[0].partitions[0].error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    assert await earliest(broker, "t") == 3


async def test_a_topic_made_again_does_not_inherit_the_start(broker: InProcessBroker) -> None:
    await create(broker, 4, spec("again"))
    for i in range(3):
        await produce_one(broker, "again", batch([b"v%d" % i]))
    await broker.request(ApiKey.DELETE_RECORDS, 2, body("again", (0, 2)))
    await broker.broker.logs.delete_topic("again")
    await create(broker, 4, spec("again"))
    broker.restart()
    assert await earliest(broker, "again") == 0
