"""DeleteRecords v0-v2: move partitions' log start offsets forward (kafka-delete-records.sh).

Per partition: records below the given offset are deleted (-1: the high
watermark) and the answer is the new low watermark (the log start offset).
Kafka's errors, each for its partition alone: UNKNOWN_TOPIC_OR_PARTITION,
OFFSET_OUT_OF_RANGE for an offset beyond the high watermark (nothing
deleted), TOPIC_AUTHORIZATION_FAILED without Delete on the topic.  The new
start is persisted in the log dir's ``log-start-offset-checkpoint`` before
the answer; fetching below it is then OFFSET_OUT_OF_RANGE, and ListOffsets
earliest answers it.  v2 is flexible; ``timeout_ms`` is not needed: a single
broker's deletion is done when it answers.
"""

from __future__ import annotations

import logging
from typing import Any

from hmb.api.authz import topics_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.errors import LOG_ERRORS, error_code
from hmb.api.leadership import misdirected
from hmb.api.registry import handles
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)


@handles(ApiKey.DELETE_RECORDS, versions=(0, 2))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    deletable = topics_allowed(ctx, Operation.DELETE, (t.name for t in body.topics))
    topics: list[dict[str, Any]] = []
    for topic in body.topics:
        partitions = []
        for p in topic.partitions:
            low, code = -1, int(ErrorCode.NONE)
            plog = ctx.logs.get(topic.name, p.partition_index)
            if topic.name not in deletable:
                code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif misdirected(ctx, topic.name, p.partition_index):
                code = ErrorCode.NOT_LEADER_OR_FOLLOWER
            elif plog is None:
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                try:
                    low = await ctx.logs.delete_records(plog, p.offset)
                except LOG_ERRORS as exc:
                    log.info("DeleteRecords %s-%d below %d: %s", topic.name, p.partition_index, p.offset, exc)
                    code = error_code(exc, ApiKey.DELETE_RECORDS, ctx.request.version)
            partitions.append(
                {"partition_index": p.partition_index, "low_watermark": low, "error_code": code}
            )
        topics.append({"name": topic.name, "partitions": partitions})
    return {"throttle_time_ms": 0, "topics": topics}
