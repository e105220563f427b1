"""The leader's ISR writes: the partition's state znode, set against the version it read.

As Kafka's ZooKeeper mode (before AlterPartition), the leader writes the ISR
itself, with a conditional set on the znode's version.  A failed condition
means someone else wrote meanwhile (the controller electing another leader,
or bumping the epoch): the leader re-reads (the next view) and decides again,
never overwrites.  A leader whose epoch in the znode is no longer its own
writes nothing.
"""

from __future__ import annotations

import logging

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NoNodeError

from hmb.cluster import layout
from hmb.cluster.layout import PartitionState

log = logging.getLogger(__name__)


def write_isr(
    zk: KazooClient, topic: str, partition: int, state: PartitionState, isr: tuple[int, ...]
) -> PartitionState | None:
    """Set ``isr`` in the state znode if it is still ``state``; the new state, or None (re-read)."""
    new = PartitionState(state.leader, state.leader_epoch, isr, state.controller_epoch)
    try:
        stat = zk.set(layout.state_path(topic, partition), new.encode(), version=state.zk_version)
    except (BadVersionError, NoNodeError):
        log.info("%s-%d: ISR not written, the state changed meanwhile", topic, partition)
        return None
    return PartitionState(new.leader, new.leader_epoch, new.isr, new.controller_epoch, stat.version)
