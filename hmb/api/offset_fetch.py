"""OffsetFetch v0-1: a group's committed positions (-1 and no error when none)."""

from __future__ import annotations

from hmb.api.context import Reply, RequestContext
from kproto import ApiKey, ErrorCode

API_KEY = ApiKey.OFFSET_FETCH
VERSIONS = (0, 1)


async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    broker = ctx.broker
    topics = []
    for topic in body.topics:
        partitions = []
        for index in topic.partition_indexes:
            if broker.logs.get(topic.name, index) is None:
                partitions.append(
                    {
                        "partition_index": index,
                        "committed_offset": -1,
                        "metadata": "",
                        "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                    }
                )
                continue
            committed = broker.offsets.get(body.group_id, topic.name, index)
            partitions.append(
                {
                    "partition_index": index,
                    "committed_offset": committed.offset if committed else -1,
                    "metadata": committed.metadata if committed else "",
                    "error_code": ErrorCode.NONE,
                }
            )
        topics.append({"name": topic.name, "partitions": partitions})
    return {"topics": topics}
