"""WriteTxnMarkers in a cluster: a marker is written by the partition's leader, acks=all.

Rules (Kafka's leaders append markers with ``acks=all``):

==============================================  ==================================
when                                            the partition's answer
==============================================  ==================================
another broker leads the partition (or none)    NOT_LEADER_OR_FOLLOWER, nothing written
in-sync replicas < ``min.insync.replicas``        NOT_ENOUGH_REPLICAS, nothing written
the high watermark passed the marker            NONE
... but the ISR shrank below the minimum        NOT_ENOUGH_REPLICAS_AFTER_APPEND
no in-sync replica took it in time              REQUEST_TIMED_OUT (the marker stays)
this broker stopped leading meanwhile           NOT_LEADER_OR_FOLLOWER
==============================================  ==================================

A marker must reach the in-sync replicas before the coordinator logs the
transaction complete: a new leader without it would hold the partition's
last stable offset back forever.  The coordinator sends again whatever was
not answered NONE.  Alone there is nothing to wait for.
"""

from __future__ import annotations

import trio

from hmb.api.context import RequestContext
from hmb.api.leadership import misdirected
from hmb.log.partition import PartitionLog
from hmb.replication import acks
from kproto import ErrorCode

TIMEOUT_S = 30.0  # Kafka's request.timeout.ms for the coordinator's marker requests

_CODES = {
    acks.Outcome.REPLICATED: ErrorCode.NONE,
    acks.Outcome.TOO_FEW_AFTER: ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    acks.Outcome.TIMED_OUT: ErrorCode.REQUEST_TIMED_OUT,
    acks.Outcome.NOT_LEADER: ErrorCode.NOT_LEADER_OR_FOLLOWER,
}


def refusal(ctx: RequestContext, plog: PartitionLog) -> int:
    """Why this broker must not write a marker on ``plog`` now (0: it may)."""
    cluster = ctx.services.cluster
    if cluster is None:
        return ErrorCode.NONE
    if misdirected(ctx, plog.topic, plog.partition):
        return ErrorCode.NOT_LEADER_OR_FOLLOWER
    if acks.too_few_in_sync(cluster.replication, plog):
        return ErrorCode.NOT_ENOUGH_REPLICAS
    return ErrorCode.NONE


async def replicated(ctx: RequestContext, plog: PartitionLog, offset: int) -> int:
    """Wait until the in-sync replicas hold the marker at ``offset``; the partition's answer."""
    cluster = ctx.services.cluster
    if cluster is None:
        return ErrorCode.NONE
    outcome = await acks.replicated(cluster.replication, plog, offset, trio.current_time() + TIMEOUT_S)
    return int(_CODES[outcome])
