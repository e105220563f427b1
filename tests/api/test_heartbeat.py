"""Heartbeat v0-v4 in process: a member is alive, or is told what to do.

v1 adds throttle_time_ms, v4 is flexible, v3 the group instance id (a replaced static
member is fenced: tests/api/test_static_membership.py).  The answers a
consumer acts on: NONE, REBALANCE_IN_PROGRESS (rejoin), ILLEGAL_GENERATION
and UNKNOWN_MEMBER_ID (rejoin from scratch).
"""

from __future__ import annotations

import pytest
import trio

from kproto import ErrorCode

from .groups import (
    HEARTBEAT,
    heartbeat,
    join,
    join_request,
    member_id,
    stable_member,
    sync,
    told_to_rebalance,
)
from .harness import InProcessBroker, in_background, wait_for


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
async def test_heartbeat_answers(group_broker: InProcessBroker, group: str, version: int) -> None:
    b = group_broker
    body = {"group_id": group, "generation_id": 1, "member_id": "", "group_instance_id": None}
    async with trio.open_nursery() as nursery:
        ja = await stable_member(b, group)
        resp = await b.request(HEARTBEAT, version, {**body, "member_id": ja.member_id})
        assert resp.error_code == ErrorCode.NONE
        if version >= 1:
            assert resp.throttle_time_ms == 0
        assert await heartbeat(b, group, 2, ja.member_id, version) == ErrorCode.ILLEGAL_GENERATION
        assert await heartbeat(b, group, 1, "stranger", version) == ErrorCode.UNKNOWN_MEMBER_ID
        assert await heartbeat(b, group + "-none", 1, ja.member_id, version) == ErrorCode.UNKNOWN_MEMBER_ID
        # a newcomer: the member is told to rejoin, and is fine again in the new generation
        mid_b = await member_id(b, group)
        pending_b = in_background(nursery, lambda: join_request(b, group, mid_b))
        await wait_for(lambda: told_to_rebalance(b, group, 1, ja.member_id), "b joined")
        assert await heartbeat(b, group, 1, ja.member_id, version) == ErrorCode.REBALANCE_IN_PROGRESS
        await join(b, group, ja.member_id)
        await pending_b.result()
        assert await heartbeat(b, group, 2, ja.member_id, version) == ErrorCode.NONE  # completing: fine
        await sync(b, group, 2, ja.member_id, {})
        assert await heartbeat(b, group, 2, mid_b, version) == ErrorCode.NONE
