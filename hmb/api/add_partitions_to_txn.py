"""AddPartitionsToTxn v0-v5: partitions join a transactional id's transaction.

A partition must exist and the client must hold Write on the transactional
id and on its topic.  Kafka's rule for a request that cannot be applied
whole: the partitions at fault get their code (TOPIC_AUTHORIZATION_FAILED,
UNKNOWN_TOPIC_OR_PARTITION), every other one OPERATION_NOT_ATTEMPTED, and
nothing is added.  Otherwise the coordinator's code applies to every
partition (INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED for a stale epoch,
CONCURRENT_TRANSACTIONS while markers are written).

Versions: v0-v3 carry one transaction (v2: PRODUCER_FENCED, older versions
get INVALID_PRODUCER_EPOCH; v3 flexible).  v4 batches transactions and adds
``verify_only`` (KIP-890: a broker asks whether partitions are already in
a transaction); v4+ is the brokers' API, so it needs ClusterAction, as in
Kafka: a refusal is the top-level CLUSTER_AUTHORIZATION_FAILED.  v5 only
allows TRANSACTION_ABORTABLE, never sent here.
"""

from __future__ import annotations

import logging
from typing import Any

from hmb.api.authz import allowed, cluster_allowed, topics_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.api.txn_codes import for_version
from hmb.security.acl import Operation, ResourceType
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)

Codes = dict[tuple[str, int], int]


def _partitions(topics: Any) -> list[tuple[str, int]]:
    return list(dict.fromkeys((t.name, p) for t in topics for p in t.partitions))


def _refusals(ctx: RequestContext, tid: str, partitions: list[tuple[str, int]]) -> Codes | None:
    """Each partition's code when the request cannot be applied (None: it can)."""
    if not allowed(ctx, Operation.WRITE, ResourceType.TRANSACTIONAL_ID, tid):
        return dict.fromkeys(partitions, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    writable = topics_allowed(ctx, Operation.WRITE, (t for t, _ in partitions))
    faults: Codes = {}
    for topic, index in partitions:
        if topic not in writable:
            faults[(topic, index)] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        elif ctx.logs.get(topic, index) is None:
            faults[(topic, index)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if not faults:
        return None
    return {tp: faults.get(tp, ErrorCode.OPERATION_NOT_ATTEMPTED) for tp in partitions}


async def _add(ctx: RequestContext, tid: str, pid: int, epoch: int, topics: Any, verify_only: bool) -> Codes:
    partitions = _partitions(topics)
    refused = _refusals(ctx, tid, partitions)
    if refused is not None:
        return refused
    coordinator = ctx.services.transactions
    if verify_only:
        return coordinator.verify(tid, pid, epoch, partitions)
    try:
        code = await coordinator.add_partitions(tid, pid, epoch, partitions)
    except OSError as exc:
        log.error("AddPartitionsToTxn for %s failed: %s", tid, exc)
        code = ErrorCode.COORDINATOR_NOT_AVAILABLE
    code = for_version(code, ApiKey.ADD_PARTITIONS_TO_TXN, ctx.request.version)
    return dict.fromkeys(partitions, code)


def _topic_results(codes: Codes) -> list[dict[str, Any]]:
    by_topic: dict[str, list[dict[str, int]]] = {}
    for (topic, index), code in codes.items():
        by_topic.setdefault(topic, []).append({"partition_index": index, "partition_error_code": code})
    return [{"name": name, "results_by_partition": results} for name, results in by_topic.items()]


@handles(ApiKey.ADD_PARTITIONS_TO_TXN, versions=(0, 5))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    if ctx.request.version <= 3:
        codes = await _add(
            ctx,
            body.v3_and_below_transactional_id,
            body.v3_and_below_producer_id,
            body.v3_and_below_producer_epoch,
            body.v3_and_below_topics,
            verify_only=False,
        )
        return {"throttle_time_ms": 0, "results_by_topic_v3_and_below": _topic_results(codes)}
    if not cluster_allowed(ctx, Operation.CLUSTER_ACTION):
        return {
            "throttle_time_ms": 0,
            "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            "results_by_transaction": [],
        }
    results = []
    for txn in body.transactions:
        codes = await _add(
            ctx, txn.transactional_id, txn.producer_id, txn.producer_epoch, txn.topics, txn.verify_only
        )
        results.append({"transactional_id": txn.transactional_id, "topic_results": _topic_results(codes)})
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "results_by_transaction": results}
