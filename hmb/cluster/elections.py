"""The controller's leader elections, as pure rules over a view: who may lead, who should.

Rules:

* Pure: every function here takes a :class:`~hmb.cluster.view.ClusterView`
  and a partition's state and returns the state it should move to (or None:
  it is right as it is), with the :class:`Outcome` where a request asked
  for the election (the API layer turns it into Kafka's error code).
  Nothing here writes; :mod:`hmb.cluster.controller` writes what these
  rules decide, each write a conditional set.
* A broker is *eligible* to lead when it is registered and not shutting
  down (a broker that asked for a controlled shutdown leads nothing new and
  leaves the ISRs), as Kafka's controller counts only live, not
  shutting-down brokers.
* A new leader always gets the partition's leader epoch + 1; an ISR change
  alone keeps the leader epoch.

The decision table (``replicas`` is the assignment, its first entry the
preferred leader):

=====================================================  ===========================================
the partition                                          moves to
=====================================================  ===========================================
**failover** (every controller step)
leader eligible, every ISR member eligible             nothing
leader eligible, followers in the ISR gone or          the ISR without them (Kafka's controller
shutting down                                          takes an offline replica out of the ISR)
leader shutting down, another eligible ISR member      that member leads, ISR without the leader
leader shutting down, no other eligible ISR member     nothing: it leads until it stops (one replica:
                                                       the partition goes offline then, as Kafka's)
leader gone (or -1), an eligible ISR member            the first one leads, ISR = eligible members
leader gone, none in the ISR, unclean allowed,         the first eligible replica leads, ISR = it
an eligible replica                                    (``unclean.leader.election.enable``)
leader gone, nobody eligible                           leader -1, ISR kept (offline)
**preferred** (ElectLeaders type 0, auto rebalance)
leader is the preferred replica                        not needed
preferred eligible and in the ISR                      it leads, ISR kept
otherwise                                              preferred not available
**unclean** (ElectLeaders type 1, KIP-460)
the leader is eligible                                 not needed
an eligible ISR member                                 it leads (a clean election after all)
an eligible replica                                    it leads, ISR = it (records may be lost)
nobody eligible                                        no eligible leader
=====================================================  ===========================================

An unclean election asked for by ElectLeaders runs whatever
``unclean.leader.election.enable`` says: an administrator asking for it is
the consent the setting stands for (KIP-460).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum

from hmb.cluster import layout
from hmb.cluster.layout import PartitionState
from hmb.cluster.view import ClusterView

PREFERRED = 0  # ElectLeaders election_type
UNCLEAN = 1


class Outcome(Enum):
    """How an election asked for ended (the API layer answers each with Kafka's error code)."""

    ELECTED = "a new leader"
    NOT_NEEDED = "leader election not needed"
    PREFERRED_NOT_AVAILABLE = "the preferred leader is not alive and in sync"
    NO_ELIGIBLE_LEADER = "no live replica may lead"
    UNKNOWN_PARTITION = "unknown partition"
    CHANGED = "the partition's state changed during the election"


@dataclass(frozen=True)
class Electorate:
    """What the controller knows beyond the view: who is shutting down, who may lead uncleanly."""

    shutting_down: frozenset[int] = frozenset()
    #: per topic, whether ``unclean.leader.election.enable`` allows an out-of-sync leader
    unclean_allowed: Callable[[str], bool] = field(default=lambda _topic: False)

    def eligible(self, view: ClusterView, broker: int) -> bool:
        return broker in view.brokers and broker not in self.shutting_down


def failover(
    view: ClusterView,
    topic: str,
    replicas: Sequence[int],
    state: PartitionState,
    epoch: int,
    electorate: Electorate,
) -> PartitionState | None:
    """The state ``state`` should move to after brokers came, went or began shutting down."""
    leader = state.leader
    if electorate.eligible(view, leader):
        isr = tuple(b for b in state.isr if b == leader or electorate.eligible(view, b))
        if isr == state.isr:
            return None
        return PartitionState(leader, state.leader_epoch, isr, epoch)
    candidates = [b for b in state.isr if electorate.eligible(view, b)]
    if leader in electorate.shutting_down and leader in view.brokers:
        if not candidates:
            return None  # nobody to hand over to: it leads until it stops
        return PartitionState(candidates[0], state.leader_epoch + 1, tuple(candidates), epoch)
    if candidates:
        return PartitionState(candidates[0], state.leader_epoch + 1, tuple(candidates), epoch)
    if electorate.unclean_allowed(topic):
        unclean = [b for b in replicas if electorate.eligible(view, b)]
        if unclean:
            return PartitionState(unclean[0], state.leader_epoch + 1, (unclean[0],), epoch)
    if leader == layout.NO_LEADER:
        return None
    isr = state.isr or (leader,)
    return PartitionState(layout.NO_LEADER, state.leader_epoch + 1, isr, epoch)


def preferred(
    view: ClusterView,
    replicas: Sequence[int],
    state: PartitionState | None,
    epoch: int,
    electorate: Electorate,
) -> tuple[PartitionState | None, Outcome]:
    """Move leadership back to the preferred replica (the assignment's first)."""
    if state is None or not replicas:
        return None, Outcome.PREFERRED_NOT_AVAILABLE
    first = replicas[0]
    if state.leader == first:
        return None, Outcome.NOT_NEEDED
    if electorate.eligible(view, first) and first in state.isr:
        return PartitionState(first, state.leader_epoch + 1, state.isr, epoch), Outcome.ELECTED
    return None, Outcome.PREFERRED_NOT_AVAILABLE


def unclean(
    view: ClusterView,
    replicas: Sequence[int],
    state: PartitionState | None,
    epoch: int,
    electorate: Electorate,
) -> tuple[PartitionState | None, Outcome]:
    """Give a leaderless partition a leader, out of the ISR if it must be."""
    if state is None:
        return None, Outcome.NO_ELIGIBLE_LEADER
    if electorate.eligible(view, state.leader):
        return None, Outcome.NOT_NEEDED
    in_sync = [b for b in state.isr if electorate.eligible(view, b)]
    if in_sync:
        return PartitionState(in_sync[0], state.leader_epoch + 1, tuple(in_sync), epoch), Outcome.ELECTED
    others = [b for b in replicas if electorate.eligible(view, b)]
    if others:
        return PartitionState(others[0], state.leader_epoch + 1, (others[0],), epoch), Outcome.ELECTED
    return None, Outcome.NO_ELIGIBLE_LEADER


def imbalanced(view: ClusterView, percentage: int) -> list[tuple[str, int]]:
    """The partitions auto rebalance moves back: those of every broker whose imbalance is too high.

    Kafka's rule: a broker's imbalance is the share of the partitions it is the
    preferred replica of that another broker leads; above
    ``leader.imbalance.per.broker.percentage`` its partitions are given back to
    it (each only if the preferred election can succeed: the caller checks)."""
    preferred_of: dict[int, list[tuple[str, int]]] = {}
    for topic, assignment in view.topics.items():
        if topic in view.deleting:
            continue
        for p, replicas in assignment.partitions.items():
            if replicas:
                preferred_of.setdefault(replicas[0], []).append((topic, p))
    out: list[tuple[str, int]] = []
    for broker, owned in sorted(preferred_of.items()):
        if broker not in view.brokers:
            continue
        away = [tp for tp in owned if view.leader(*tp) != broker]
        if away and len(away) * 100 > percentage * len(owned):
            out.extend(sorted(away))
    return out
