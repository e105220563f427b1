"""Static group membership (KIP-345) and committed leader epochs (KIP-320), in process.

Static membership spans JoinGroup v5, SyncGroup v3, Heartbeat v3,
LeaveGroup v3, OffsetCommit v7 and DescribeGroups v4, so it has a module of
its own.  What a user relies on: a consumer with ``group.instance.id`` that
restarts within its session timeout gets its partitions back and nobody
else rebalances; the instance it replaced is fenced (FENCED_INSTANCE_ID) in
every request it still sends.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from kproto import ApiKey, ErrorCode

from .bodies import make_topic
from .groups import (
    COMMIT,
    DESCRIBE,
    HEARTBEAT,
    LEAVE,
    commit_body,
    fetch_offset,
    join_body,
    sync_body,
)
from .harness import InProcessBroker, in_background, wait_for

GEN = 2  # the generation two_static_members ends in


def static_join(group: str, instance: str, member: str = "", **kw: Any) -> dict[str, Any]:
    return {**join_body(group, member, **kw), "group_instance_id": instance}


async def heartbeat(b: InProcessBroker, group: str, gen: int, member: str, instance: str | None) -> int:
    body = {"group_id": group, "generation_id": gen, "member_id": member, "group_instance_id": instance}
    return int((await b.request(HEARTBEAT, 3, body)).error_code)


async def two_static_members(b: InProcessBroker, group: str) -> tuple[Any, Any]:
    """Members "a" and "b" of one generation, synced with assignments A and B."""
    first = await b.request(ApiKey.JOIN_GROUP, 5, static_join(group, "a"))
    assert first.error_code == ErrorCode.NONE  # a static member needs no MEMBER_ID_REQUIRED round trip
    async with trio.open_nursery() as nursery:
        second = in_background(nursery, lambda: b.request(ApiKey.JOIN_GROUP, 5, static_join(group, "b")))
        await wait_for(lambda: b.broker.groups.describe(group).state.value == "PreparingRebalance", "b joins")
        ja = await b.request(ApiKey.JOIN_GROUP, 5, static_join(group, "a", first.member_id))
        jb = await second.result()
    assert ja.error_code == jb.error_code == ErrorCode.NONE
    assert ja.generation_id == jb.generation_id == GEN
    leader, follower = (ja, jb) if ja.leader == ja.member_id else (jb, ja)
    assert {(m.member_id, m.group_instance_id) for m in leader.members} == {
        (ja.member_id, "a"),
        (jb.member_id, "b"),
    }
    assignments = {ja.member_id: b"A", jb.member_id: b"B"}
    async with trio.open_nursery() as nursery:
        waiting = in_background(
            nursery, lambda: b.request(ApiKey.SYNC_GROUP, 3, sync_body(group, GEN, follower.member_id))
        )
        await b.request(ApiKey.SYNC_GROUP, 3, sync_body(group, GEN, leader.member_id, assignments))
        assert (await waiting.result()).error_code == ErrorCode.NONE
    return ja, jb


async def test_a_restarted_static_member_gets_its_assignment_back_without_a_rebalance(
    group_broker: InProcessBroker, group: str
) -> None:
    b = group_broker
    ja, jb = await two_static_members(b, group)
    again = await b.request(ApiKey.JOIN_GROUP, 5, static_join(group, "a"))
    assert again.error_code == ErrorCode.NONE
    assert again.member_id != ja.member_id and again.generation_id == GEN
    assert await heartbeat(b, group, GEN, jb.member_id, "b") == ErrorCode.NONE  # b is not asked to rejoin
    synced = await b.request(ApiKey.SYNC_GROUP, 3, sync_body(group, GEN, again.member_id))
    assert (synced.error_code, synced.assignment) == (ErrorCode.NONE, b"A")
    described = await b.request(DESCRIBE, 4, {"groups": [group], "include_authorized_operations": False})
    members = {(m.member_id, m.group_instance_id) for m in described.groups[0].members}
    assert members == {(again.member_id, "a"), (jb.member_id, "b")}
    assert described.groups[0].group_state == "Stable"


@pytest.mark.parametrize("version", [5, 9])
async def test_a_restarted_static_leader_is_told_not_to_assign_from_v9(
    group_broker: InProcessBroker, group: str, version: int
) -> None:
    b = group_broker
    ja, jb = await two_static_members(b, group)
    leader_instance = "a" if ja.leader == ja.member_id else "b"
    again = await b.request(ApiKey.JOIN_GROUP, version, static_join(group, leader_instance))
    assert again.error_code == ErrorCode.NONE and again.leader == again.member_id
    assert again.generation_id == GEN  # no rebalance
    assert {m.group_instance_id for m in again.members} == {"a", "b"}
    if version >= 9:
        assert again.skip_assignment is True
    follower = jb if leader_instance == "a" else ja
    assert await heartbeat(b, group, GEN, follower.member_id, "b" if leader_instance == "a" else "a") == 0


async def test_the_replaced_instance_is_fenced_everywhere(group_broker: InProcessBroker, group: str) -> None:
    b = group_broker
    topic = group + ".t"
    await make_topic(b, topic)
    ja, _jb = await two_static_members(b, group)
    await b.request(ApiKey.JOIN_GROUP, 5, static_join(group, "a"))  # the restarted instance
    old = ja.member_id
    assert await heartbeat(b, group, GEN, old, "a") == ErrorCode.FENCED_INSTANCE_ID
    synced = await b.request(ApiKey.SYNC_GROUP, 3, {**sync_body(group, GEN, old), "group_instance_id": "a"})
    assert synced.error_code == ErrorCode.FENCED_INSTANCE_ID
    rejoin = await b.request(ApiKey.JOIN_GROUP, 5, static_join(group, "a", old))
    assert rejoin.error_code == ErrorCode.FENCED_INSTANCE_ID
    commit = {**commit_body(group, GEN, old, topic, 5), "group_instance_id": "a"}
    code = (await b.request(COMMIT, 7, commit)).topics[0].partitions[0].error_code
    assert code == ErrorCode.FENCED_INSTANCE_ID
    assert (await fetch_offset(b, group, topic)).committed_offset == -1  # nothing was committed
    leave = {"group_id": group, "members": [{"member_id": old, "group_instance_id": "a"}]}
    answer = await b.request(LEAVE, 3, leave)
    assert answer.members[0].error_code == ErrorCode.FENCED_INSTANCE_ID
    assert len(b.broker.groups.describe(group).members) == 2  # nobody left


async def test_a_static_member_leaves_by_instance_id_and_the_rest_rebalance(
    group_broker: InProcessBroker, group: str
) -> None:
    b = group_broker
    _ja, jb = await two_static_members(b, group)
    leave = {"group_id": group, "members": [{"member_id": "", "group_instance_id": "a"}]}
    assert (await b.request(LEAVE, 3, leave)).members[0].error_code == ErrorCode.NONE
    assert await heartbeat(b, group, GEN, jb.member_id, "b") == ErrorCode.REBALANCE_IN_PROGRESS
    assert "a" not in b.broker.groups.describe(group).static_members


async def test_a_static_member_with_new_protocols_triggers_a_rebalance(
    group_broker: InProcessBroker, group: str
) -> None:
    b = group_broker
    _ja, jb = await two_static_members(b, group)
    async with trio.open_nursery() as nursery:
        changed = static_join(group, "a", protocols=(("range", b"new metadata"),))
        waiting = in_background(nursery, lambda: b.request(ApiKey.JOIN_GROUP, 5, changed))
        await wait_for(
            lambda: b.broker.groups.describe(group).state.value == "PreparingRebalance", "a rebalance"
        )
        assert await heartbeat(b, group, GEN, jb.member_id, "b") == ErrorCode.REBALANCE_IN_PROGRESS
        rejoined = await b.request(ApiKey.JOIN_GROUP, 5, static_join(group, "b", jb.member_id))
        assert rejoined.generation_id == GEN + 1
        assert (await waiting.result()).generation_id == GEN + 1


async def test_committed_leader_epochs_are_kept_and_survive_a_restart(
    group_broker: InProcessBroker, group: str
) -> None:
    b = group_broker
    topic = group + ".t"
    await make_topic(b, topic)
    body = commit_body(group, -1, "", topic, 41, committed_leader_epoch=7)
    assert (await b.request(COMMIT, 7, body)).topics[0].partitions[0].error_code == ErrorCode.NONE
    got = await fetch_offset(b, group, topic, 5)
    assert (got.committed_offset, got.committed_leader_epoch) == (41, 7)
    old = await fetch_offset(b, group, topic, 4)  # v4 has no epoch field: the offset all the same
    assert old.committed_offset == 41
    b.restart()
    got = await fetch_offset(b, group, topic, 5)
    assert (got.committed_offset, got.committed_leader_epoch, got.metadata) == (41, 7, "md")
