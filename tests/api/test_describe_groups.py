"""DescribeGroups v0-v6 in process: state, protocol and members, as kafka-consumer-groups shows them.

v1 adds throttle_time_ms, v3 authorized operations (KIP-430: with no
authoriser every group operation, Read, Describe and Delete), v4 the
members' group instance id (null for dynamic members), v5 is flexible.
Kafka's summary rules: metadata and assignments only for a Stable group; an
unknown group is NONE and "Dead" (v6: GROUP_ID_NOT_FOUND with a message,
KIP-1043); a group known only from committed offsets is "Empty".
"""

from __future__ import annotations

import trio

from kproto import ErrorCode

from .bodies import make_topic
from .groups import (
    DESCRIBE,
    INT32_MIN,
    commit,
    join,
    join_request,
    member_id,
    stable_member,
    told_to_rebalance,
)
from .harness import CLIENT_ID, PEER, InProcessBroker, in_background, wait_for


async def test_describe_groups_per_version(group_broker: InProcessBroker, group: str) -> None:
    b = group_broker
    topic = group + ".t"
    simple = group + "-simple"
    await make_topic(b, topic)
    j = await stable_member(b, group, assignment=b"assigned")
    assert await commit(b, simple, -1, "", topic, 1) == ErrorCode.NONE
    local_host = PEER.rsplit(":", 1)[0]
    for version in range(7):
        body = {"groups": [group, simple, group + "-unknown"], "include_authorized_operations": True}
        resp = await b.request(DESCRIBE, version, body)
        stable, empty, dead = resp.groups
        assert (stable.error_code, stable.group_id, stable.group_state) == (0, group, "Stable")
        assert (stable.protocol_type, stable.protocol_data) == ("consumer", "range")
        [m] = stable.members
        assert (m.member_id, m.client_id, m.client_host) == (j.member_id, CLIENT_ID, "/" + local_host)
        assert (m.member_metadata, m.member_assignment) == (b"meta", b"assigned")
        assert (empty.group_state, list(empty.members)) == ("Empty", [])
        dead_error = ErrorCode.GROUP_ID_NOT_FOUND if version >= 6 else ErrorCode.NONE
        assert (dead.error_code, dead.group_state, dead.protocol_type) == (dead_error, "Dead", "")
        if version >= 6:
            assert dead.error_message == f"Group {group}-unknown not found."
            assert (stable.error_message, empty.error_message, empty.error_code) == (None, None, 0)
        if version >= 1:
            assert resp.throttle_time_ms == 0
        if version >= 3:
            assert stable.authorized_operations == (1 << 3) | (1 << 6) | (1 << 8)  # Read, Delete, Describe
            unasked = await b.request(
                DESCRIBE, version, {"groups": [group], "include_authorized_operations": False}
            )
            assert unasked.groups[0].authorized_operations == INT32_MIN
            # the bit field is for groups that were found
            assert dead.authorized_operations == (INT32_MIN if version >= 6 else stable.authorized_operations)
        if version >= 4:
            assert m.group_instance_id is None


async def test_members_show_without_metadata_while_a_rebalance_is_prepared(
    group_broker: InProcessBroker, group: str
) -> None:
    """Kafka's summary rule: member metadata only for a Stable group."""
    b = group_broker
    j = await stable_member(b, group, assignment=b"assigned")
    async with trio.open_nursery() as nursery:
        mid_b = await member_id(b, group)
        pending_b = in_background(nursery, lambda: join_request(b, group, mid_b))
        await wait_for(lambda: told_to_rebalance(b, group, 1, j.member_id), "rebalance")
        g = (
            await b.request(DESCRIBE, 4, {"groups": [group], "include_authorized_operations": False})
        ).groups[0]
        assert (g.group_state, g.protocol_data) == ("PreparingRebalance", "")
        assert sorted(m.member_id for m in g.members) == sorted([j.member_id, mid_b])
        assert {m.member_metadata for m in g.members} == {b""}
        await join(b, group, j.member_id)
        await pending_b.result()
