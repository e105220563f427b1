"""ListOffsets v0-v5 (Kafka 0.8 "Offsets"): offsets by time.

v0 is Kafka 0.8's ``getOffsetsBefore``: up to ``max_num_offsets`` segment
start offsets at or before a time, newest first.  From v1 each partition
gets one answer: for -1 (latest) the log end offset, for -2 (earliest) the
log start offset, otherwise the first offset whose record timestamp is at
or after the time (offset and timestamp -1 when there is none, as Kafka
answers).  The v2+ isolation level changes nothing here: without
transactions the last stable offset is the log end offset.  v4+ leader
epochs are -1: clients that see an epoch move go and ask
OffsetForLeaderEpoch, which this broker does not serve.
"""

from __future__ import annotations

from typing import Any

from hmb.api.authz import topics_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.log.partition import PartitionLog
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode
from kproto.messages.list_offsets import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP


async def _one_offset(plog: PartitionLog, timestamp: int) -> tuple[int, int, int]:
    """``(error_code, timestamp, offset)`` of a v1+ lookup."""
    if timestamp == LATEST_TIMESTAMP:
        return ErrorCode.NONE, -1, plog.high_watermark
    if timestamp == EARLIEST_TIMESTAMP:
        return ErrorCode.NONE, -1, plog.log_start_offset
    if timestamp < 0:
        return ErrorCode.INVALID_REQUEST, -1, -1  # -3 (max timestamp) and others come with v7+
    match = await plog.offset_for_timestamp(timestamp)
    if match is None:
        return ErrorCode.NONE, -1, -1
    return ErrorCode.NONE, match.timestamp, match.offset


@handles(ApiKey.LIST_OFFSETS, versions=(0, 5))
async def handle(ctx: RequestContext) -> Reply:
    version = ctx.request.version
    topics = []
    describable = topics_allowed(ctx, Operation.DESCRIBE, (t.name for t in ctx.request.body.topics))
    for topic in ctx.request.body.topics:
        partitions = []
        for p in topic.partitions:
            answer: dict[str, Any] = {
                "partition_index": p.partition_index,
                "error_code": ErrorCode.NONE,
                "old_style_offsets": [],
                "timestamp": -1,
                "offset": -1,
                "leader_epoch": -1,
            }
            plog = ctx.logs.get(topic.name, p.partition_index)
            if topic.name not in describable:
                answer["error_code"] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif plog is None:
                answer["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif version == 0:
                answer["old_style_offsets"] = plog.offsets_before(p.timestamp, p.max_num_offsets)
            else:
                answer["error_code"], answer["timestamp"], answer["offset"] = await _one_offset(
                    plog, p.timestamp
                )
            partitions.append(answer)
        topics.append({"name": topic.name, "partitions": partitions})
    return {"throttle_time_ms": 0, "topics": topics}
