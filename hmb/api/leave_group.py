"""LeaveGroup v0-3: members leave at once instead of timing out, so the rest rebalance now.

v0-2 name one member and answer with its error; v3 names a batch and
answers per member under a top-level NONE (Kafka's layout).  A v3 member
without a member id is looked up by its group instance id.
"""

from __future__ import annotations

from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from kproto import ApiKey, ErrorCode


@handles(ApiKey.LEAVE_GROUP, versions=(0, 3))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    groups = ctx.groups
    if ctx.request.version < 3:
        return {"throttle_time_ms": 0, "error_code": groups.leave(body.group_id, body.member_id)}
    members = [
        {
            "member_id": m.member_id,
            "group_instance_id": m.group_instance_id,
            "error_code": groups.leave(body.group_id, m.member_id, m.group_instance_id),
        }
        for m in body.members
    ]
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "members": members}
