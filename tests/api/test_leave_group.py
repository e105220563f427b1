"""LeaveGroup v0-v3 in process: members leave at once, so the others rebalance now.

v0-v2 name one member and answer with its error (v1 adds throttle_time_ms);
v3 names a batch and answers per member under a top-level NONE.
"""

from __future__ import annotations

import pytest

from kproto import ErrorCode

from .groups import LEAVE, heartbeat, stable_member
from .harness import InProcessBroker


@pytest.mark.parametrize("version", [0, 1, 2])
async def test_leave_group_one_member(group_broker: InProcessBroker, group: str, version: int) -> None:
    b = group_broker
    j = await stable_member(b, group)
    resp = await b.request(LEAVE, version, {"group_id": group, "member_id": j.member_id})
    assert resp.error_code == ErrorCode.NONE
    if version >= 1:
        assert resp.throttle_time_ms == 0
    assert await heartbeat(b, group, 1, j.member_id) == ErrorCode.UNKNOWN_MEMBER_ID
    again = await b.request(LEAVE, version, {"group_id": group, "member_id": j.member_id})
    assert again.error_code == ErrorCode.UNKNOWN_MEMBER_ID


async def test_leave_group_v3_answers_per_member(group_broker: InProcessBroker, group: str) -> None:
    b = group_broker
    j = await stable_member(b, group)
    body = {
        "group_id": group,
        "members": [
            {"member_id": j.member_id, "group_instance_id": None},
            {"member_id": "stranger", "group_instance_id": None},
        ],
    }
    resp = await b.request(LEAVE, 3, body)
    assert resp.error_code == ErrorCode.NONE
    assert [(m.member_id, m.error_code) for m in resp.members] == [
        (j.member_id, ErrorCode.NONE),
        ("stranger", ErrorCode.UNKNOWN_MEMBER_ID),
    ]
    assert await heartbeat(b, group, 1, j.member_id) == ErrorCode.UNKNOWN_MEMBER_ID
