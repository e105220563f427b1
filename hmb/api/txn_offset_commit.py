"""TxnOffsetCommit v0-v4: a transaction commits a consumer group's offsets.

The offsets are written to ``__consumer_offsets`` as a transactional batch
of the producer and held back: the group's committed offsets (OffsetFetch)
show them only once the transaction commits, and never when it aborts
(:meth:`hmb.groups.offset_partitions.GroupOffsets.stage_transaction`).

Checks, in Kafka's order: Write on the transactional id, Read on the group,
Read on each topic; the transaction must be open with the group added by
AddOffsetsToTxn (else INVALID_TXN_STATE; an unknown producer
INVALID_PRODUCER_ID_MAPPING, a stale epoch INVALID_PRODUCER_EPOCH, as the
log's fencing answers it in Kafka).  From v3 (KIP-447) the request names
the consumer's generation and member: they are checked as an OffsetCommit's
(a group nobody has joined accepts generation -1; a member of another
generation is ILLEGAL_GENERATION, an unknown one UNKNOWN_MEMBER_ID).  v2
adds the committed leader epoch, v3 is flexible, v4 only allows
TRANSACTION_ABORTABLE, never sent here.  v5 (transaction version 2, where
the broker adds the offsets partition itself) is not served.
"""

from __future__ import annotations

import logging

from hmb.api.authz import allowed, group_allowed, topics_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.errors import LOG_ERRORS, error_code, log_refusal
from hmb.api.leadership import not_coordinator
from hmb.api.offset_commit import commit_answer
from hmb.api.registry import handles
from hmb.groups.offset_partitions import NotLoadedError
from hmb.groups.offsets import CommitEntry
from hmb.security.acl import Operation, ResourceType
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)


def _request_error(ctx: RequestContext) -> int:
    """The code for every partition when the request as a whole is refused."""
    body = ctx.request.body
    services = ctx.services
    if not allowed(ctx, Operation.WRITE, ResourceType.TRANSACTIONAL_ID, body.transactional_id):
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    if not group_allowed(ctx, Operation.READ, body.group_id):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED
    if not_coordinator(ctx, body.group_id):
        return ErrorCode.NOT_COORDINATOR
    code = services.transactions.check_offset_commit(
        body.transactional_id, body.producer_id, body.producer_epoch, body.group_id
    )
    if code != ErrorCode.NONE:
        return code
    if ctx.request.version >= 3:
        return services.groups.check_commit(
            body.group_id, body.generation_id, body.member_id, body.group_instance_id
        )
    return ErrorCode.NONE


@handles(ApiKey.TXN_OFFSET_COMMIT, versions=(0, 4))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    services = ctx.services
    request_error = _request_error(ctx)
    readable = topics_allowed(ctx, Operation.READ, (t.name for t in body.topics))
    codes: dict[tuple[str, int], int] = {}
    accepted: list[CommitEntry] = []
    for topic in body.topics:
        for p in topic.partitions:
            metadata = p.committed_metadata or ""
            code: int = ErrorCode.NONE
            if request_error != ErrorCode.NONE:
                code = request_error
            elif topic.name not in readable:
                code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif services.logs.get(topic.name, p.partition_index) is None:
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif len(metadata.encode()) > services.config.offset_metadata_max_bytes:
                code = ErrorCode.OFFSET_METADATA_TOO_LARGE
            else:
                accepted.append(
                    CommitEntry(
                        topic.name,
                        p.partition_index,
                        p.committed_offset,
                        metadata,
                        leader_epoch=p.get("committed_leader_epoch", -1),
                    )
                )
            codes[(topic.name, p.partition_index)] = code
    if accepted:
        try:
            await services.offsets.stage_transaction(
                body.producer_id, body.producer_epoch, body.group_id, accepted
            )
        except NotLoadedError:  # leadership of its offsets partition moved meanwhile
            for entry in accepted:
                codes[(entry.topic, entry.partition)] = ErrorCode.NOT_COORDINATOR
        except LOG_ERRORS as exc:
            log_refusal(log, exc, f"TxnOffsetCommit of {body.transactional_id}", ctx.peer)
            for entry in accepted:
                codes[(entry.topic, entry.partition)] = error_code(
                    exc, ApiKey.TXN_OFFSET_COMMIT, ctx.request.version
                )
    return commit_answer(body.topics, codes)
