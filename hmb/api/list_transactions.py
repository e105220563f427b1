"""ListTransactions v0-v2: the transactional ids the coordinator knows (KIP-664).

Filters, all optional and combined: states by Kafka's name (a name that is
no state is listed back in ``unknown_state_filters`` and matches nothing),
producer ids, v1's ``duration_filter`` (only transactions open for longer
than that many ms, on the broker's clock), v2's ``transactional_id_pattern``
(a regular expression the whole id must match, KIP-1152; one that does not
compile is INVALID_REQUEST).  Ids the client may not Describe are left out
silently, as Kafka does.
"""

from __future__ import annotations

import re

from hmb.api.authz import allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.security.acl import Operation, ResourceType
from hmb.txn.states import TxnState
from kproto import ApiKey, ErrorCode


@handles(ApiKey.LIST_TRANSACTIONS, versions=(0, 2))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    known = {name: TxnState.from_kafka_name(name) for name in body.state_filters}
    unknown = [name for name, state in known.items() if state is None]
    states = {state for state in known.values() if state is not None}
    pids = set(body.producer_id_filters)
    min_duration = body.get("duration_filter", -1)
    pattern_text = body.get("transactional_id_pattern")
    try:
        pattern = re.compile(pattern_text) if pattern_text else None
    except re.error:
        return {
            "throttle_time_ms": 0,
            "error_code": ErrorCode.INVALID_REQUEST,
            "unknown_state_filters": unknown,
            "transaction_states": [],
        }
    now = ctx.services.clock.wall_ms()
    listed = []
    for tid, meta in sorted(ctx.services.transactions.transactions.items()):
        if (body.state_filters and meta.state not in states) or (pids and meta.producer_id not in pids):
            continue
        if min_duration >= 0 and (meta.start_ms < 0 or now - meta.start_ms <= min_duration):
            continue
        if pattern is not None and not pattern.fullmatch(tid):
            continue
        if not allowed(ctx, Operation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, tid):
            continue
        listed.append(
            {
                "transactional_id": tid,
                "producer_id": meta.producer_id,
                "transaction_state": meta.state.kafka_name,
            }
        )
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "unknown_state_filters": unknown,
        "transaction_states": listed,
    }
