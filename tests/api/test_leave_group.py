"""LeaveGroup v0-v5 in process: members leave at once, so the others rebalance now.

v0-v2 name one member and answer with its error (v1 adds throttle_time_ms);
v3+ name a batch and answer per member under a top-level NONE; v4 is
flexible; v5 gives each member a reason (logged).
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


@pytest.mark.parametrize("version", [3, 4, 5])
async def test_leave_group_v3_answers_per_member(
    group_broker: InProcessBroker, group: str, version: int, caplog: pytest.LogCaptureFixture
) -> None:
    b = group_broker
    j = await stable_member(b, group)
    body = {
        "group_id": group,
        "members": [
            {"member_id": j.member_id, "group_instance_id": None, "reason": "shutting down"},
            {"member_id": "stranger", "group_instance_id": None, "reason": None},
        ],
    }
    with caplog.at_level("INFO", logger="hmb.api.leave_group"):
        resp = await b.request(LEAVE, version, body)
    assert ("shutting down" in caplog.text) == (version >= 5)
    assert resp.error_code == ErrorCode.NONE
    assert [(m.member_id, m.error_code) for m in resp.members] == [
        (j.member_id, ErrorCode.NONE),
        ("stranger", ErrorCode.UNKNOWN_MEMBER_ID),
    ]
    assert await heartbeat(b, group, 1, j.member_id) == ErrorCode.UNKNOWN_MEMBER_ID
