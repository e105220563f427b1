"""DeleteGroups v0-v2: delete Empty consumer groups and their committed offsets.

Kafka's per-group answers: an empty group id is INVALID_GROUP_ID; a group
with members is NON_EMPTY_GROUP (its consumers must leave first); a group
the broker knows neither as members nor by committed offsets is
GROUP_ID_NOT_FOUND.  Otherwise the group is forgotten by the coordinator and
its offsets are deleted durably, with Kafka's tombstones in
``__consumer_offsets`` (see :mod:`hmb.groups.offsets`), before the answer
leaves.  A failed write is COORDINATOR_NOT_AVAILABLE, as for a failed
commit, and the offsets stay.  v1 and v2 change nothing the broker answers
(v2 is the flexible encoding).
"""

from __future__ import annotations

import logging

from hmb.api.context import Reply, RequestContext
from hmb.api.leadership import not_coordinator
from hmb.api.registry import handles
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)


async def delete_group(ctx: RequestContext, group_id: str) -> int:
    if not group_id:
        return ErrorCode.INVALID_GROUP_ID
    if not_coordinator(ctx, group_id):  # in a cluster: another broker holds its offsets
        return ErrorCode.NOT_COORDINATOR
    known = ctx.groups.describe(group_id) is not None or group_id in ctx.offsets.groups()
    if not known:
        return ErrorCode.GROUP_ID_NOT_FOUND
    code = ctx.groups.delete(group_id)
    if code != ErrorCode.NONE:
        return code
    try:
        await ctx.offsets.delete(group_id)
    except OSError as exc:
        log.error("deleting the offsets of group %s failed: %s", group_id, exc)
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    return ErrorCode.NONE


@handles(ApiKey.DELETE_GROUPS, versions=(0, 2))
async def handle(ctx: RequestContext) -> Reply:
    results = []
    for group_id in ctx.request.body.groups_names:
        results.append({"group_id": group_id, "error_code": await delete_group(ctx, group_id)})
    return {"throttle_time_ms": 0, "results": results}
