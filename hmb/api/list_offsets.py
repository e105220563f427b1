"""ListOffsets v0-v11 (Kafka 0.8 "Offsets"): offsets by time.

v0 is Kafka 0.8's ``getOffsetsBefore``: up to ``max_num_offsets`` segment
start offsets at or before a time, newest first.  From v1 each partition
gets one answer, by the special timestamps Kafka defines:

    -1 latest              the log end offset
    -2 earliest            the log start offset (DeleteRecords moves it)
    -3 max timestamp (v7+) the first record with the largest timestamp, and that timestamp
    -4 earliest local (v8+) the log start offset: every segment is local here
    -5 latest tiered (v9+) offset and timestamp -1: nothing is tiered here
    -6 earliest pending upload (v11+) offset and timestamp -1, likewise

and any time >= 0 the first offset whose record timestamp is at or after it
(offset and timestamp -1 when there is none, as Kafka answers).  A special
timestamp the request's version does not know is INVALID_REQUEST.  The v2+
isolation level 1 (read_committed) draws the line at the last stable offset,
as Kafka does: latest is the LSO (the first offset of the earliest open
transaction), and a time or max-timestamp lookup whose record lies at or
beyond it finds nothing; earliest is the log start offset either way.  v4+
each partition's ``current_leader_epoch`` is checked
(:mod:`hmb.api.leader_epoch`), and an offset found is answered with the
leader epoch it was written in (the one epoch of a single broker).  v6+ are
flexible; v10's ``timeout_ms`` needs nothing: every answer is local.
"""

from __future__ import annotations

from typing import Any

from hmb.api.authz import topics_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.leader_epoch import epoch_error, leader_epoch
from hmb.api.leadership import misdirected
from hmb.api.registry import handles
from hmb.log.partition import PartitionLog
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode
from kproto.messages.list_offsets import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP

MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED, EARLIEST_PENDING_UPLOAD = -3, -4, -5, -6
#: the special timestamps each version knows, beyond latest (-1) and earliest (-2)
SINCE = {MAX_TIMESTAMP: 7, EARLIEST_LOCAL: 8, LATEST_TIERED: 9, EARLIEST_PENDING_UPLOAD: 11}
READ_COMMITTED = 1


async def _one_offset(
    plog: PartitionLog, timestamp: int, version: int, committed: bool
) -> tuple[int, int, int]:
    """``(error_code, timestamp, offset)`` of a v1+ lookup (``committed``: read_committed)."""
    fetchable = plog.last_stable_offset if committed else plog.high_watermark
    if timestamp == LATEST_TIMESTAMP:
        return ErrorCode.NONE, -1, fetchable
    if timestamp == EARLIEST_TIMESTAMP:
        return ErrorCode.NONE, -1, plog.log_start_offset
    if timestamp < 0 and version < SINCE.get(timestamp, 2**15):
        return ErrorCode.INVALID_REQUEST, -1, -1
    if timestamp == EARLIEST_LOCAL:
        return ErrorCode.NONE, -1, plog.log_start_offset
    if timestamp in (LATEST_TIERED, EARLIEST_PENDING_UPLOAD):
        return ErrorCode.NONE, -1, -1
    match = await (
        plog.offset_of_max_timestamp() if timestamp == MAX_TIMESTAMP else plog.offset_for_timestamp(timestamp)
    )
    if match is None or match.offset >= fetchable:
        return ErrorCode.NONE, -1, -1
    return ErrorCode.NONE, match.timestamp, match.offset


@handles(ApiKey.LIST_OFFSETS, versions=(0, 11))
async def handle(ctx: RequestContext) -> Reply:
    version = ctx.request.version
    committed = version >= 2 and ctx.request.body.isolation_level == READ_COMMITTED
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
            current_epoch = getattr(p, "current_leader_epoch", -1)  # v4+
            if topic.name not in describable:
                answer["error_code"] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif misdirected(ctx, topic.name, p.partition_index):
                answer["error_code"] = ErrorCode.NOT_LEADER_OR_FOLLOWER
            elif plog is None:
                answer["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif version == 0:
                answer["old_style_offsets"] = plog.offsets_before(p.timestamp, p.max_num_offsets)
            elif (refused := epoch_error(ctx, topic.name, p.partition_index, current_epoch)) is not None:
                answer["error_code"] = refused
            else:
                answer["error_code"], answer["timestamp"], answer["offset"] = await _one_offset(
                    plog, p.timestamp, version, committed
                )
                if answer["offset"] >= 0:
                    answer["leader_epoch"] = leader_epoch(ctx, topic.name, p.partition_index)
            partitions.append(answer)
        topics.append({"name": topic.name, "partitions": partitions})
    return {"throttle_time_ms": 0, "topics": topics}
