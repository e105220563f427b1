"""ListGroups v0-v5 in process: every group this broker coordinates.

v1 adds throttle_time_ms; v2 changes nothing else; v3 is flexible; v4 adds
each group's state and a states filter, v5 each group's type ("classic")
and a types filter (both filters without regard to case).  As Kafka does, the list
includes groups known only from committed offsets (consumers that assign
partitions themselves), with an empty protocol type.
"""

from __future__ import annotations

import pytest

from kproto import ErrorCode

from .bodies import make_topic
from .groups import LIST, commit, stable_member
from .harness import InProcessBroker

NO_FILTER = {"states_filter": [], "types_filter": []}


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4, 5])
async def test_list_groups(group_broker: InProcessBroker, group: str, version: int) -> None:
    b = group_broker
    topic = group + ".t"
    simple = group + "-simple"
    empty = await b.request(LIST, version, NO_FILTER)
    assert (empty.error_code, list(empty.groups)) == (ErrorCode.NONE, [])
    await make_topic(b, topic)
    await stable_member(b, group)
    assert await commit(b, simple, -1, "", topic, 1) == ErrorCode.NONE
    listed = await b.request(LIST, version, NO_FILTER)
    assert listed.error_code == ErrorCode.NONE
    if version >= 1:
        assert listed.throttle_time_ms == 0
    pairs = {(g.group_id, g.protocol_type) for g in listed.groups}
    assert {(group, "consumer"), (simple, "")} <= pairs
    assert [g.group_id for g in listed.groups] == sorted(g.group_id for g in listed.groups)
    if version >= 4:
        assert {(g.group_id, g.group_state) for g in listed.groups} >= {(group, "Stable"), (simple, "Empty")}
    if version >= 5:
        assert {g.group_type for g in listed.groups} == {"classic"}


async def test_state_and_type_filters(group_broker: InProcessBroker, group: str) -> None:
    b = group_broker
    topic = group + ".t"
    simple = group + "-simple"
    await make_topic(b, topic)
    await stable_member(b, group)
    assert await commit(b, simple, -1, "", topic, 1) == ErrorCode.NONE

    async def listed(version: int, states: list[str], types: tuple[str, ...] = ()) -> set[str]:
        resp = await b.request(LIST, version, {"states_filter": states, "types_filter": list(types)})
        return {g.group_id for g in resp.groups}

    assert await listed(4, []) == {group, simple}
    assert await listed(4, ["Stable"]) == {group}
    assert await listed(4, ["empty", "PREPARINGREBALANCE"]) == {simple}
    assert await listed(4, ["Dead"]) == set()
    assert await listed(5, [], ("Classic",)) == {group, simple}
    assert await listed(5, ["stable"], ("classic", "consumer")) == {group}
    assert await listed(5, [], ("consumer", "share")) == set()  # KIP-848 and share groups: none here
