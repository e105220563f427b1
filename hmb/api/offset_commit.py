"""OffsetCommit v0-10: store a group's positions (durably, in ``__consumer_offsets``).

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
v10 names topics by id (:mod:`hmb.api.topic_keys`): an id the broker does
not know is UNKNOWN_TOPIC_ID for each of its partitions; offsets are kept
by topic name, so a client committing by id and one reading by name see
the same positions.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from hmb.api.authz import group_allowed, topics_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.leadership import not_coordinator
from hmb.api.registry import handles
from hmb.api.replicated_commits import commit_replicated
from hmb.api.topic_keys import TopicKey, key_field, resolve
from hmb.groups.offset_partitions import NotLoadedError
from hmb.groups.offsets import CommitEntry
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)


TOPIC_IDS_VERSION = 10
"""From this version the request names topics by id."""


@handles(ApiKey.OFFSET_COMMIT, versions=(0, 10))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    services = ctx.services
    max_meta = services.config.offset_metadata_max_bytes
    group_error: int = ErrorCode.NONE
    if not group_allowed(ctx, Operation.READ, body.group_id):
        group_error = ErrorCode.GROUP_AUTHORIZATION_FAILED
    elif not body.group_id:
        group_error = ErrorCode.INVALID_GROUP_ID
    elif not_coordinator(ctx, body.group_id):
        group_error = ErrorCode.NOT_COORDINATOR
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
    codes: dict[tuple[TopicKey, int], int] = {}
    accepted: list[CommitEntry] = []
    accepted_keys: list[tuple[TopicKey, int]] = []
    by_id = ctx.request.version >= TOPIC_IDS_VERSION
    named = resolve(ctx, body.topics, by_id)
    readable = topics_allowed(ctx, Operation.READ, (name for _, name in named if name is not None))
    for topic, (key, name) in zip(body.topics, named, strict=True):
        for p in topic.partitions:
            metadata = p.committed_metadata or ""
            code: int
            if group_error != ErrorCode.NONE:
                code = group_error
            elif name is None:
                code = ErrorCode.UNKNOWN_TOPIC_ID
            elif name not in readable:
                code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif services.logs.get(name, p.partition_index) is None:
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif len(metadata.encode()) > max_meta:
                code = ErrorCode.OFFSET_METADATA_TOO_LARGE
            else:
                code = ErrorCode.NONE
                accepted_keys.append((key, p.partition_index))
                accepted.append(
                    CommitEntry(
                        name,
                        p.partition_index,
                        p.committed_offset,
                        metadata,
                        p.get("commit_timestamp", -1),
                        p.get("committed_leader_epoch", -1),
                    )
                )
            codes[(key, p.partition_index)] = code
    if accepted:
        try:
            await services.offsets.commit(
                body.group_id, accepted, retention_ms=body.get("retention_time_ms", -1)
            )
        except OSError as exc:
            log.error("offset commit for group %s failed: %s", body.group_id, exc)
            for k in accepted_keys:
                codes[k] = ErrorCode.COORDINATOR_NOT_AVAILABLE
        except NotLoadedError:  # leadership of its offsets partition moved meanwhile
            for k in accepted_keys:
                codes[k] = ErrorCode.NOT_COORDINATOR
        else:
            if (replicated := await commit_replicated(ctx, body.group_id)) != ErrorCode.NONE:
                for k in accepted_keys:
                    codes[k] = replicated
    return commit_answer(body.topics, codes, [key for key, _ in named], key_field(by_id))


def commit_answer(
    topics: Any,
    codes: Mapping[tuple[Any, int], int],
    keys: Sequence[TopicKey] | None = None,
    field: str = "name",
) -> dict[str, Any]:
    """The answer of an offset commit (OffsetCommit, TxnOffsetCommit): ``codes`` per partition
    asked, in the request's order; ``keys``: each topic's key (its name unless given, its id
    from OffsetCommit v10) in ``codes`` and in the answer's ``field``."""
    if keys is None:
        keys = [topic.name for topic in topics]
    return {
        "throttle_time_ms": 0,
        "topics": [
            {
                field: key,
                "partitions": [
                    {"partition_index": p.partition_index, "error_code": codes[(key, p.partition_index)]}
                    for p in topic.partitions
                ],
            }
            for topic, key in zip(topics, keys, strict=True)
        ],
    }
