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
a partition whose leader or ISR no longer       the move :func:`hmb.cluster.elections.failover`
fits the live brokers (gone, shutting down)     decides (its own table: new leader from the ISR,
                                                epoch + 1; offline when none)
an election asked for (ElectLeaders, auto       the move :func:`~hmb.cluster.elections.preferred`
leader rebalance, /admin/preferred_replica_     or :func:`~hmb.cluster.elections.unclean` decides
election)
==============================================  ==================================================

With one replica per partition a dead broker's partitions are leaderless
until it returns, as Kafka with replication factor 1; with more, the new
leader is the first live member of the ISR, which the leader keeps
(:mod:`hmb.replication`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError, RolledBackError

from hmb.cluster import elections, layout
from hmb.cluster.elections import Electorate, Outcome
from hmb.cluster.layout import PartitionState
from hmb.cluster.receipts import delete_receipts
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


def _delete_topic(zk: KazooClient, epoch: Epoch, view: ClusterView, topic: str) -> None:
    assignment = view.topics.get(topic)
    ops: list[tuple[str, str, bytes, int]] = []
    if assignment is not None:
        delete_receipts(zk, topic)  # rAck receipts would keep the topic's znode from going
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


def reconcile(zk: KazooClient, epoch: Epoch, view: ClusterView, electorate: Electorate | None = None) -> int:
    """Write what the view lacks (the table above); how many znodes were written (blocking)."""
    electorate = electorate or Electorate()
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
            moved = elections.failover(view, topic, replicas, state, epoch.epoch, electorate)
            if moved is not None and _move(zk, epoch, topic, p, state, moved):
                written += 1
    return written


def _move(
    zk: KazooClient, epoch: Epoch, topic: str, p: int, state: PartitionState, moved: PartitionState
) -> bool:
    """Write ``moved`` over ``state`` if nobody changed it meanwhile; whether it was written."""
    try:
        _fenced_write(zk, epoch, [("set", layout.state_path(topic, p), moved.encode(), state.zk_version)])
    except (BadVersionError, NoNodeError):
        return False  # changed since the view was read: the next wake-up sees it
    log.info(
        "controller: %s-%d leader %d -> %d (leader epoch %d), ISR %s",
        topic,
        p,
        state.leader,
        moved.leader,
        moved.leader_epoch,
        list(moved.isr),
    )
    return True


#: (topic, partition) -> how its election ended: an ElectLeaders answer per partition
ElectionResults = dict[tuple[str, int], Outcome]


def elect(
    zk: KazooClient,
    epoch: Epoch,
    view: ClusterView,
    election_type: int,
    partitions: list[tuple[str, int]] | None,
    electorate: Electorate,
) -> ElectionResults:
    """Run an ElectLeaders election (None: every partition) and write its moves (blocking)."""
    if partitions is None:
        partitions = sorted(
            (t, p) for t, a in view.topics.items() if t not in view.deleting for p in a.partitions
        )
    rule = elections.preferred if election_type == elections.PREFERRED else elections.unclean
    results: ElectionResults = {}
    for topic, p in partitions:
        assignment = view.topics.get(topic)
        if assignment is None or p not in assignment.partitions or topic in view.deleting:
            results[(topic, p)] = Outcome.UNKNOWN_PARTITION
            continue
        state = view.states.get((topic, p))
        moved, outcome = rule(view, assignment.partitions[p], state, epoch.epoch, electorate)
        if moved is not None and state is not None and not _move(zk, epoch, topic, p, state, moved):
            outcome = Outcome.CHANGED  # its state changed while electing: ask again
        results[(topic, p)] = outcome
    return results


def tool_election(zk: KazooClient, epoch: Epoch, view: ClusterView, electorate: Electorate) -> int:
    """Kafka's ZooKeeper-mode preferred election: the partitions listed in
    ``/admin/preferred_replica_election`` get their preferred leaders, then the znode goes."""
    if view.preferred_election is None:
        return 0
    known = [tp for tp in view.preferred_election if tp[0] in view.topics]
    moves = elect(zk, epoch, view, elections.PREFERRED, known, electorate)
    try:
        _fenced_write(zk, epoch, [("delete", layout.PREFERRED_ELECTION, b"", -1)])
    except NoNodeError:
        pass
    log.info("controller: preferred replica election of %d partition(s) asked through ZooKeeper", len(known))
    return 1 + sum(1 for outcome in moves.values() if outcome is Outcome.ELECTED)


def rebalance(
    zk: KazooClient, epoch: Epoch, view: ClusterView, percentage: int, electorate: Electorate
) -> int:
    """Auto leader rebalance: preferred elections for the imbalanced brokers' partitions (blocking)."""
    moves = elect(zk, epoch, view, elections.PREFERRED, elections.imbalanced(view, percentage), electorate)
    return sum(1 for outcome in moves.values() if outcome is Outcome.ELECTED)
