"""OffsetFetch v0-5: a group's committed positions (-1 and no error when none).

v2+ may ask with a null topic list for every committed offset of the group
and carries a top-level error code; v5 returns the leader epoch committed
with the offset (-1 when the commit carried none).  Offsets are returned whatever the
group's state, as Kafka does: the group may not use group management at all.
"""

from __future__ import annotations

from typing import Any

from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from kproto import ApiKey, ErrorCode


def _partition(index: int, offset: int, metadata: str, error: int, epoch: int = -1) -> dict[str, Any]:
    return {
        "partition_index": index,
        "committed_offset": offset,
        "committed_leader_epoch": epoch,
        "metadata": metadata,
        "error_code": error,
    }


@handles(ApiKey.OFFSET_FETCH, versions=(0, 5))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    services = ctx.services
    topics: list[dict[str, Any]] = []
    if body.topics is None:  # v2+: everything the group has committed
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for (topic, index), committed in services.offsets.of_group(body.group_id).items():
            by_topic.setdefault(topic, []).append(
                _partition(
                    index, committed.offset, committed.metadata, ErrorCode.NONE, committed.leader_epoch
                )
            )
        topics = [{"name": t, "partitions": parts} for t, parts in by_topic.items()]
    for topic in body.topics or ():
        partitions = []
        for index in topic.partition_indexes:
            if services.logs.get(topic.name, index) is None:
                partitions.append(_partition(index, -1, "", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
                continue
            stored = services.offsets.get(body.group_id, topic.name, index)
            if stored is None:
                partitions.append(_partition(index, -1, "", ErrorCode.NONE))
            else:
                partitions.append(
                    _partition(index, stored.offset, stored.metadata, ErrorCode.NONE, stored.leader_epoch)
                )
        topics.append({"name": topic.name, "partitions": partitions})
    return {"throttle_time_ms": 0, "topics": topics, "error_code": ErrorCode.NONE}
