"""Transactions in a cluster: the coordinator follows the leadership of ``__transaction_state``.

Rules (Kafka's placement):

* A transactional id's coordinator is the leader of state partition
  ``abs(hashCode(id)) % transaction.state.log.num.partitions``.
* After each change of the cluster's view the broker tells
  :func:`follow_leadership` which state partitions it leads and under which
  leader epoch: a partition newly led is read back (its transactions in
  Prepare* are completed by the coordinator's timer), one no longer led is
  forgotten.  The leader epoch is the coordinator epoch its markers carry.
* State writes wait for the in-sync replicas (:func:`replicated_by`), as an
  ``acks=all`` produce: refused below the partition's ``min.insync.replicas``
  (``transaction.state.log.min.isr``), and failed when this broker stops
  leading meanwhile.  Either is an OSError: the request is answered with a
  retriable error and the state is not acted on.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import trio

from hmb.log.partition import PartitionLog
from hmb.txn.state_log import TOPIC, NotLeaderError

if TYPE_CHECKING:
    from hmb.replication.roles import Replication
    from hmb.txn.coordinator import TransactionCoordinator

log = logging.getLogger(__name__)

#: how long a state write waits for the in-sync replicas (Kafka's request.timeout.ms)
STATE_WRITE_TIMEOUT_S = 30.0


class NotEnoughReplicasError(OSError):
    """Too few in-sync replicas of a state partition to take (or keep) a coordinator's write."""


def follow_leadership(coordinator: TransactionCoordinator, partitions: int, led: dict[int, int]) -> None:
    """Coordinate the ids of the state partitions in ``led`` (partition -> leader epoch) of
    ``partitions``; called by the broker's cluster loop after each change of the view."""
    if coordinator.coordinated is None:
        coordinator.coordinated = set()
    coordinator.state_log.partitions = partitions
    coordinator.coordinator_epochs = dict(led)
    for p in sorted(coordinator.coordinated - set(led)):
        coordinator.give_up(p)
        log.info("%s-%d: no longer led here, its transactional ids are forgotten", TOPIC, p)
    for p in sorted(set(led) - coordinator.coordinated):
        if coordinator.state_log.logs.get(TOPIC, p) is None:  # not opened yet: the next view tries again
            continue
        loaded = coordinator.take_over(p)
        log.info("%s-%d: led here now, %d transactional id(s) loaded", TOPIC, p, loaded)


def replicated_by(replication: Replication) -> Callable[[PartitionLog, int], Awaitable[None]]:
    """The state log's wait for its in-sync replicas (see the rules above)."""
    from hmb.replication import acks

    async def replicated(plog: PartitionLog, last_offset: int) -> None:
        deadline = trio.current_time() + STATE_WRITE_TIMEOUT_S
        outcome = await acks.replicated(replication, plog, last_offset, deadline)
        if outcome is acks.Outcome.NOT_LEADER:
            raise NotLeaderError(f"{plog.topic}-{plog.partition}: no longer led here")
        if outcome is not acks.Outcome.REPLICATED:
            raise NotEnoughReplicasError(f"{plog.topic}-{plog.partition}: {outcome.value}")

    return replicated
