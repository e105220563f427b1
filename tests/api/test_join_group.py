"""JoinGroup v0-v9 in process: membership, rebalances and their timeouts.

v0 has no rebalance timeout (the session timeout stands in), v1 adds it, v2
throttle_time_ms, v4 hands a first join its member id with
MEMBER_ID_REQUIRED (KIP-394), v5 the group instance id (accepted, the member
stays dynamic: null in the answers), v6 is flexible, v7 answers the protocol
type (null protocol fields on an error), v8 carries a reason, v9
skip_assignment (static members: test_static_membership.py).  What can fail: a rebalance that waits
when every member is there, a member that never rejoins blocking the group,
a silent member never expiring, Kafka's validation codes.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
from trio.testing import MockClock

from hmb.api.context import Session
from hmb.config import ConfigError, from_properties
from kproto import ErrorCode

from .groups import (
    JOIN,
    SYNC,
    heartbeat,
    join,
    join_body,
    join_request,
    leave,
    member_id,
    stable_member,
    sync,
    sync_body,
    told_to_rebalance,
)
from .harness import InProcessBroker, in_background, wait_for


@pytest.mark.parametrize("version", [0, 1, 2, 3])
async def test_a_lone_member_joins_syncs_heartbeats_and_leaves(
    group_broker: InProcessBroker, group: str, version: int
) -> None:
    b = group_broker
    start = trio.current_time()
    j = await b.request(JOIN, version, join_body(group))
    # no initial rebalance delay (Kafka's would be 3 s), nothing waited for (half the session is 5 s)
    assert trio.current_time() - start < 2.5, "a rebalance with every member present must not wait"
    assert (j.error_code, j.generation_id, j.protocol_name) == (ErrorCode.NONE, 1, "range")
    assert j.member_id and j.leader == j.member_id
    assert [(m.member_id, m.metadata) for m in j.members] == [(j.member_id, b"meta")]
    if version >= 2:
        assert j.throttle_time_ms == 0
    s = await sync(b, group, 1, j.member_id, {j.member_id: b"my-partitions"}, version=min(version, 3))
    assert (s.error_code, s.assignment) == (ErrorCode.NONE, b"my-partitions")
    assert await heartbeat(b, group, 1, j.member_id, version=min(version, 3)) == ErrorCode.NONE
    assert await leave(b, group, j.member_id, version=min(version, 2)) == ErrorCode.NONE
    assert await heartbeat(b, group, 1, j.member_id) == ErrorCode.UNKNOWN_MEMBER_ID
    assert await leave(b, group, j.member_id) == ErrorCode.UNKNOWN_MEMBER_ID


@pytest.mark.parametrize("version", [4, 5, 6, 7, 8, 9])
async def test_member_id_required_from_v4(group_broker: InProcessBroker, group: str, version: int) -> None:
    b = group_broker
    first = await b.request(JOIN, version, {**join_body(group), "reason": "starting"})
    assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
    if version >= 7:  # an error answer names no protocol
        assert (first.protocol_type, first.protocol_name) == (None, None)
    mid = str(first.member_id)
    j = await join(b, group, mid, version)
    assert (j.member_id, j.leader, j.generation_id) == (mid, mid, 1)
    if version >= 5:
        assert [m.group_instance_id for m in j.members] == [None]
    if version >= 7:
        assert (j.protocol_type, j.protocol_name) == ("consumer", "range")
    if version >= 9:
        assert j.skip_assignment is False  # a fresh leader assigns
    made_up = await b.request(JOIN, version, join_body(group, "made-up-id"))
    assert (made_up.error_code, made_up.member_id) == (ErrorCode.UNKNOWN_MEMBER_ID, "made-up-id")


async def test_join_errors(group_broker: InProcessBroker, group: str) -> None:
    b = group_broker

    async def error(version: int = 5, **kw: Any) -> int:
        body = join_body(kw.pop("group_id", group), **kw)
        return int((await b.request(JOIN, version, body)).error_code)

    assert await error(group_id="") == ErrorCode.INVALID_GROUP_ID
    assert (
        await error(session_ms=50) == ErrorCode.INVALID_SESSION_TIMEOUT
    )  # below group.min.session.timeout.ms
    assert await error(session_ms=1_800_001) == ErrorCode.INVALID_SESSION_TIMEOUT  # above Kafka's max default
    assert await error(protocols=()) == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert await error(protocol_type="") == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    await stable_member(b, group)
    mid = await member_id(b, group)
    assert await error(member=mid, protocols=(("sticky", b""),)) == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert await error(member=mid, protocol_type="connect") == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


async def test_a_joining_member_rebalances_the_group_without_waiting(
    group_broker: InProcessBroker, group: str
) -> None:
    b = group_broker
    async with trio.open_nursery() as nursery:
        ja = await stable_member(b, group)
        mid_b = await member_id(b, group)
        pending_b = in_background(nursery, lambda: join_request(b, group, mid_b))  # b waits for a to rejoin
        assert await wait_for(lambda: told_to_rebalance(b, group, 1, ja.member_id), "a told") >= 0
        start = trio.current_time()
        ja2 = await join(b, group, ja.member_id)
        jb = await pending_b.result()
        assert trio.current_time() - start < 2.5, "the rebalance completes as soon as every member rejoined"
        assert ja2.generation_id == jb.generation_id == 2
        assert ja2.leader == jb.leader == ja.member_id
        assert sorted(m.member_id for m in ja2.members) == sorted([ja.member_id, mid_b])
        assert list(jb.members) == []  # only the leader gets the members
        # the follower's SyncGroup waits for the leader's
        sync_b = in_background(nursery, lambda: b.request(SYNC, 3, sync_body(group, 2, mid_b)))
        await trio.sleep(0.05)
        assert not sync_b.done.is_set(), "a follower's SyncGroup waits for the leader's"
        assert await heartbeat(b, group, 2, ja.member_id) == ErrorCode.NONE  # CompletingRebalance: fine
        s = await sync(b, group, 2, ja.member_id, {ja.member_id: b"p0", mid_b: b"p1"})
        assert s.assignment == b"p0"
        sb = await sync_b.result()
        assert (sb.error_code, sb.assignment) == (ErrorCode.NONE, b"p1")
        assert await heartbeat(b, group, 2, mid_b) == ErrorCode.NONE
        assert await heartbeat(b, group, 1, mid_b) == ErrorCode.ILLEGAL_GENERATION
        assert (await sync(b, group, 1, mid_b)).error_code == ErrorCode.ILLEGAL_GENERATION
        assert (await sync(b, group, 2, "nobody")).error_code == ErrorCode.UNKNOWN_MEMBER_ID

        # b leaves: a is told to rejoin and is alone in generation 3 at once
        assert await leave(b, group, mid_b) == ErrorCode.NONE
        assert await heartbeat(b, group, 2, ja.member_id) == ErrorCode.REBALANCE_IN_PROGRESS
        ja3 = await join(b, group, ja.member_id)
        assert (ja3.generation_id, [m.member_id for m in ja3.members]) == (3, [ja.member_id])


async def test_a_silent_member_is_dropped_at_its_session_timeout(
    group_broker: InProcessBroker, group: str, virtual_clock: MockClock
) -> None:
    b = group_broker
    async with trio.open_nursery() as nursery:
        ja = await stable_member(b, group, session_ms=1000)
        mid_b = await member_id(b, group, session_ms=1000)
        pending_b = in_background(nursery, lambda: join_request(b, group, mid_b, session_ms=1000))
        await wait_for(lambda: told_to_rebalance(b, group, 1, ja.member_id), "b joined")
        ja2 = await join(b, group, ja.member_id, session_ms=1000)
        jb = await pending_b.result()
        await sync(b, group, 2, ja.member_id, {})
        assert (await sync(b, group, 2, mid_b)).error_code == ErrorCode.NONE
    # b goes quiet; a keeps heartbeating until it is told to rebalance
    waited = await wait_for(
        lambda: told_to_rebalance(b, group, ja2.generation_id, ja.member_id), "b's session expires"
    )
    assert 0.5 < waited < 5
    ja3 = await join(b, group, ja.member_id, session_ms=1000)
    assert (ja3.generation_id, [m.member_id for m in ja3.members]) == (3, [ja.member_id])
    assert await heartbeat(b, group, jb.generation_id, mid_b) == ErrorCode.UNKNOWN_MEMBER_ID


@pytest.mark.parametrize("version", [0, 1, 5])
async def test_a_member_that_does_not_rejoin_is_dropped_at_the_rebalance_timeout(
    group_broker: InProcessBroker, group: str, version: int, virtual_clock: MockClock
) -> None:
    """v1+: the rebalance timeout; v0 has none, so the session timeout is the rebalance timeout."""
    b = group_broker
    kw: dict[str, Any] = (
        {"session_ms": 1500, "rebalance_ms": 1500} if version == 0 else {"rebalance_ms": 1500}
    )
    async with trio.open_nursery() as nursery:
        ja = await stable_member(b, group, **kw)
        mid_b = await member_id(b, group, version, **kw)
        start = trio.current_time()
        pending_b = in_background(nursery, lambda: join_request(b, group, mid_b, version, **kw))
        # a stays alive (heartbeats) but never rejoins
        await wait_for(lambda: told_to_rebalance(b, group, 1, ja.member_id), "rebalance")
        jb = await pending_b.result()
        assert 1.4 < trio.current_time() - start < 5
        assert (jb.error_code, jb.leader, [m.member_id for m in jb.members]) == (
            0,
            jb.member_id,
            [jb.member_id],
        )
        assert await heartbeat(b, group, 1, ja.member_id) == ErrorCode.UNKNOWN_MEMBER_ID


async def test_a_join_whose_client_is_gone_gets_no_answer(group_broker: InProcessBroker, group: str) -> None:
    """The network layer sets ``client_gone`` on EOF: the pending JoinGroup ends, unanswered."""
    b = group_broker
    gone = Session("127.0.0.1:2")
    async with trio.open_nursery() as nursery:
        ja = await stable_member(b, group)
        frame = b.encode(JOIN, 5, join_body(group, await member_id(b, group)))
        pending = in_background(nursery, lambda: b.dispatch(frame, gone))
        await wait_for(lambda: told_to_rebalance(b, group, 1, ja.member_id), "the newcomer joined")
        gone.client_gone.set()
        assert await pending.result() is None


async def test_group_settings_have_kafkas_names(make_broker: Any, virtual_clock: MockClock) -> None:
    cfg = from_properties({})
    assert (cfg.group_min_session_timeout_ms, cfg.group_max_session_timeout_ms) == (6000, 1_800_000)
    assert cfg.group_initial_rebalance_delay_ms == 0  # Kafka: 3000; see hmb/config.py for why
    with pytest.raises(ConfigError, match=r"group\.max\.session\.timeout\.ms"):
        from_properties({"group.min.session.timeout.ms": "10000", "group.max.session.timeout.ms": "9000"})
    with pytest.raises(ConfigError, match=r"group\.initial\.rebalance\.delay\.ms"):
        from_properties({"group.initial.rebalance.delay.ms": "-1"})

    b = make_broker("group.initial.rebalance.delay.ms=1000", "group.max.session.timeout.ms=20000")
    too_short = await b.request(JOIN, 5, join_body("g", session_ms=5000))
    assert too_short.error_code == ErrorCode.INVALID_SESSION_TIMEOUT
    too_long = await b.request(JOIN, 5, join_body("g", session_ms=30_000))
    assert too_long.error_code == ErrorCode.INVALID_SESSION_TIMEOUT
    mid = await member_id(b, "g", session_ms=6000)
    start = trio.current_time()
    j = await join(b, "g", mid, session_ms=6000)
    assert 0.9 < trio.current_time() - start < 5, "a new group waits group.initial.rebalance.delay.ms"
    assert j.generation_id == 1
