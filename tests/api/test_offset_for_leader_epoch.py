"""OffsetForLeaderEpoch v2-v4 in process, and the leader epoch where other APIs carry it.

The current epoch (0 on one broker) ends at the log end offset; an unknown
newer epoch and "no epoch" are -1/-1; ``current_leader_epoch`` older than the
leader's is FENCED_LEADER_EPOCH, newer UNKNOWN_LEADER_EPOCH, here and in
Fetch (v9+) and ListOffsets (v4+); each partition's ``leader-epoch-checkpoint``
is Kafka's text layout and survives a restart; appended batches carry the
epoch in their ``partitionLeaderEpoch``.
"""

from __future__ import annotations

import struct
from typing import Any

from kproto import ApiKey, ErrorCode

from .bodies import batch, create, fetch_req, produce_one, spec
from .harness import InProcessBroker

FENCED, UNKNOWN = ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH


def body(topic: str, partitions: list[tuple[int, int, int]], replica_id: int = -1) -> dict[str, Any]:
    """``partitions``: (partition, current_leader_epoch, leader_epoch)."""
    return {
        "replica_id": replica_id,
        "topics": [
            {
                "topic": topic,
                "partitions": [
                    {"partition": p, "current_leader_epoch": current, "leader_epoch": epoch}
                    for p, current, epoch in partitions
                ],
            }
        ],
    }


async def ask(b: InProcessBroker, version: int, topic: str, *partitions: tuple[int, int, int]) -> list[Any]:
    resp = await b.request(ApiKey.OFFSET_FOR_LEADER_EPOCH, version, body(topic, list(partitions)))
    assert resp.throttle_time_ms == 0
    [t] = resp.topics
    assert t.topic == topic
    return [(p.partition, p.error_code, p.leader_epoch, p.end_offset) for p in t.partitions]


async def test_every_version_answers_the_end_of_each_epoch(broker: InProcessBroker) -> None:
    await create(broker, 4, spec("ofle", 2))
    for _ in range(3):
        await produce_one(broker, "ofle", batch([b"a", b"b"]))
    for version in (2, 3, 4):
        got = await ask(
            broker,
            version,
            "ofle",
            (0, -1, 0),  # the current epoch, no epoch check: the log end
            (1, 0, 0),  # an empty partition, the right current epoch
            (0, 0, 3),  # a newer epoch than any: unknown
            (0, -1, -1),  # no epoch at all
            (0, 1, 0),  # the client knows a newer leader epoch than this broker
            (0, -5, 0),  # an older one: fenced
            (7, -1, 0),  # no such partition
        )
        assert got == [
            (0, 0, 0, 6),
            (1, 0, 0, 0),
            (0, 0, -1, -1),
            (0, 0, -1, -1),
            (0, UNKNOWN, -1, -1),
            (0, FENCED, -1, -1),
            (7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1),
        ], version


async def test_the_checkpoint_is_kafkas_layout_and_survives_a_restart(broker: InProcessBroker) -> None:
    await create(broker, 4, spec("ckpt", 1))
    path = broker.data_dir / "ckpt-0" / "leader-epoch-checkpoint"
    assert path.read_text() == "0\n1\n0 0\n"
    await produce_one(broker, "ckpt", batch([b"a", b"b", b"c"]))
    broker.restart()
    assert path.read_text() == "0\n1\n0 0\n"
    assert await ask(broker, 4, "ckpt", (0, 0, 0)) == [(0, 0, 0, 3)]
    path.unlink()  # a log written before leader epochs were kept: led from its end on
    broker.restart()
    assert await ask(broker, 4, "ckpt", (0, 0, 0)) == [(0, 0, 0, 3)]  # (its files read at first use)
    assert path.read_text() == "0\n1\n0 3\n"


async def test_appended_batches_carry_the_leader_epoch(broker: InProcessBroker) -> None:
    produced = batch([b"a"])
    assert struct.unpack_from(">i", produced, 12)[0] == -1  # what a Java producer writes
    await produce_one(broker, "stamp", produced)
    resp = await broker.request(ApiKey.FETCH, 11, fetch_req([("stamp", 0, 0)]))
    records = bytes(resp.responses[0].partitions[0].records)
    assert struct.unpack_from(">i", records, 12)[0] == 0


async def test_fetch_and_list_offsets_check_the_current_leader_epoch(broker: InProcessBroker) -> None:
    await produce_one(broker, "epochs", batch([b"a"]))
    for version, current, code in ((9, 1, UNKNOWN), (11, -5, FENCED), (11, 0, 0), (8, 1, 0)):
        req = fetch_req([("epochs", 0, 0)])
        req["topics"][0]["partitions"][0]["current_leader_epoch"] = current
        p = (await broker.request(ApiKey.FETCH, version, req)).responses[0].partitions[0]
        assert p.error_code == code, (version, current)
        assert (p.high_watermark == 1) == (code == 0)
    for version, current, code in ((4, 1, UNKNOWN), (7, -5, FENCED), (9, 0, 0), (3, 1, 0)):
        partition = {"partition_index": 0, "current_leader_epoch": current, "timestamp": -1}
        req = {
            "replica_id": -1,
            "isolation_level": 0,
            "topics": [{"name": "epochs", "partitions": [partition]}],
        }
        p = (await broker.request(ApiKey.LIST_OFFSETS, version, req)).topics[0].partitions[0]
        assert p.error_code == code, (version, current)
        if code == 0 and version >= 4:
            assert (p.offset, p.leader_epoch) == (1, 0)


async def test_delete_records_moves_the_checkpoints_start(broker: InProcessBroker) -> None:
    await produce_one(broker, "moved", batch([b"a", b"b", b"c", b"d"]))
    body = {
        "topics": [{"name": "moved", "partitions": [{"partition_index": 0, "offset": 3}]}],
        "timeout_ms": 1000,
    }
    resp = await broker.request(ApiKey.DELETE_RECORDS, 2, body)
    assert resp.topics[0].partitions[0].low_watermark == 3
    assert (broker.data_dir / "moved-0" / "leader-epoch-checkpoint").read_text() == "0\n1\n0 3\n"
    assert await ask(broker, 4, "moved", (0, 0, 0)) == [(0, 0, 0, 4)]
