"""OffsetCommit v0-9: store a group's positions (durably, in ``__consumer_offsets``).

Who may commit is the group coordinator's call (Kafka's rules, see
``GroupCoordinator.check_commit``): generation -1 with an empty member id
is a "simple" commit by a consumer that assigns partitions itself, allowed
while the group has no members (v0 carries neither, so it is always one);
otherwise the member must belong to the group's current generation.

Version notes: v1's per-partition commit timestamp and v2-v4's
``retention_time_ms`` are stored in the record as Kafka does; v6's
``committed_leader_epoch`` is stored with the offset (KIP-320) and returned
by OffsetFetch v5+; v7's ``group_instance_id`` identifies a static member: a
replaced one is answered FENCED_INSTANCE_ID.  v8+ flexible.  v9 is the
first version a KIP-848 consumer may send, where ``generation_id`` is its
member epoch; every group here is a classic group, so it is checked as a
generation as before (-1 with an empty member id: a simple commit), and, as
Kafka 4 does from v9, a commit with a generation into a group the broker
does not know (no members, no committed offsets) is answered
GROUP_ID_NOT_FOUND (ILLEGAL_GENERATION before).
Topic ids instead of names (v10) are not served yet.
"""

from __future__ import annotations

import logging
from typing import Any

from hmb.api.authz import group_allowed, topics_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.groups.offsets import CommitEntry
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)


@handles(ApiKey.OFFSET_COMMIT, versions=(0, 9))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    services = ctx.services
    max_meta = services.config.offset_metadata_max_bytes
    group_error: int = ErrorCode.NONE
    if not group_allowed(ctx, Operation.READ, body.group_id):
        group_error = ErrorCode.GROUP_AUTHORIZATION_FAILED
    elif not body.group_id:
        group_error = ErrorCode.INVALID_GROUP_ID
    elif ctx.request.version >= 1:
        group_error = services.groups.check_commit(
            body.group_id, body.generation_id, body.member_id, body.get("group_instance_id")
        )
        if (
            group_error == ErrorCode.ILLEGAL_GENERATION
            and ctx.request.version >= 9
            and services.groups.describe(body.group_id) is None
            and body.group_id not in services.offsets.groups()
        ):
            group_error = ErrorCode.GROUP_ID_NOT_FOUND
    codes: dict[tuple[str, int], int] = {}
    accepted: list[CommitEntry] = []
    readable = topics_allowed(ctx, Operation.READ, (t.name for t in body.topics))
    for topic in body.topics:
        for p in topic.partitions:
            metadata = p.committed_metadata or ""
            code: int
            if group_error != ErrorCode.NONE:
                code = group_error
            elif topic.name not in readable:
                code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif services.logs.get(topic.name, p.partition_index) is None:
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif len(metadata.encode()) > max_meta:
                code = ErrorCode.OFFSET_METADATA_TOO_LARGE
            else:
                code = ErrorCode.NONE
                accepted.append(
                    CommitEntry(
                        topic.name,
                        p.partition_index,
                        p.committed_offset,
                        metadata,
                        p.get("commit_timestamp", -1),
                        p.get("committed_leader_epoch", -1),
                    )
                )
            codes[(topic.name, p.partition_index)] = code
    if accepted:
        try:
            await services.offsets.commit(
                body.group_id, accepted, retention_ms=body.get("retention_time_ms", -1)
            )
        except OSError as exc:
            log.error("offset commit for group %s failed: %s", body.group_id, exc)
            for entry in accepted:
                codes[(entry.topic, entry.partition)] = ErrorCode.COORDINATOR_NOT_AVAILABLE
    return commit_answer(body.topics, codes)


def commit_answer(topics: Any, codes: dict[tuple[str, int], int]) -> dict[str, Any]:
    """The answer of an offset commit (OffsetCommit, TxnOffsetCommit): ``codes`` per partition
    asked, in the request's order."""
    return {
        "throttle_time_ms": 0,
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
            for topic in topics
        ],
    }
