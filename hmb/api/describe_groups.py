"""DescribeGroups v0-6: state, protocol and members of groups (what kafka-consumer-groups shows).

Kafka's summary rules: member metadata, assignments and the protocol name
are shown only for a Stable group; an unknown group is answered with state
"Dead" and error NONE in v0-5, GROUP_ID_NOT_FOUND with a message from v6
(KIP-1043); a group known only from committed offsets is "Empty".  v4+
members carry their group instance id; v5+ flexible.  v3+ authorized
operations: when asked, KIP-430's bit field of what the connection may do
to the group (from the authoriser; every group operation without one),
else INT32_MIN.
"""

from __future__ import annotations

from typing import Any

from hmb.api.authz import OPERATIONS_NOT_ASKED, authorized_operations, group_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.leadership import not_coordinator
from hmb.api.registry import handles
from hmb.groups.coordinator import GroupState
from hmb.security.acl import Operation, ResourceType
from kproto import ApiKey, ErrorCode


def _describe(ctx: RequestContext, group_id: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "group_id": group_id,
        "group_state": GroupState.DEAD.value,
        "protocol_type": "",
        "protocol_data": "",
        "members": [],
        "authorized_operations": OPERATIONS_NOT_ASKED,
    }
    if not group_allowed(ctx, Operation.DESCRIBE, group_id):
        out.update(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, group_state="")
        return out
    if not_coordinator(ctx, group_id):  # in a cluster: another broker coordinates it
        out.update(error_code=ErrorCode.NOT_COORDINATOR, group_state="")
        return out
    g = ctx.groups.describe(group_id)
    if g is None:
        if group_id in ctx.offsets.groups():
            out["group_state"] = GroupState.EMPTY.value
        elif ctx.request.version >= 6:
            out.update(error_code=ErrorCode.GROUP_ID_NOT_FOUND, error_message=f"Group {group_id} not found.")
        return out
    stable = g.state == GroupState.STABLE
    out.update(
        group_state=g.state.value,
        protocol_type=g.protocol_type,
        protocol_data=g.protocol_name if stable else "",
        members=[
            {
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "client_id": m.client_id,
                "client_host": m.client_host,
                "member_metadata": m.protocol_metadata(g.protocol_name) if stable else b"",
                "member_assignment": m.assignment if stable else b"",
            }
            for m in g.members.values()
        ],
    )
    return out


@handles(ApiKey.DESCRIBE_GROUPS, versions=(0, 6))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    groups = []
    for group_id in body.groups:
        out = _describe(ctx, group_id)
        if body.get("include_authorized_operations") and out["error_code"] == ErrorCode.NONE:
            out["authorized_operations"] = authorized_operations(ctx, ResourceType.GROUP, group_id)
        groups.append(out)
    return {"throttle_time_ms": 0, "groups": groups}
