"""EndTxn v0-v5: commit or abort a transactional id's transaction.

The coordinator logs PrepareCommit/PrepareAbort, writes the markers to
every partition of the transaction, makes the transaction's offsets
visible (or drops them) and logs the completion before this answers, so a
read_committed consumer sees a committed transaction as soon as the
producer's commit returns.  Without an open transaction the answer is
INVALID_TXN_STATE (a retry of the request that just finished it is NONE),
a stale epoch PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2).  Write
on the transactional id is required.

v3 is flexible; v4 only allows TRANSACTION_ABORTABLE, never sent here.
v5 is transaction version 2 (KIP-890 part 2): every EndTxn bumps the epoch
(a new producer id when the epochs run out) and the answer carries the
producer id and epoch of the next transaction; an abort with no
transaction open is accepted (the client began one whose first write never
arrived); a retry of the EndTxn that bumped the epoch gets the same answer
(:meth:`hmb.txn.coordinator.TransactionCoordinator.end_transaction_v2`).
"""

from __future__ import annotations

import logging

from hmb.api.authz import allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.api.txn_codes import for_version
from hmb.security.acl import Operation, ResourceType
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)

FIRST_EPOCH_BUMPING = 5
"""The first EndTxn version of transaction version 2."""


async def _code(ctx: RequestContext) -> int:
    body = ctx.request.body
    if not allowed(ctx, Operation.WRITE, ResourceType.TRANSACTIONAL_ID, body.transactional_id):
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    try:
        code = await ctx.services.transactions.end_transaction(
            body.transactional_id, body.producer_id, body.producer_epoch, body.committed
        )
    except OSError as exc:
        log.error("EndTxn for %s failed: %s", body.transactional_id, exc)
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    return for_version(code, ApiKey.END_TXN, ctx.request.version)


async def _end_v2(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    answer = {"throttle_time_ms": 0, "producer_id": -1, "producer_epoch": -1}
    if not allowed(ctx, Operation.WRITE, ResourceType.TRANSACTIONAL_ID, body.transactional_id):
        return {**answer, "error_code": ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}
    try:
        result = await ctx.services.transactions.end_transaction_v2(
            body.transactional_id, body.producer_id, body.producer_epoch, body.committed
        )
    except OSError as exc:
        log.error("EndTxn for %s failed: %s", body.transactional_id, exc)
        return {**answer, "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE}
    return {
        **answer,
        "error_code": result.error,
        "producer_id": result.producer_id,
        "producer_epoch": result.producer_epoch,
    }


@handles(ApiKey.END_TXN, versions=(0, 5))
async def handle(ctx: RequestContext) -> Reply:
    if ctx.request.version >= FIRST_EPOCH_BUMPING:
        return await _end_v2(ctx)
    return {"throttle_time_ms": 0, "error_code": await _code(ctx)}
