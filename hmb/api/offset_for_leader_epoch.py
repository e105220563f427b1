"""OffsetForLeaderEpoch v2-v4 (KIP-320): where a leader epoch ended in this partition's log.

A consumer that read records stamped with leader epoch E asks, after a
leader change, for E's end offset; a log that now ends before its position
was truncated and the consumer resets (librdkafka asks as soon as Metadata
reports a leader epoch).  The answer comes from the partition's leader
epochs (:mod:`hmb.log.leader_epochs`): the current epoch ends at the log end
offset, an older one where the next began, a newer one is unknown (epoch
and offset -1).  Each partition's ``current_leader_epoch`` is checked first
(:mod:`hmb.api.leader_epoch`).  Access is Describe on the topic for
consumers (``replica_id`` -1 or absent, v3+) and ClusterAction for a
follower (any other ``replica_id``), as Kafka.  v4 is flexible.
"""

from __future__ import annotations

from typing import Any

from hmb.api.authz import cluster_allowed, topics_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.leader_epoch import epoch_error
from hmb.api.registry import handles
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode

CONSUMER_REPLICA_IDS = (-1, -2)  # -2: the request's default before v3 (no replica id sent)


@handles(ApiKey.OFFSET_FOR_LEADER_EPOCH, versions=(2, 4))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    replica_id = getattr(body, "replica_id", -2)
    if replica_id in CONSUMER_REPLICA_IDS:
        allowed = topics_allowed(ctx, Operation.DESCRIBE, (t.topic for t in body.topics))
    else:
        allowed = {t.topic for t in body.topics} if cluster_allowed(ctx, Operation.CLUSTER_ACTION) else set()
    topics = []
    for topic in body.topics:
        partitions = []
        for p in topic.partitions:
            answer: dict[str, Any] = {
                "error_code": ErrorCode.NONE,
                "partition": p.partition,
                "leader_epoch": -1,
                "end_offset": -1,
            }
            plog = ctx.logs.get(topic.topic, p.partition)
            if topic.topic not in allowed:
                answer["error_code"] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif plog is None:
                answer["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif (refused := epoch_error(ctx, topic.topic, p.partition, p.current_leader_epoch)) is not None:
                answer["error_code"] = refused
            else:
                answer["leader_epoch"], answer["end_offset"] = plog.end_offset_for_epoch(p.leader_epoch)
            partitions.append(answer)
        topics.append({"topic": topic.topic, "partitions": partitions})
    return {"throttle_time_ms": 0, "topics": topics}
