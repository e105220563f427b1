"""What a produce with ``acks=all`` (-1) waits for at the leader of a replicated partition.

==============================================  ==================================
when                                            the partition's answer
==============================================  ==================================
before the append, ISR < ``min.insync.replicas``  NOT_ENOUGH_REPLICAS, nothing written
the high watermark passed the batch             NONE (every in-sync replica has it)
... but the ISR shrank below the minimum        NOT_ENOUGH_REPLICAS_AFTER_APPEND
the request's ``timeout_ms`` ran out first      REQUEST_TIMED_OUT (the batch stays)
this broker stopped leading meanwhile           NOT_LEADER_OR_FOLLOWER
==============================================  ==================================

``acks=1`` answers after the leader's append, as ever.  The wait is on the
log's wake-up (set when the high watermark moves), never a sleep loop; a
re-check every :data:`RECHECK_S` bounds a wait across a change of role.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

import trio

from hmb.log.partition import PartitionLog

if TYPE_CHECKING:  # not at run time: a broker alone imports this module, and never kazoo
    from hmb.replication.roles import Replication

RECHECK_S = 0.5


class Outcome(enum.Enum):
    REPLICATED = "replicated"
    TOO_FEW_AFTER = "too few in sync after the append"
    TIMED_OUT = "timed out"
    NOT_LEADER = "no longer the leader"


def too_few_in_sync(replication: Replication, plog: PartitionLog) -> bool:
    """Whether an acks=all append must be refused now (ISR below min.insync.replicas)."""
    size = replication.isr_size(plog.topic, plog.partition)
    return size is not None and size < plog.config.min_insync_replicas


async def replicated(
    replication: Replication, plog: PartitionLog, last_offset: int, deadline: float
) -> Outcome:
    """Wait (until trio time ``deadline``) for the high watermark to pass ``last_offset``."""
    while plog.high_watermark <= last_offset:
        if replication.isr_size(plog.topic, plog.partition) is None:
            return Outcome.NOT_LEADER
        if trio.current_time() >= deadline:
            return Outcome.TIMED_OUT
        event = trio.Event()
        plog.wake_on_append(event)
        try:
            with trio.move_on_at(min(deadline, trio.current_time() + RECHECK_S)):
                await event.wait()
        finally:
            plog.stop_waking(event)
    if too_few_in_sync(replication, plog):
        return Outcome.TOO_FEW_AFTER
    return Outcome.REPLICATED
