"""InitProducerId v0-v6: a producer id and epoch for an idempotent or transactional producer.

kafka-python's producer is idempotent by default and calls this as soon as
the broker looks new enough (it guesses a Kafka release from the advertised
versions: Metadata v4+ will do; docs/client-quirks.md, "kafka-python guesses
the broker's release");
librdkafka and the Java client do with ``enable.idempotence``.  A null
transactional id gets a fresh producer id with epoch 0.

Producer ids come from :class:`hmb.log.meta.ProducerIdManager`: blocks of
1000 ids persisted (fsync'd) in the log dirs before any id of the block is
handed out, and never below one past the largest id found in the logs.  A
persisted counter rather than "largest id in the log + 1" alone, because an
id handed out but not yet used in any batch (or used only in batches that
retention has since deleted) would come back after a restart, and its new
owner would inherit the old owner's sequence state.  When the block cannot
be made durable (disk full), no id is handed out: the answer is the
retriable COORDINATOR_NOT_AVAILABLE.

A transactional id goes to the transaction coordinator
(:mod:`hmb.txn.coordinator`): its producer id, the epoch bumped (which
fences the previous instance), an open transaction aborted first; a
``transaction_timeout_ms`` above ``transaction.max.timeout.ms`` is
INVALID_TRANSACTION_TIMEOUT; markers still being written are
CONCURRENT_TRANSACTIONS.  Write on the transactional id is required.

Versions: v2 is the first flexible one; v3 adds the producer id and epoch
the client still holds (KIP-360: they must be the id's current ones, else
PRODUCER_FENCED); v4 may answer PRODUCER_FENCED where older versions get
INVALID_PRODUCER_EPOCH; v5 only allows TRANSACTION_ABORTABLE, which this
broker never sends.  v6 (KIP-939, two-phase commit with an external
transaction manager): ``enable2_pc`` asks for a transaction that never
times out, granted only when ``transaction.two.phase.commit.enable`` is
true and the client holds TwoPhaseCommit on the transactional id, else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as Kafka answers;
``keep_prepared_txn`` (recover a prepared transaction instead of aborting
it) is UNSUPPORTED_VERSION: hmb keeps no prepared transaction across
producer restarts.  The answer's ``ongoing_txn_producer_id``/``_epoch``
are therefore always -1 (no transaction kept).
"""

from __future__ import annotations

import logging
from typing import Any

from hmb.api.authz import allowed, cluster_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.api.txn_codes import for_version
from hmb.security.acl import Operation, ResourceType
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)


def _answer(code: int, producer_id: int = -1, epoch: int = -1) -> dict[str, Any]:
    """The answer at any version (v6's ongoing transaction: none kept, -1/-1)."""
    return {
        "throttle_time_ms": 0,
        "error_code": code,
        "producer_id": producer_id,
        "producer_epoch": epoch,
        "ongoing_txn_producer_id": -1,
        "ongoing_txn_producer_epoch": -1,
    }


def _may_write_idempotently(ctx: RequestContext) -> bool:
    """IdempotentWrite on the cluster, or Write on some topic (Kafka 3.0's rule)."""
    authorizer = ctx.services.authorizer
    if authorizer is None or cluster_allowed(ctx, Operation.IDEMPOTENT_WRITE):
        return True
    principal, host = str(ctx.session.principal), ctx.session.host
    return authorizer.authorize_any(principal, host, Operation.WRITE, ResourceType.TOPIC)


async def _transactional(ctx: RequestContext, tid: str) -> Reply:
    body = ctx.request.body
    if not allowed(ctx, Operation.WRITE, ResourceType.TRANSACTIONAL_ID, tid):
        return _answer(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    two_phase = bool(body.get("enable2_pc", False))
    if two_phase and not allowed(ctx, Operation.TWO_PHASE_COMMIT, ResourceType.TRANSACTIONAL_ID, tid):
        return _answer(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if two_phase and not ctx.services.config.transaction_two_phase_commit_enable:
        return _answer(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if body.get("keep_prepared_txn", False):
        return _answer(ErrorCode.UNSUPPORTED_VERSION)
    try:
        result = await ctx.services.transactions.init_producer_id(
            tid,
            body.transaction_timeout_ms,
            body.get("producer_id", -1),
            body.get("producer_epoch", -1),
            two_phase=two_phase,
        )
    except OSError as exc:
        log.error("InitProducerId for transactional id %s failed: %s", tid, exc)
        return _answer(ErrorCode.COORDINATOR_NOT_AVAILABLE)
    code = for_version(result.error, ApiKey.INIT_PRODUCER_ID, ctx.request.version)
    return _answer(code, result.producer_id, result.producer_epoch)


@handles(ApiKey.INIT_PRODUCER_ID, versions=(0, 6))
async def handle(ctx: RequestContext) -> Reply:
    tid = ctx.request.body.transactional_id
    if tid is not None:
        return await _transactional(ctx, tid)
    if not _may_write_idempotently(ctx):
        return _answer(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    try:
        pid = await ctx.logs.producer_ids.allocate()
    except OSError as exc:
        log.error("cannot persist a producer-id block: %s", exc)
        return _answer(ErrorCode.COORDINATOR_NOT_AVAILABLE)
    return _answer(ErrorCode.NONE, pid, 0)
