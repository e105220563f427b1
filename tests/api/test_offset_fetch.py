"""OffsetFetch v0-v10 in process: a group's committed positions (-1 and no error when none).

v2 adds the top-level error code and "null topics = everything the group
committed"; v3 throttle_time_ms; v5 the committed leader epoch; v6 is
flexible; v7 asks for stable offsets (UNSTABLE_OFFSET_COMMIT while an open
transaction commits one);
v8 asks for several groups at once, each answered with its own error code;
v9 adds the member id and epoch (not checked for a classic group); v10 (and
OffsetCommit v10) names topics by id.
What can fail: offsets lost across a restart, the "all" form missing
partitions, metadata mangled.
"""

from __future__ import annotations

import pytest

from kproto import ErrorCode

from .bodies import make_topic
from .groups import (
    COMMIT,
    FETCH_OFFSETS,
    LIST,
    commit,
    commit_body,
    fetch_offset,
    fetch_offsets_body,
    fetched_topics,
    heartbeat,
    stable_member,
)
from .harness import InProcessBroker


async def test_offset_fetch_versions(group_broker: InProcessBroker, group: str) -> None:
    b = group_broker
    topic = group + ".t"
    await make_topic(b, topic)
    body = commit_body(group, -1, "", topic, 41, committed_leader_epoch=7)
    body["topics"][0]["partitions"].append(
        {
            "partition_index": 1,
            "committed_offset": 42,
            "committed_leader_epoch": 7,
            "committed_metadata": None,
        }
    )
    resp = await b.request(COMMIT, 7, body)
    assert [p.error_code for p in resp.topics[0].partitions] == [0, 0]
    assert resp.throttle_time_ms == 0
    # v2-4 retention time is accepted
    retained = commit_body(group, -1, "", topic, 43)
    retained["retention_time_ms"] = 86_400_000
    assert (await b.request(COMMIT, 2, retained)).topics[0].partitions[0].error_code == ErrorCode.NONE

    for version in range(10):
        p = await fetch_offset(b, group, topic, version)
        assert (p.committed_offset, p.metadata, p.error_code) == (43, "md", ErrorCode.NONE)
        if version >= 5:
            assert p.committed_leader_epoch == -1  # a commit with a retention time: schema v1, no epoch
    unknown = await fetch_offset(b, group + "-never", topic)
    assert (unknown.committed_offset, unknown.metadata, unknown.error_code) == (-1, "", ErrorCode.NONE)
    missing = await fetch_offset(b, group, topic + "-missing")
    assert (missing.committed_offset, missing.error_code) == (-1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)

    for version in range(2, 10):  # null topics: everything the group committed
        every = await b.request(FETCH_OFFSETS, version, fetch_offsets_body(group, None, version))
        assert (every.error_code if version < 8 else every.groups[0].error_code) == ErrorCode.NONE
        if version >= 3:
            assert every.throttle_time_ms == 0
        got = {
            (t.name, p.partition_index): (p.committed_offset, p.metadata)
            for t in fetched_topics(every, version)
            for p in t.partitions
        }
        assert got == {(topic, 0): (43, "md"), (topic, 1): (42, "")}
    nothing = await b.request(FETCH_OFFSETS, 5, {"group_id": group + "-never", "topics": None})
    assert (nothing.error_code, list(nothing.topics)) == (ErrorCode.NONE, [])


async def test_committed_offsets_survive_a_clean_restart(group_broker: InProcessBroker, group: str) -> None:
    b = group_broker
    topic = "resume"
    await make_topic(b, topic)
    j = await stable_member(b, group)
    assert await commit(b, group, 1, j.member_id, topic, 5) == ErrorCode.NONE
    b.restart()
    p = await fetch_offset(b, group, topic)
    assert (p.committed_offset, p.metadata) == (5, "md")
    # membership is not durable: the old member is unknown and rejoins
    assert await heartbeat(b, group, 1, j.member_id) == ErrorCode.UNKNOWN_MEMBER_ID
    assert await commit(b, group, 1, j.member_id, topic, 6) == ErrorCode.ILLEGAL_GENERATION
    j2 = await stable_member(b, group)
    assert await commit(b, group, j2.generation_id, j2.member_id, topic, 7) == ErrorCode.NONE
    b.restart()
    assert (await fetch_offset(b, group, topic)).committed_offset == 7
    listed = await b.request(LIST, 2, {})
    assert (group, "") in [(g.group_id, g.protocol_type) for g in listed.groups]


