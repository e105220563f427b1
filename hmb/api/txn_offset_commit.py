"""TxnOffsetCommit v0-v5: a transaction commits a consumer group's offsets.

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
TRANSACTION_ABORTABLE, never sent here.  v5 is transaction version 2
(KIP-890 part 2): the client sends no AddOffsetsToTxn, the broker adds the
group's offsets to the transaction itself (through the coordinator's
checks: a fenced producer is INVALID_PRODUCER_EPOCH, markers of the
previous transaction still being written CONCURRENT_TRANSACTIONS, which
the client retries).
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


IMPLICIT_ADD_SINCE = 5
"""The first TxnOffsetCommit version that adds the group's offsets to the transaction itself."""


async def _request_error(ctx: RequestContext) -> int:
    """The code for every partition when the request as a whole is refused."""
    body = ctx.request.body
    services = ctx.services
    if not allowed(ctx, Operation.WRITE, ResourceType.TRANSACTIONAL_ID, body.transactional_id):
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    if not group_allowed(ctx, Operation.READ, body.group_id):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED
    if not_coordinator(ctx, body.group_id):
        return ErrorCode.NOT_COORDINATOR
    txn = (body.transactional_id, body.producer_id, body.producer_epoch, body.group_id)
    code = services.transactions.check_offset_commit(*txn)
    if code == ErrorCode.INVALID_TXN_STATE and ctx.request.version >= IMPLICIT_ADD_SINCE:
        try:
            added = await services.transactions.add_offsets(*txn)
        except OSError as exc:
            log.error("adding the offsets of %s to %s failed: %s", body.group_id, body.transactional_id, exc)
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if added == ErrorCode.NONE:
            code = services.transactions.check_offset_commit(*txn)
        else:
            code = ErrorCode.INVALID_PRODUCER_EPOCH if added == ErrorCode.PRODUCER_FENCED else added
    if code != ErrorCode.NONE:
        return code
    if ctx.request.version >= 3:
        return services.groups.check_commit(
            body.group_id, body.generation_id, body.member_id, body.group_instance_id
        )
    return ErrorCode.NONE


@handles(ApiKey.TXN_OFFSET_COMMIT, versions=(0, 5))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    services = ctx.services
    request_error = await _request_error(ctx)
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
