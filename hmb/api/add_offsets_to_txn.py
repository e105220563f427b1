"""AddOffsetsToTxn v0-v4: a consumer group's offsets join a transaction.

The coordinator adds the ``__consumer_offsets`` partition to the
transaction and remembers the group, so that the TxnOffsetCommit that
follows is accepted (its offsets become visible when the transaction
commits).  Write on the transactional id and Read on the group are
required, as in Kafka.  v2 may answer PRODUCER_FENCED (older versions get
INVALID_PRODUCER_EPOCH), v3 is flexible, v4 only allows
TRANSACTION_ABORTABLE, never sent here.
"""

from __future__ import annotations

import logging

from hmb.api.authz import allowed, group_allowed
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
    if not group_allowed(ctx, Operation.READ, body.group_id):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED
    try:
        code = await ctx.services.transactions.add_offsets(
            body.transactional_id, body.producer_id, body.producer_epoch, body.group_id
        )
    except OSError as exc:
        log.error("AddOffsetsToTxn for %s failed: %s", body.transactional_id, exc)
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    return for_version(code, ApiKey.ADD_OFFSETS_TO_TXN, ctx.request.version)


@handles(ApiKey.ADD_OFFSETS_TO_TXN, versions=(0, 4))
async def handle(ctx: RequestContext) -> Reply:
    return {"throttle_time_ms": 0, "error_code": await _code(ctx)}
