"""OffsetCommit v0-v9 in process: who may commit, and what is stored.

v0 has no generation or member (always a "simple" commit); v1 adds them
and a per-partition commit timestamp; v2-v4 a retention time (stored, as
Kafka does); v3 throttle_time_ms; v6 the committed leader epoch
(test_static_membership.py); v7 the group instance id (ignored); v8 is
flexible; v9 answers a commit with a generation into an unknown group
GROUP_ID_NOT_FOUND instead of ILLEGAL_GENERATION.  What can fail: a member of
an old generation committing over the new one, a simple commit into a
group with members, a commit acknowledged but not stored.
"""

from __future__ import annotations

import pytest
import trio

from hmb.groups.offsets import OffsetStore
from kproto import ErrorCode

from .bodies import make_topic
from .groups import (
    COMMIT,
    commit,
    commit_body,
    fetch_offset,
    join,
    join_request,
    member_id,
    stable_member,
    sync,
    told_to_rebalance,
)
from .harness import InProcessBroker, in_background, wait_for


async def test_commits_are_checked_against_the_generation(group_broker: InProcessBroker, group: str) -> None:
    b = group_broker
    topic = group + ".t"
    await make_topic(b, topic)
    for version in range(1, 10):  # a simple (assign()) commit into a group nobody joined
        assert await commit(b, group, -1, "", topic, version, version=version) == ErrorCode.NONE
    assert await commit(b, group, 0, "", topic, 9, version=0) == ErrorCode.NONE  # v0 has no generation
    ja = await stable_member(b, group)
    for version in range(1, 10):
        assert await commit(b, group, 1, ja.member_id, topic, 10 + version, version=version) == ErrorCode.NONE
        assert (
            await commit(b, group, 2, ja.member_id, topic, 0, version=version) == ErrorCode.ILLEGAL_GENERATION
        )
        assert await commit(b, group, 1, "stranger", topic, 0, version=version) == ErrorCode.UNKNOWN_MEMBER_ID
        assert await commit(b, group, -1, "", topic, 0, version=version) == ErrorCode.UNKNOWN_MEMBER_ID
    assert (await fetch_offset(b, group, topic)).committed_offset == 19
    async with trio.open_nursery() as nursery:
        # while a rebalance is prepared, members of the current generation may still commit
        mid_b = await member_id(b, group)
        pending_b = in_background(nursery, lambda: join_request(b, group, mid_b))
        await wait_for(lambda: told_to_rebalance(b, group, 1, ja.member_id), "rebalance")
        assert await commit(b, group, 1, ja.member_id, topic, 20) == ErrorCode.NONE
        await join(b, group, ja.member_id)
        await pending_b.result()
    # between JoinGroup and SyncGroup: not yet
    assert await commit(b, group, 2, ja.member_id, topic, 21) == ErrorCode.REBALANCE_IN_PROGRESS
    assert await commit(b, group, 1, ja.member_id, topic, 21) == ErrorCode.ILLEGAL_GENERATION
    await sync(b, group, 2, ja.member_id, {})
    assert await commit(b, group, 2, mid_b, topic, 22) == ErrorCode.NONE
    assert (await fetch_offset(b, group, topic)).committed_offset == 22


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
async def test_commit_errors_per_partition(group_broker: InProcessBroker, group: str, version: int) -> None:
    b = group_broker
    await make_topic(b, "oc-errors")
    body = commit_body(group, -1, "", "oc-errors", 5)
    body["topics"][0]["partitions"].append({**body["topics"][0]["partitions"][0], "partition_index": 9})
    big = {**body["topics"][0]["partitions"][0], "partition_index": 1, "committed_metadata": "m" * 4097}
    body["topics"][0]["partitions"].append(big)
    resp = await b.request(COMMIT, version, body)
    assert [(p.partition_index, p.error_code) for p in resp.topics[0].partitions] == [
        (0, ErrorCode.NONE),
        (9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        (1, ErrorCode.OFFSET_METADATA_TOO_LARGE),  # offset.metadata.max.bytes: 4096
    ]
    if version >= 3:
        assert resp.throttle_time_ms == 0
    assert (await fetch_offset(b, group, "oc-errors")).committed_offset == 5
    assert (await fetch_offset(b, group, "oc-errors", partition=1)).committed_offset == -1
    no_group = await b.request(COMMIT, version, commit_body("", -1, "", "oc-errors", 6))
    assert no_group.topics[0].partitions[0].error_code == ErrorCode.INVALID_GROUP_ID


async def test_a_commit_that_cannot_be_stored(
    group_broker: InProcessBroker, group: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = group_broker
    await make_topic(b, "oc-disk")

    async def disk_full(self: OffsetStore, *args: object, **kw: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(OffsetStore, "commit", disk_full)
    assert await commit(b, group, -1, "", "oc-disk", 3) == ErrorCode.COORDINATOR_NOT_AVAILABLE


@pytest.mark.parametrize("version", [7, 8, 9])
async def test_a_generation_into_an_unknown_group(
    group_broker: InProcessBroker, group: str, version: int
) -> None:
    b = group_broker
    topic = group + ".t"
    await make_topic(b, topic)
    expected = ErrorCode.GROUP_ID_NOT_FOUND if version >= 9 else ErrorCode.ILLEGAL_GENERATION
    assert await commit(b, group, 3, "someone", topic, 5, version=version) == expected
    assert await commit(b, group, -1, "", topic, 6, version=version) == ErrorCode.NONE  # simple: created
    assert (await fetch_offset(b, group, topic)).committed_offset == 6
    # the group is known now (from its offsets): a generation is illegal, the group is found
    assert await commit(b, group, 3, "someone", topic, 7, version=version) == ErrorCode.ILLEGAL_GENERATION