@pytest.mark.parametrize("version", [8, 9])
async def test_v8_fetches_several_groups_at_once(
    group_broker: InProcessBroker, group: str, version: int
) -> None:
    b = group_broker
    topic = group + ".t"
    await make_topic(b, topic)
    j = await stable_member(b, group)
    assert await commit(b, group, 1, j.member_id, topic, 11) == ErrorCode.NONE
    other = group + "-other"
    assert await commit(b, other, -1, "", topic, 22) == ErrorCode.NONE
    asked = [
        {"name": topic, "partition_indexes": [0]},
        {"name": topic + "-missing", "partition_indexes": [0]},
    ]
    body = {
        "groups": [
            # a classic group's member id and epoch are not checked (Kafka checks them for KIP-848 groups)
            {"group_id": group, "member_id": "anyone", "member_epoch": 99, "topics": asked},
            {"group_id": other, "member_id": None, "member_epoch": -1, "topics": None},
            {"group_id": group + "-never", "member_id": None, "member_epoch": -1, "topics": asked},
        ],
        "require_stable": True,
    }
    resp = await b.request(FETCH_OFFSETS, version, body)
    got = {
        g.group_id: (
            g.error_code,
            {(t.name, p.error_code): p.committed_offset for t in g.topics for p in t.partitions},
        )
        for g in resp.groups
    }
    assert got == {
        group: (
            ErrorCode.NONE,
            {(topic, 0): 11, (topic + "-missing", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION): -1},
        ),
        other: (ErrorCode.NONE, {(topic, 0): 22}),
        group + "-never": (
            ErrorCode.NONE,
            {(topic, 0): -1, (topic + "-missing", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION): -1},
        ),
    }


@pytest.mark.parametrize("version", [7, 8, 9])
async def test_require_stable_waits_out_an_open_transactions_offset(
    broker: InProcessBroker, version: int
) -> None:
    from . import txn
    from .test_txn_offset_commit import commit_body as txn_commit_body
    from .test_txn_offset_commit import commit_code

    await txn.topic(broker, "stable-src")
    p = await txn.producer(broker, f"tx-stable-{version}")
    assert await p.add_offsets("stable-g") == ErrorCode.NONE
    assert await commit_code(broker, txn_commit_body(p, "stable-g", "stable-src", 7)) == ErrorCode.NONE

    async def fetch(stable: bool) -> tuple[int, int]:
        body = fetch_offsets_body("stable-g", [{"name": "stable-src", "partition_indexes": [0]}], version)
        body["require_stable"] = stable
        part = fetched_topics(await broker.request(FETCH_OFFSETS, version, body), version)[0].partitions[0]
        return part.error_code, part.committed_offset

    assert await fetch(True) == (ErrorCode.UNSTABLE_OFFSET_COMMIT, -1)  # the client asks again
    assert await fetch(False) == (ErrorCode.NONE, -1)  # the last committed: none yet
    assert await p.end(True) == ErrorCode.NONE
    assert await fetch(True) == (ErrorCode.NONE, 7)


async def test_v10_names_topics_by_id(group_broker: InProcessBroker, group: str) -> None:
    """OffsetCommit and OffsetFetch v10 name topics by id; the offsets stay the topic's, so v9
    reads by name what v10 committed by id; an unknown id is UNKNOWN_TOPIC_ID."""
    b = group_broker
    topic = group + ".ids"
    await make_topic(b, topic)
    topic_id, unknown = b.broker.logs.topic_ids[topic], b"\x09" * 16
    body = commit_body(group, -1, "", topic, 5)
    known = body["topics"][0]
    known["topic_id"] = topic_id
    del known["name"]
    body["topics"].append({"topic_id": unknown, "partitions": known["partitions"]})
    resp = await b.request(COMMIT, 10, body)
    assert [(t.topic_id, [p.error_code for p in t.partitions]) for t in resp.topics] == [
        (topic_id, [ErrorCode.NONE]),
        (unknown, [ErrorCode.UNKNOWN_TOPIC_ID]),
    ]
    assert (await fetch_offset(b, group, topic, 9)).committed_offset == 5
    asked = [{"topic_id": t, "partition_indexes": [0]} for t in (topic_id, unknown)]
    got = fetched_topics(await b.request(FETCH_OFFSETS, 10, fetch_offsets_body(group, asked, 10)), 10)
    assert [(t.topic_id, [(p.committed_offset, p.error_code) for p in t.partitions]) for t in got] == [
        (topic_id, [(5, ErrorCode.NONE)]),
        (unknown, [(-1, ErrorCode.UNKNOWN_TOPIC_ID)]),
    ]
    everything = fetched_topics(await b.request(FETCH_OFFSETS, 10, fetch_offsets_body(group, None, 10)), 10)
    assert [(t.topic_id, [p.committed_offset for p in t.partitions]) for t in everything] == [(topic_id, [5])]
