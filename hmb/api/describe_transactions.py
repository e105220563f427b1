"""DescribeTransactions v0: the state of transactional ids (KIP-664).

Per id asked: its state by Kafka's name ("Ongoing", "CompleteCommit"...),
timeout, start time of the open transaction (-1: none), producer id and
epoch, and the partitions of the current (or last) transaction.  An id the
coordinator does not know is TRANSACTIONAL_ID_NOT_FOUND; one the client may
not Describe, TRANSACTIONAL_ID_AUTHORIZATION_FAILED; in a cluster, one another
broker coordinates, NOT_COORDINATOR (the admin client asks FindCoordinator).
"""

from __future__ import annotations

from typing import Any

from hmb.api.authz import allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.security.acl import Operation, ResourceType
from kproto import ApiKey, ErrorCode


def _state(ctx: RequestContext, tid: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "error_code": ErrorCode.NONE,
        "transactional_id": tid,
        "transaction_state": "",
        "transaction_timeout_ms": 0,
        "transaction_start_time_ms": -1,
        "producer_id": -1,
        "producer_epoch": -1,
        "topics": [],
    }
    if not allowed(ctx, Operation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, tid):
        out["error_code"] = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        return out
    if not ctx.services.transactions.coordinates(tid):  # in a cluster: another broker's id
        out["error_code"] = ErrorCode.NOT_COORDINATOR
        return out
    meta = ctx.services.transactions.describe(tid)
    if meta is None:
        out["error_code"] = ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
        return out
    out.update(
        transaction_state=meta.state.kafka_name,
        transaction_timeout_ms=meta.timeout_ms,
        transaction_start_time_ms=meta.start_ms,
        producer_id=meta.producer_id,
        producer_epoch=meta.producer_epoch,
        topics=[{"topic": t, "partitions": ps} for t, ps in meta.sorted_partitions()],
    )
    return out


@handles(ApiKey.DESCRIBE_TRANSACTIONS, versions=(0, 0))
async def handle(ctx: RequestContext) -> Reply:
    return {
        "throttle_time_ms": 0,
        "transaction_states": [_state(ctx, tid) for tid in ctx.request.body.transactional_ids],
    }
