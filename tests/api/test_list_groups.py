"""ListGroups v0-v2 in process: every group this broker coordinates.

v1 adds throttle_time_ms; v2 changes nothing else.  As Kafka does, the list
includes groups known only from committed offsets (consumers that assign
partitions themselves), with an empty protocol type.
"""

from __future__ import annotations

import pytest

from kproto import ErrorCode

from .bodies import make_topic
from .groups import LIST, commit, stable_member
from .harness import InProcessBroker


@pytest.mark.parametrize("version", [0, 1, 2])
async def test_list_groups(group_broker: InProcessBroker, group: str, version: int) -> None:
    b = group_broker
    topic = group + ".t"
    simple = group + "-simple"
    empty = await b.request(LIST, version, {})
    assert (empty.error_code, list(empty.groups)) == (ErrorCode.NONE, [])
    await make_topic(b, topic)
    await stable_member(b, group)
    assert await commit(b, simple, -1, "", topic, 1) == ErrorCode.NONE
    listed = await b.request(LIST, version, {})
    assert listed.error_code == ErrorCode.NONE
    if version >= 1:
        assert listed.throttle_time_ms == 0
    pairs = {(g.group_id, g.protocol_type) for g in listed.groups}
    assert {(group, "consumer"), (simple, "")} <= pairs
    assert [g.group_id for g in listed.groups] == sorted(g.group_id for g in listed.groups)
