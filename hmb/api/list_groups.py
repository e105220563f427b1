"""ListGroups v0-2: every group this broker coordinates.

As Kafka does, that includes groups known only from committed offsets
(consumers that assign partitions themselves), with an empty protocol type.
"""

from __future__ import annotations

from hmb.api.authz import cluster_allowed, group_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode


@handles(ApiKey.LIST_GROUPS, versions=(0, 2))
async def handle(ctx: RequestContext) -> Reply:
    known = dict(ctx.groups.listing())
    for group_id in ctx.offsets.groups():
        known.setdefault(group_id, "")
    if not cluster_allowed(ctx, Operation.DESCRIBE):  # else only the groups it may describe
        known = {g: kind for g, kind in known.items() if group_allowed(ctx, Operation.DESCRIBE, g)}
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "groups": [{"group_id": g, "protocol_type": known[g]} for g in sorted(known)],
    }
