"""SyncGroup v0-3: the leader hands out assignments; every member waits for its own.

A long-poll for followers (until the leader's SyncGroup); a client that
disconnects while waiting gets no answer and its wait ends at once.  v3's
``group_instance_id`` identifies a static member: a replaced one is
answered FENCED_INSTANCE_ID.
"""

from __future__ import annotations

from hmb.api.authz import group_allowed
from hmb.api.context import NO_RESPONSE, Reply, RequestContext
from hmb.api.leadership import not_coordinator
from hmb.api.registry import handles
from hmb.groups.longpoll import unless_gone
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode


@handles(ApiKey.SYNC_GROUP, versions=(0, 3))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    if not group_allowed(ctx, Operation.READ, body.group_id):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED, "assignment": b""}
    if not_coordinator(ctx, body.group_id):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.NOT_COORDINATOR, "assignment": b""}
    result = await unless_gone(
        ctx.client_gone,
        lambda: ctx.groups.sync(
            body.group_id,
            body.generation_id,
            body.member_id,
            [(a.member_id, bytes(a.assignment)) for a in body.assignments],
            body.get("group_instance_id"),
        ),
    )
    if result is None:
        return NO_RESPONSE
    error, assignment = result
    return {"throttle_time_ms": 0, "error_code": error, "assignment": assignment}
