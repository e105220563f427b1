"""LeaveGroup v0-5: members leave at once instead of timing out, so the rest rebalance now.

v0-2 name one member and answer with its error; v3+ name a batch and
answer per member under a top-level NONE (Kafka's layout).  A v3+ member
without a member id is looked up by its group instance id.  v4+ flexible;
v5+ each member's ``reason`` (KIP-800) is logged with its departure.
"""

from __future__ import annotations

import logging

from hmb.api.authz import group_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)


@handles(ApiKey.LEAVE_GROUP, versions=(0, 5))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    groups = ctx.groups
    if not group_allowed(ctx, Operation.READ, body.group_id):
        denied = {"throttle_time_ms": 0, "error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED}
        return denied if ctx.request.version < 3 else {**denied, "members": []}
    if ctx.request.version < 3:
        return {"throttle_time_ms": 0, "error_code": groups.leave(body.group_id, body.member_id)}
    for m in body.members:
        if m.get("reason"):
            log.info("group %s: member %r leaves: %s", body.group_id, m.member_id, m.reason)
    members = [
        {
            "member_id": m.member_id,
            "group_instance_id": m.group_instance_id,
            "error_code": groups.leave(body.group_id, m.member_id, m.group_instance_id),
        }
        for m in body.members
    ]
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "members": members}
