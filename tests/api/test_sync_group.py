"""SyncGroup v0-v5 in process: the leader hands out assignments, every member gets its own.

v1 adds throttle_time_ms, v3 the group instance id (ignored: members are
dynamic), v4 is flexible, v5 names the protocol type and name, which must be
the group's (INCONSISTENT_GROUP_PROTOCOL otherwise) and come back in the
answer.  What can fail: a follower answered before the leader synced, an
assignment delivered to the wrong member, a stale generation accepted.
"""

from __future__ import annotations

import pytest
import trio

from kproto import ErrorCode

from .groups import SYNC, join, join_request, member_id, stable_member, sync, sync_body, told_to_rebalance
from .harness import InProcessBroker, in_background, wait_for


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4, 5])
async def test_the_leader_assigns_and_the_follower_waits(
    group_broker: InProcessBroker, group: str, version: int
) -> None:
    b = group_broker
    async with trio.open_nursery() as nursery:
        ja = await stable_member(b, group)
        mid_b = await member_id(b, group)
        pending_b = in_background(nursery, lambda: join_request(b, group, mid_b))
        await wait_for(lambda: told_to_rebalance(b, group, 1, ja.member_id), "b joined")
        await join(b, group, ja.member_id)
        await pending_b.result()
        follower = in_background(nursery, lambda: b.request(SYNC, version, sync_body(group, 2, mid_b)))
        await trio.sleep(0.05)
        assert not follower.done.is_set(), "the follower waits for the leader's SyncGroup"
        leader = await sync(b, group, 2, ja.member_id, {ja.member_id: b"p0", mid_b: b"p1"}, version)
        assert (leader.error_code, leader.assignment) == (ErrorCode.NONE, b"p0")
        got = await follower.result()
        assert (got.error_code, got.assignment) == (ErrorCode.NONE, b"p1")
        if version >= 1:
            assert leader.throttle_time_ms == got.throttle_time_ms == 0
        if version >= 5:
            assert (leader.protocol_type, leader.protocol_name) == ("consumer", "range")
            assert (got.protocol_type, got.protocol_name) == ("consumer", "range")


@pytest.mark.parametrize("version", [0, 3, 4, 5])
async def test_sync_errors(group_broker: InProcessBroker, group: str, version: int) -> None:
    b = group_broker
    j = await stable_member(b, group)
    assert (await sync(b, group, 1, j.member_id, version=version)).error_code == ErrorCode.NONE
    assert (await sync(b, group, 2, j.member_id, version=version)).error_code == ErrorCode.ILLEGAL_GENERATION
    assert (await sync(b, group, 1, "nobody", version=version)).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    unknown_group = await sync(b, group + "-none", 1, j.member_id, version=version)
    assert unknown_group.error_code == ErrorCode.UNKNOWN_MEMBER_ID


@pytest.mark.parametrize(
    ("protocol_type", "protocol_name"), [("consumer", "roundrobin"), ("connect", "range"), (None, "range")]
)
async def test_v5_names_the_groups_protocol(
    group_broker: InProcessBroker, group: str, protocol_type: str | None, protocol_name: str
) -> None:
    b = group_broker
    j = await join(b, group)
    body = {**sync_body(group, 1, j.member_id, {j.member_id: b"x"}), "protocol_type": protocol_type}
    wrong = await b.request(SYNC, 5, {**body, "protocol_name": protocol_name})
    assert wrong.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert (wrong.protocol_type, wrong.protocol_name, wrong.assignment) == (None, None, b"")
    assert b.broker.groups.describe(group).state.value == "CompletingRebalance"  # nothing assigned
    right = await sync(b, group, 1, j.member_id, {j.member_id: b"x"}, version=5)
    assert (right.error_code, right.assignment) == (ErrorCode.NONE, b"x")
