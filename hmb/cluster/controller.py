"""The controller: one broker at a time, elected through ZooKeeper, that decides who leads.

Election is Kafka's: the first broker to create the ephemeral ``/controller``
is controller until its session ends; it then bumps ``/controller_epoch`` by
a conditional set, and every write it makes afterwards is a ZooKeeper
transaction that also checks that epoch znode's version.  A controller cut
off from ZooKeeper (whose successor has bumped the epoch) therefore cannot
write anything: its transactions fail, it is fenced.

What the controller does is one function, :func:`reconcile`, run on every
wake-up over a fresh :class:`~hmb.cluster.view.ClusterView`.  It compares what
is with what should be and writes the difference; running it twice changes
nothing the second time.  The decisions, as a table:

==============================================  ==================================================
the view shows                                  the controller writes
==============================================  ==================================================
a topic under /admin/delete_topics              its state, partitions, topic and config znodes go,
                                                then the marker
a partition with no state znode                 leader = first live replica, ISR = live replicas,
                                                leader epoch 0 (no live replica: left unplaced)
a leader whose broker is not registered         leader = first live member of the ISR, epoch + 1;
                                                none (one replica): leader -1, ISR kept
leader -1 and an ISR member registered again    leader = that member, epoch + 1
==============================================  ==================================================

With one replica per partition a dead broker's partitions are leaderless
until it returns, as Kafka with replication factor 1; with more, the new
leader is the first live member of the ISR, which the leader keeps
(:mod:`hmb.replication`); ``unclean.leader.election.enable`` is not acted on.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError, RolledBackError

from hmb.cluster import layout
from hmb.cluster.layout import PartitionState
from hmb.cluster.view import ClusterView

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Epoch:
    """This broker's term as controller: the epoch number and the epoch znode's version."""

    epoch: int
    zk_version: int


def try_elect(zk: KazooClient, broker_id: int) -> Epoch | None:
    """Stand for controller; the new epoch when this broker won, None when another holds it."""
    try:
        zk.create(layout.CONTROLLER, layout.encode_controller(broker_id), ephemeral=True)
    except NodeExistsError:
        return None
    while True:
        try:
            data, stat = zk.get(layout.CONTROLLER_EPOCH)
        except NoNodeError:
            try:
                zk.create(layout.CONTROLLER_EPOCH, layout.encode_epoch(1))
            except NodeExistsError:
                continue
            _, stat = zk.get(layout.CONTROLLER_EPOCH)
            return Epoch(1, stat.version)
        epoch = layout.decode_epoch(data) + 1
        try:
            stat = zk.set(layout.CONTROLLER_EPOCH, layout.encode_epoch(epoch), version=stat.version)
        except BadVersionError:
            continue
        return Epoch(epoch, stat.version)


class FencedError(Exception):
    """A write was refused because another controller has a newer epoch."""


def _fenced_write(zk: KazooClient, epoch: Epoch, ops: list[tuple[str, str, bytes, int]]) -> None:
    """Apply ``ops`` (kind, path, data, version) atomically, only while ``epoch`` is current."""
    tx = zk.transaction()
    tx.check(layout.CONTROLLER_EPOCH, epoch.zk_version)
    for kind, path, data, version in ops:
        if kind == "create":
            tx.create(path, data)
        elif kind == "set":
            tx.set_data(path, data, version=version)
        else:
            tx.delete(path, version=version)
    results = tx.commit()
    # a failed transaction answers each op: the one that failed its error, the others RolledBackError
    failures = [r for r in results if isinstance(r, Exception) and not isinstance(r, RolledBackError)]
    if failures:
        if failures[0] is results[0]:  # the epoch check itself
            raise FencedError(f"controller epoch {epoch.epoch} is no longer current")
        raise failures[0]


def _place(view: ClusterView, replicas: tuple[int, ...], epoch: int) -> bytes | None:
    """A new partition's first state: its first live replica leads; None while none is alive."""
    live = [b for b in replicas if b in view.brokers]
    if not live:
        return None
    return PartitionState(live[0], 0, tuple(live), epoch).encode()


def _moved(view: ClusterView, state: PartitionState, epoch: int) -> PartitionState | None:
    """The state ``state`` should move to, or None when it is right as it is."""
    if state.leader != layout.NO_LEADER and state.leader in view.brokers:
        return None
    live_isr = [b for b in state.isr if b in view.brokers]
    if live_isr:
        if live_isr[0] == state.leader:
            return None
        return PartitionState(live_isr[0], state.leader_epoch + 1, tuple(live_isr), epoch)
    if state.leader == layout.NO_LEADER:
        return None
    isr = state.isr or (state.leader,)
    return PartitionState(layout.NO_LEADER, state.leader_epoch + 1, isr, epoch)


def _delete_topic(zk: KazooClient, epoch: Epoch, view: ClusterView, topic: str) -> None:
    assignment = view.topics.get(topic)
    ops: list[tuple[str, str, bytes, int]] = []
    if assignment is not None:
        for p in sorted(assignment.partitions):
            if zk.exists(layout.state_path(topic, p)):
                ops.append(("delete", layout.state_path(topic, p), b"", -1))
            if zk.exists(f"{layout.partitions_path(topic)}/{p}"):
                ops.append(("delete", f"{layout.partitions_path(topic)}/{p}", b"", -1))
        if zk.exists(layout.partitions_path(topic)):
            ops.append(("delete", layout.partitions_path(topic), b"", -1))
        ops.append(("delete", layout.topic_path(topic), b"", -1))
    if zk.exists(layout.topic_config_path(topic)):
        ops.append(("delete", layout.topic_config_path(topic), b"", -1))
    ops.append(("delete", layout.delete_topic_path(topic), b"", -1))
    _fenced_write(zk, epoch, ops)
    log.info("controller: deleted topic %s", topic)


def reconcile(zk: KazooClient, epoch: Epoch, view: ClusterView) -> int:
    """Write what the view lacks (the table above); how many znodes were written (blocking)."""
    written = 0
    for topic in sorted(view.deleting):
        _delete_topic(zk, epoch, view, topic)
        written += 1
    for topic, assignment in sorted(view.topics.items()):
        if topic in view.deleting:
            continue
        for p, replicas in sorted(assignment.partitions.items()):
            state = view.states.get((topic, p))
            if state is None:
                data = _place(view, tuple(replicas), epoch.epoch)
                if data is None:
                    continue
                zk.ensure_path(f"{layout.partitions_path(topic)}/{p}")
                try:
                    _fenced_write(zk, epoch, [("create", layout.state_path(topic, p), data, -1)])
                except NodeExistsError:
                    continue
                written += 1
                continue
            moved = _moved(view, state, epoch.epoch)
            if moved is None:
                continue
            try:
                _fenced_write(
                    zk, epoch, [("set", layout.state_path(topic, p), moved.encode(), state.zk_version)]
                )
            except BadVersionError:
                continue  # changed since the view was read: the next wake-up sees it
            log.info(
                "controller: %s-%d leader %d -> %d (leader epoch %d)",
                topic,
                p,
                state.leader,
                moved.leader,
                moved.leader_epoch,
            )
            written += 1
    return written
