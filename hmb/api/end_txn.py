"""EndTxn v0-v4: commit or abort a transactional id's transaction.

The coordinator logs PrepareCommit/PrepareAbort, writes the markers to
every partition of the transaction, makes the transaction's offsets
visible (or drops them) and logs the completion before this answers, so a
read_committed consumer sees a committed transaction as soon as the
producer's commit returns.  Without an open transaction the answer is
INVALID_TXN_STATE (a retry of the request that just finished it is NONE),
a stale epoch PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2).  Write
on the transactional id is required.

v3 is flexible; v4 only allows TRANSACTION_ABORTABLE, never sent here.
v5 (KIP-890 part 2: the epoch bumped by every EndTxn, the producer id and
epoch returned) is not served: it belongs with Produce v12 and
transaction version 2, which hmb does not speak; clients fall back to v4.
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


@handles(ApiKey.END_TXN, versions=(0, 4))
async def handle(ctx: RequestContext) -> Reply:
    return {"throttle_time_ms": 0, "error_code": await _code(ctx)}
