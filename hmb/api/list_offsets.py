"""ListOffsets (Kafka 0.8 "Offsets"): offsets before a time, newest first."""

from __future__ import annotations

from hmb.api.context import Reply, RequestContext
from kproto import ApiKey, ErrorCode

API_KEY = ApiKey.LIST_OFFSETS
VERSIONS = (0, 0)


async def handle(ctx: RequestContext) -> Reply:
    topics = []
    for topic in ctx.request.body.topics:
        partitions = []
        for p in topic.partitions:
            plog = ctx.broker.logs.get(topic.name, p.partition_index)
            if plog is None:
                code, offsets = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, []
            else:
                code, offsets = ErrorCode.NONE, plog.offsets_before(p.timestamp, p.max_num_offsets)
            partitions.append(
                {"partition_index": p.partition_index, "error_code": code, "old_style_offsets": offsets}
            )
        topics.append({"name": topic.name, "partitions": partitions})
    return {"topics": topics}
