"""WriteTxnMarkers v1-v2: write COMMIT or ABORT markers, served for tools.

The transaction coordinator of this broker writes its markers to its own
log directly; this API is how Kafka's tools (and another coordinator)
write them.  Each marker goes to every partition listed, through the log's
``append_marker``: a marker of an epoch older than the producer's is
INVALID_PRODUCER_EPOCH, a partition this broker does not have
UNKNOWN_TOPIC_OR_PARTITION, a negative producer id or epoch (no producer)
INVALID_PRODUCER_ID_MAPPING or INVALID_PRODUCER_EPOCH, nothing written.  A
marker on ``__consumer_offsets`` also makes the producer's transactional
offsets visible (COMMIT) or drops them.
ClusterAction is required (CLUSTER_AUTHORIZATION_FAILED on every
partition), as in Kafka.  In a cluster only a partition's leader writes
its marker, and answers once the in-sync replicas have it
(:mod:`hmb.api.marker_replication`).  v0 no longer exists in Kafka; v2 adds the
transaction version, which changes nothing here.
"""

from __future__ import annotations

import logging
from typing import Any

from hmb.api.authz import cluster_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.errors import LOG_ERRORS, error_code, log_refusal
from hmb.api.marker_replication import refusal, replicated
from hmb.api.registry import handles
from hmb.groups.offsets import TOPIC as OFFSETS_TOPIC
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)


async def _write(ctx: RequestContext, marker: Any, topic: str, index: int) -> int:
    plog = ctx.logs.get(topic, index)
    if plog is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if marker.producer_id < 0:  # a marker belongs to a producer: nothing to write for "none"
        return ErrorCode.INVALID_PRODUCER_ID_MAPPING
    if marker.producer_epoch < 0:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    commit = marker.transaction_result
    refused = refusal(ctx, plog)  # in a cluster: only the leader writes, acks=all
    if refused:
        return refused
    try:
        offset = await plog.append_marker(
            marker.producer_id,
            marker.producer_epoch,
            commit=commit,
            coordinator_epoch=marker.coordinator_epoch,
        )
    except LOG_ERRORS as exc:
        log_refusal(log, exc, f"marker on {topic}-{index}", ctx.peer)
        return error_code(exc, ApiKey.WRITE_TXN_MARKERS, ctx.request.version)
    if (adds := ctx.services.transactions.remote_adds) is not None:
        adds.forget(marker.producer_id)  # its transaction ended: a later batch is asked about again
    code = await replicated(ctx, plog, offset)
    if code:
        return code
    if topic == OFFSETS_TOPIC:
        ctx.offsets.complete_transaction(marker.producer_id, commit=commit)
    return ErrorCode.NONE


@handles(ApiKey.WRITE_TXN_MARKERS, versions=(1, 2))
async def handle(ctx: RequestContext) -> Reply:
    permitted = cluster_allowed(ctx, Operation.CLUSTER_ACTION)
    out = []
    for marker in ctx.request.body.markers:
        topics = []
        for t in marker.topics:
            partitions = []
            for index in t.partition_indexes:
                code = (
                    await _write(ctx, marker, t.name, index)
                    if permitted
                    else ErrorCode.CLUSTER_AUTHORIZATION_FAILED
                )
                partitions.append({"partition_index": index, "error_code": code})
            topics.append({"name": t.name, "partitions": partitions})
        out.append({"producer_id": marker.producer_id, "topics": topics})
    return {"markers": out}
