"""InitProducerId v0-v1: a producer id and epoch for an idempotent producer.

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

Transactions are out of scope: a transactional id is answered
NOT_COORDINATOR (this broker coordinates no transactions; FindCoordinator
says the same with COORDINATOR_NOT_AVAILABLE).
"""

from __future__ import annotations

import logging
from typing import Any

from hmb.api.authz import allowed, cluster_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.security.acl import Operation, ResourceType
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)


def _answer(code: int, producer_id: int = -1, epoch: int = -1) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "error_code": code, "producer_id": producer_id, "producer_epoch": epoch}


def _may_write_idempotently(ctx: RequestContext) -> bool:
    """IdempotentWrite on the cluster, or Write on some topic (Kafka 3.0's rule)."""
    authorizer = ctx.services.authorizer
    if authorizer is None or cluster_allowed(ctx, Operation.IDEMPOTENT_WRITE):
        return True
    principal, host = str(ctx.session.principal), ctx.session.host
    return authorizer.authorize_any(principal, host, Operation.WRITE, ResourceType.TOPIC)


@handles(ApiKey.INIT_PRODUCER_ID, versions=(0, 1))
async def handle(ctx: RequestContext) -> Reply:
    tid = ctx.request.body.transactional_id
    if tid is not None:
        if not allowed(ctx, Operation.WRITE, ResourceType.TRANSACTIONAL_ID, tid):
            return _answer(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        return _answer(ErrorCode.NOT_COORDINATOR)
    if not _may_write_idempotently(ctx):
        return _answer(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    try:
        pid = await ctx.logs.producer_ids.allocate()
    except OSError as exc:
        log.error("cannot persist a producer-id block: %s", exc)
        return _answer(ErrorCode.COORDINATOR_NOT_AVAILABLE)
    return _answer(ErrorCode.NONE, pid, 0)
