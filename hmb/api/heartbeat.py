"""Heartbeat v0-4: a member is alive; REBALANCE_IN_PROGRESS tells it to rejoin.

v3+ ``group_instance_id``: a replaced static member gets FENCED_INSTANCE_ID.
v4 is the same request in the flexible layout.
"""

from __future__ import annotations

from hmb.api.authz import group_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode


@handles(ApiKey.HEARTBEAT, versions=(0, 4))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    if not group_allowed(ctx, Operation.READ, body.group_id):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED}
    error = ctx.groups.heartbeat(
        body.group_id, body.generation_id, body.member_id, body.get("group_instance_id")
    )
    return {"throttle_time_ms": 0, "error_code": error}
