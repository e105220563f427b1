"""OffsetCommit v0-1: store a group's positions (durably, in ``__consumer_offsets``).

v1's generation id and member id belong to group membership, which this
broker does not manage yet: like Kafka 0.8.2 for consumers that assign
partitions themselves (generation -1), they are accepted as given.
"""

from __future__ import annotations

import logging

from hmb.api.context import Reply, RequestContext
from kproto import ApiKey, ErrorCode

API_KEY = ApiKey.OFFSET_COMMIT
VERSIONS = (0, 1)

log = logging.getLogger(__name__)


async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    broker = ctx.broker
    max_meta = broker.config.offset_metadata_max_bytes
    codes: dict[tuple[str, int], int] = {}
    accepted: list[tuple[str, int, int, str, int]] = []
    for topic in body.topics:
        for p in topic.partitions:
            metadata = p.committed_metadata or ""
            if not body.group_id:
                code = ErrorCode.INVALID_GROUP_ID
            elif broker.logs.get(topic.name, p.partition_index) is None:
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif len(metadata.encode()) > max_meta:
                code = ErrorCode.OFFSET_METADATA_TOO_LARGE
            else:
                code = ErrorCode.NONE
                accepted.append(
                    (
                        topic.name,
                        p.partition_index,
                        p.committed_offset,
                        metadata,
                        p.get("commit_timestamp", -1),
                    )
                )
            codes[(topic.name, p.partition_index)] = code
    if accepted:
        try:
            await broker.offsets.commit(body.group_id, accepted)
        except OSError as exc:
            log.error("offset commit for group %s failed: %s", body.group_id, exc)
            for topic_name, partition, *_ in accepted:
                codes[(topic_name, partition)] = ErrorCode.COORDINATOR_NOT_AVAILABLE
    return {
        "topics": [
            {
                "name": topic.name,
                "partitions": [
                    {
                        "partition_index": p.partition_index,
                        "error_code": codes[(topic.name, p.partition_index)],
                    }
                    for p in topic.partitions
                ],
            }
            for topic in body.topics
        ]
    }
