"""CreatePartitions v0-v3 in process: topics grow, refusals change nothing.

v1 and v3 change nothing the broker answers, v2 is the flexible encoding:
each version is driven once through the whole story.  What can fail: a
refused request that still adds partitions, validate_only that creates,
new partitions that are not writable, readable or durable, a count
published before every new partition exists.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from kproto import ApiKey, ErrorCode

from .bodies import batch, create, fetch_one, partitions_of, produce_one, spec
from .harness import InProcessBroker, in_background

CREATE_PARTITIONS = ApiKey.CREATE_PARTITIONS


def grow(name: str, count: int, assignments: list[list[int]] | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "count": count,
        "assignments": None if assignments is None else [{"broker_ids": a} for a in assignments],
    }


async def create_partitions(
    b: InProcessBroker, version: int, *topics: dict[str, Any], validate_only: bool = False
) -> dict[str, tuple[int, str | None]]:
    body = {"topics": list(topics), "timeout_ms": 5000, "validate_only": validate_only}
    resp = await b.request(CREATE_PARTITIONS, version, body)
    assert resp.throttle_time_ms == 0
    return {r.name: (r.error_code, r.error_message) for r in resp.results}


async def growing_started(b: InProcessBroker, topic: str) -> None:
    """Wait (a checkpoint at a time) until the log manager is adding partitions to ``topic``."""
    with trio.fail_after(10):
        while topic not in b.broker.logs.growing:
            await trio.sleep(0)


def dirs_of(b: InProcessBroker, topic: str) -> list[str]:
    return sorted(p.name for p in b.data_dir.iterdir() if p.name.rpartition("-")[0] == topic)


@pytest.mark.parametrize("version", range(4))
async def test_grows_a_topic_per_version(broker: InProcessBroker, version: int) -> None:
    topic = f"cp{version}"
    assert (await create(broker, 0, spec(topic, 1)))[topic].error_code == 0
    assert (await produce_one(broker, topic, batch([b"old"]))).error_code == 0
    assert await create_partitions(broker, version, grow(topic, 3)) == {topic: (ErrorCode.NONE, None)}
    assert await partitions_of(broker, topic) == 3
    assert dirs_of(broker, topic) == [f"{topic}-0", f"{topic}-1", f"{topic}-2"]
    # the new partitions take records at offset 0; the old one kept its own
    p2 = await produce_one(broker, topic, batch([b"new"]), partition=2)
    assert (p2.error_code, p2.base_offset) == (0, 0)
    assert (await fetch_one(broker, topic, 0)).high_watermark == 1
    # they survive a restart
    broker.restart()
    assert await partitions_of(broker, topic) == 3
    assert (await produce_one(broker, topic, batch([b"again"]), partition=2)).base_offset == 1


async def test_explicit_assignments_on_this_broker(broker: InProcessBroker) -> None:
    await create(broker, 0, spec("assigned", 1))
    node = broker.config.node_id
    assert await create_partitions(broker, 3, grow("assigned", 3, [[node], [node]])) == {
        "assigned": (ErrorCode.NONE, None)
    }
    assert await partitions_of(broker, "assigned") == 3


async def test_validate_only_checks_and_creates_nothing(broker: InProcessBroker) -> None:
    await create(broker, 0, spec("dry", 2))
    out = await create_partitions(broker, 1, grow("dry", 5), grow("dry-less", 1), validate_only=True)
    assert out["dry"] == (ErrorCode.NONE, None)
    assert out["dry-less"][0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert await partitions_of(broker, "dry") == 2
    assert dirs_of(broker, "dry") == ["dry-0", "dry-1"]


async def test_refusals_change_nothing(broker: InProcessBroker) -> None:
    await create(broker, 0, spec("three", 3))
    await create(broker, 0, spec("dup", 1))
    node = broker.config.node_id
    out = await create_partitions(
        broker,
        2,
        grow("three", 2),  # fewer
        grow("ghost", 4),
        grow("dup", 2),
        grow("dup", 3),
    )
    assert out["ghost"][0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert out["dup"] == (ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
    code, message = out["three"]
    assert code == ErrorCode.INVALID_PARTITIONS and message is not None and "3 partition(s)" in message
    same = await create_partitions(broker, 2, grow("three", 3))
    assert same["three"] == (ErrorCode.INVALID_PARTITIONS, "Topic already has 3 partition(s).")
    # assignments: one per new partition, each exactly this broker
    for bad in (
        [[node]],
        [[node], []],
        [[node], [node, node]],
        [[node], [node + 1]],
        [[node], [node, node + 1]],
    ):
        code, message = (await create_partitions(broker, 3, grow("three", 5, bad)))["three"]
        assert code == ErrorCode.INVALID_REPLICA_ASSIGNMENT, (bad, code, message)
    assert await partitions_of(broker, "three") == 3
    assert await partitions_of(broker, "dup") == 1
    assert await partitions_of(broker, "ghost") is None
    assert dirs_of(broker, "three") == ["three-0", "three-1", "three-2"]
    assert dirs_of(broker, "ghost") == []


async def test_more_than_kafkas_bound_is_refused_whole(broker: InProcessBroker) -> None:
    await create(broker, 0, spec("small", 1))
    await create(broker, 0, spec("huge", 1))
    out = await create_partitions(broker, 0, grow("small", 2), grow("huge", 10_002))
    assert {code for code, _ in out.values()} == {ErrorCode.POLICY_VIOLATION}
    assert await partitions_of(broker, "small") == 1
    assert await partitions_of(broker, "huge") == 1


async def test_other_clients_are_served_while_partitions_are_created(broker: InProcessBroker) -> None:
    """Growing by many partitions yields to other requests, and publishes the count at the end."""
    await create(broker, 0, spec("big", 1))
    await create(broker, 0, spec("busy", 1))
    seen_during: list[int | None] = []
    async with trio.open_nursery() as nursery:
        growing = in_background(nursery, lambda: create_partitions(broker, 3, grow("big", 200)))
        while not growing.done.is_set():
            assert (await produce_one(broker, "busy", batch([b"x"]))).error_code == 0
            seen_during.append(await partitions_of(broker, "big"))
            await trio.sleep(0)  # a request may finish without a checkpoint: let the other task run
        assert await growing.result() == {"big": (ErrorCode.NONE, None)}
    assert len(seen_during) > 1, "no other request was served while the partitions were created"
    assert set(seen_during[:-1]) <= {1}, "a partial partition count was published"
    assert await partitions_of(broker, "big") == 200


async def test_a_second_request_for_the_same_topic_meanwhile_is_refused(broker: InProcessBroker) -> None:
    await create(broker, 0, spec("race", 1))
    async with trio.open_nursery() as nursery:
        first = in_background(nursery, lambda: create_partitions(broker, 3, grow("race", 100)))
        await growing_started(broker, "race")
        second = await create_partitions(broker, 3, grow("race", 50))
        assert second["race"][0] == ErrorCode.INVALID_PARTITIONS
        assert await first.result() == {"race": (ErrorCode.NONE, None)}
    assert await partitions_of(broker, "race") == 100


async def test_deleted_while_growing_leaves_nothing(broker: InProcessBroker) -> None:
    await create(broker, 0, spec("doomed", 1))
    async with trio.open_nursery() as nursery:
        growing = in_background(nursery, lambda: create_partitions(broker, 3, grow("doomed", 100)))
        await growing_started(broker, "doomed")
        resp = await broker.request(ApiKey.DELETE_TOPICS, 3, {"topic_names": ["doomed"], "timeout_ms": 1000})
        assert resp.responses[0].error_code == ErrorCode.NONE
        assert (await growing.result())["doomed"][0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert await partitions_of(broker, "doomed") is None
    assert [p for p in broker.data_dir.iterdir() if p.name.startswith("doomed-")] == []
