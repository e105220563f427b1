"""Offset commits in a cluster wait for the in-sync replicas, as Kafka's group coordinator
writes them with acks=-1.

A commit acknowledged only by the coordinator's own copy of its
``__consumer_offsets`` partition would be lost with the coordinator: its
successor, an in-sync follower, might not have copied it yet.  So the answer
waits (up to ``offsets.commit.timeout.ms``) for the partition's high
watermark to pass the commit, and the outcome maps as Kafka maps it:

==========================================  ===============================
the wait                                    the commit's answer
==========================================  ===============================
every in-sync replica has it                NONE
too few in sync afterwards, or timed out    COORDINATOR_NOT_AVAILABLE
this broker no longer leads the partition   NOT_COORDINATOR
==========================================  ===============================

Alone there is nobody to wait for: the answer is NONE at once.
"""

from __future__ import annotations

import trio

from hmb.api.context import RequestContext
from kproto import ErrorCode


async def commit_replicated(ctx: RequestContext, group: str) -> ErrorCode:
    """Wait until the last write to ``group``'s offsets partition is on every in-sync replica."""
    cluster = ctx.services.cluster
    if cluster is None:
        return ErrorCode.NONE
    plog = ctx.services.offsets.log_of(group)
    if plog is None:
        return ErrorCode.NOT_COORDINATOR
    from hmb.replication import acks

    deadline = trio.current_time() + ctx.config.offsets_commit_timeout_ms / 1000
    outcome = await acks.replicated(cluster.replication, plog, plog.log_end_offset - 1, deadline)
    if outcome is acks.Outcome.REPLICATED:
        return ErrorCode.NONE
    if outcome is acks.Outcome.NOT_LEADER:
        return ErrorCode.NOT_COORDINATOR
    return ErrorCode.COORDINATOR_NOT_AVAILABLE
