"""DescribeProducers v0: the active idempotent producers of partitions (KIP-664).

Per partition asked: the producers its producer state holds (see
:mod:`hmb.log.active_producers`), each with its id, epoch, last sequence,
last timestamp, the coordinator epoch of its last transaction marker and
the first offset of its transaction open on the partition (both -1 when
there is none).  This broker leads
every partition it has, so NOT_LEADER_OR_FOLLOWER never happens; a
partition it does not have is UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from typing import Any

from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.log.active_producers import active_producers
from kproto import ApiKey, ErrorCode


def _partition(ctx: RequestContext, topic: str, index: int) -> dict[str, Any]:
    plog = ctx.logs.get(topic, index)
    if plog is None:
        return {
            "partition_index": index,
            "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            "error_message": f"partition {topic}-{index} does not exist",
            "active_producers": [],
        }
    return {
        "partition_index": index,
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "active_producers": [
            {
                "producer_id": p.producer_id,
                "producer_epoch": p.epoch,
                "last_sequence": p.last_sequence,
                "last_timestamp": p.last_timestamp,
                "coordinator_epoch": p.coordinator_epoch,
                "current_txn_start_offset": p.current_txn_start_offset,
            }
            for p in active_producers(plog)
        ],
    }


@handles(ApiKey.DESCRIBE_PRODUCERS, versions=(0, 0))
async def handle(ctx: RequestContext) -> Reply:
    return {
        "throttle_time_ms": 0,
        "topics": [
            {"name": t.name, "partitions": [_partition(ctx, t.name, i) for i in t.partition_indexes]}
            for t in ctx.request.body.topics
        ],
    }
