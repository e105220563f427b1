"""OffsetDelete v0: delete some of a group's committed offsets.

Kafka's rules, in its order: an empty group id is INVALID_GROUP_ID and a
group known neither by members nor by committed offsets GROUP_ID_NOT_FOUND
(both for the whole request); a group with members whose protocol type is
not ``consumer`` is NON_EMPTY_GROUP (the broker cannot tell what its members
use).  Then per partition: an unknown partition is
UNKNOWN_TOPIC_OR_PARTITION; a topic some member of the group subscribes to
is GROUP_SUBSCRIBED_TO_TOPIC (deleting its offsets would move a running
consumer); otherwise the offset, if there is one, is deleted durably with a
tombstone in ``__consumer_offsets`` and the answer is NONE (also when there
was nothing to delete, as Kafka).  A failed write is
COORDINATOR_NOT_AVAILABLE for the whole request, and nothing is deleted.
"""

from __future__ import annotations

import logging
from typing import Any

from hmb.api.context import Reply, RequestContext
from hmb.api.leadership import not_coordinator
from hmb.api.registry import handles
from hmb.groups.subscription import CONSUMER_PROTOCOL_TYPE
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)


def _group_error(ctx: RequestContext, group_id: str) -> int:
    if not group_id:
        return ErrorCode.INVALID_GROUP_ID
    if not_coordinator(ctx, group_id):  # in a cluster: another broker holds its offsets
        return ErrorCode.NOT_COORDINATOR
    g = ctx.groups.describe(group_id)
    if g is None and group_id not in ctx.offsets.groups():
        return ErrorCode.GROUP_ID_NOT_FOUND
    if g is not None and g.members and g.protocol_type != CONSUMER_PROTOCOL_TYPE:
        return ErrorCode.NON_EMPTY_GROUP
    return ErrorCode.NONE


@handles(ApiKey.OFFSET_DELETE, versions=(0, 0))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    code = _group_error(ctx, body.group_id)
    if code != ErrorCode.NONE:
        return {"error_code": code, "throttle_time_ms": 0, "topics": []}
    subscribed = ctx.groups.subscribed_topics(body.group_id)
    codes: dict[tuple[str, int], int] = {}
    doomed: list[tuple[str, int]] = []
    for topic in body.topics:
        for p in topic.partitions:
            key = (topic.name, p.partition_index)
            if ctx.logs.get(*key) is None:
                codes[key] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif topic.name in subscribed:
                codes[key] = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
            else:
                codes[key] = ErrorCode.NONE
                doomed.append(key)
    try:
        await ctx.offsets.delete(body.group_id, doomed)
    except OSError as exc:
        log.error("deleting offsets of group %s failed: %s", body.group_id, exc)
        return {"error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE, "throttle_time_ms": 0, "topics": []}
    topics: list[dict[str, Any]] = [
        {
            "name": topic.name,
            "partitions": [
                {"partition_index": p.partition_index, "error_code": codes[(topic.name, p.partition_index)]}
                for p in topic.partitions
            ],
        }
        for topic in body.topics
    ]
    return {"error_code": ErrorCode.NONE, "throttle_time_ms": 0, "topics": topics}
