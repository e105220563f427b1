"""SyncGroup v0-5: the leader hands out assignments; every member waits for its own.

A long-poll for followers (until the leader's SyncGroup); a client that
disconnects while waiting gets no answer and its wait ends at once.
Version notes: v3+ ``group_instance_id`` identifies a static member (a
replaced one is answered FENCED_INSTANCE_ID); v4+ flexible; v5+ (KIP-559)
the request must name the group's protocol type and name, and a request
whose names are missing or differ from the group's is answered
INCONSISTENT_GROUP_PROTOCOL; the answer carries the group's.
"""

from __future__ import annotations

from typing import Any

from hmb.api.authz import group_allowed
from hmb.api.context import NO_RESPONSE, Reply, RequestContext
from hmb.api.registry import handles
from hmb.groups.longpoll import unless_gone
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode


def _answer(
    error: int, assignment: bytes = b"", protocol: tuple[str | None, str | None] = (None, None)
) -> Any:
    return {
        "throttle_time_ms": 0,
        "error_code": error,
        "protocol_type": protocol[0],
        "protocol_name": protocol[1],
        "assignment": assignment,
    }


def _inconsistent(ctx: RequestContext) -> bool:
    """v5+: the request's protocol type and name are required and must be the group's."""
    if ctx.request.version < 5:
        return False
    body = ctx.request.body
    if body.protocol_type is None or body.protocol_name is None:
        return True
    group = ctx.groups.describe(body.group_id)
    if group is None or not group.members:
        return False  # an unknown member: the coordinator answers that
    return body.protocol_type != group.protocol_type or body.protocol_name != group.protocol_name


@handles(ApiKey.SYNC_GROUP, versions=(0, 5))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    if not group_allowed(ctx, Operation.READ, body.group_id):
        return _answer(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if _inconsistent(ctx):
        return _answer(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
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
    group = ctx.groups.describe(body.group_id)
    if error != ErrorCode.NONE or group is None:
        return _answer(error, assignment)
    return _answer(error, assignment, (group.protocol_type, group.protocol_name))
