"""OffsetFetch v0-10: a group's committed positions (-1 and no error when none).

v2+ may ask with a null topic list for every committed offset of the group
and carries a top-level error code; v5 returns the leader epoch committed
with the offset (-1 when the commit carried none); v6+ flexible.  v7's
``require_stable`` asks to wait out pending transactional commits: a
partition whose offset an open transaction commits (TxnOffsetCommit, not yet
ended) is answered UNSTABLE_OFFSET_COMMIT, and the client asks again, as
Kafka does; without it the last committed offset is answered.
v8+ ask for several groups in one request and answer each group with its
own error code.  v9 adds the member id and epoch a KIP-848 consumer sends;
every group here is a classic group, for which Kafka does not check them.
v10 names topics by id (:mod:`hmb.api.topic_keys`): an id the broker does
not know is UNKNOWN_TOPIC_ID for each partition asked; asked for everything
the group committed, the answer names each topic by its id, and leaves out
a topic that no longer exists (it has no id to be named by).  Offsets are returned
whatever the group's state, as Kafka does: the group may not use group
management at all.
"""

from __future__ import annotations

from typing import Any

from hmb.api.authz import group_allowed, topics_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.leadership import not_coordinator
from hmb.api.registry import handles
from hmb.api.topic_keys import key_field, resolve
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode

BATCHED_VERSION = 8
"""From this version a request names several groups and each is answered on its own."""
TOPIC_IDS_VERSION = 10
"""From this version topics are named by id."""


def _partition(index: int, offset: int, metadata: str, error: int, epoch: int = -1) -> dict[str, Any]:
    return {
        "partition_index": index,
        "committed_offset": offset,
        "committed_leader_epoch": epoch,
        "metadata": metadata,
        "error_code": error,
    }


def _group_offsets(
    ctx: RequestContext, group_id: str, asked: Any, stable: bool = False, by_id: bool = False
) -> tuple[int, list[dict[str, Any]]]:
    """(group error, topics) for one group; ``asked`` is its topic list, None for all it committed;
    ``stable``: require_stable (v7+); ``by_id``: topics named by id (v10)."""
    services = ctx.services
    field = key_field(by_id)
    named = resolve(ctx, asked or (), by_id)
    topics: list[dict[str, Any]] = []
    refusal = (
        ErrorCode.GROUP_AUTHORIZATION_FAILED
        if not group_allowed(ctx, Operation.DESCRIBE, group_id)
        else ErrorCode.NOT_COORDINATOR
        if not_coordinator(ctx, group_id)
        else ErrorCode.NONE
    )
    if refusal != ErrorCode.NONE:
        denied = refusal
        topics = [
            {field: key, "partitions": [_partition(i, -1, "", denied) for i in t.partition_indexes]}
            for t, (key, _) in zip(asked or (), named, strict=True)
        ]
        return denied, topics
    committed_offsets = services.offsets.of_group(group_id) if asked is None else {}
    describable = topics_allowed(
        ctx,
        Operation.DESCRIBE,
        (name for _, name in named if name is not None)
        if asked is not None
        else {t for t, _ in committed_offsets},
    )
    if asked is None:  # v2+: everything the group has committed
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for (topic, index), committed in committed_offsets.items():
            if topic not in describable:
                continue  # what the principal may not describe is not shown
            by_topic.setdefault(topic, []).append(
                _partition(
                    index, committed.offset, committed.metadata, ErrorCode.NONE, committed.leader_epoch
                )
            )
        ids = ctx.logs.topic_ids
        topics = [
            {field: ids[t] if by_id else t, "partitions": parts}
            for t, parts in by_topic.items()
            if not by_id or t in ids
        ]
    for topic, (key, name) in zip(asked or (), named, strict=True):
        partitions = []
        for index in topic.partition_indexes:
            if name is None:
                partitions.append(_partition(index, -1, "", ErrorCode.UNKNOWN_TOPIC_ID))
                continue
            if name not in describable:
                partitions.append(_partition(index, -1, "", ErrorCode.TOPIC_AUTHORIZATION_FAILED))
                continue
            if services.logs.get(name, index) is None:
                partitions.append(_partition(index, -1, "", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
                continue
            stored = services.offsets.get(group_id, name, index)
            if stable and services.offsets.pending(group_id, name, index):
                partitions.append(_partition(index, -1, "", ErrorCode.UNSTABLE_OFFSET_COMMIT))
            elif stored is None:
                partitions.append(_partition(index, -1, "", ErrorCode.NONE))
            else:
                partitions.append(
                    _partition(index, stored.offset, stored.metadata, ErrorCode.NONE, stored.leader_epoch)
                )
        topics.append({field: key, "partitions": partitions})
    return ErrorCode.NONE, topics


@handles(ApiKey.OFFSET_FETCH, versions=(0, 10))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    if ctx.request.version < BATCHED_VERSION:
        stable = ctx.request.version >= 7 and body.require_stable
        error, topics = _group_offsets(ctx, body.group_id, body.topics, stable)
        return {"throttle_time_ms": 0, "topics": topics, "error_code": error}
    groups = []
    for group in body.groups:
        error, topics = _group_offsets(
            ctx, group.group_id, group.topics, body.require_stable, ctx.request.version >= TOPIC_IDS_VERSION
        )
        groups.append({"group_id": group.group_id, "topics": topics, "error_code": error})
    return {"throttle_time_ms": 0, "groups": groups}
