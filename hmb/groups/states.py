"""The states of a consumer group and every transition between them, as one table.

Kafka's classic group protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup)::

                                  JOIN, MEMBER_GONE
                                      +-----+
                                      |     v
    +-------+   JOIN    +--------------------+  ALL_JOINED   +---------------------+
    | Empty | --------> | PreparingRebalance | ------------> | CompletingRebalance |
    +-------+           +--------------------+ <------------ +---------------------+
        ^                      ^             JOIN, MEMBER_GONE         |
        |                      |                                       | LEADER_SYNCED
        |                      |         JOIN, MEMBER_GONE             v
        |                      +--------------------------------- +--------+
        |                                                         | Stable |
        |                                                         +--------+
        +--- LAST_MEMBER_GONE, from PreparingRebalance, CompletingRebalance or Stable

Rules of this module:

* :data:`TRANSITIONS` is the whole state machine: (state, event) -> (next
  state, action).  The coordinator changes a group's state only through
  :func:`transition`, which refuses any pair not in the table: reaching one
  is a bug of the coordinator, not a client error, so it raises.
* The guards (when an event happens) live in the coordinator; which events
  exist and where they lead live here.
* Empty means "no members" (a group with only KIP-394 pending member ids is
  Empty).  Dead is never entered: a deleted group (DeleteGroups, Empty
  groups only) is forgotten at once, and the value is what DescribeGroups
  reports for a group the broker does not know.
* Leaving CompletingRebalance, by any transition, wakes the SyncGroups
  waiting on that generation: they get their assignment if the group became
  Stable, REBALANCE_IN_PROGRESS or UNKNOWN_MEMBER_ID otherwise.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple


class GroupState(Enum):
    """A group's state, valued as Kafka names it on the wire (DescribeGroups)."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"  # reported for unknown groups only: no group is ever in it


class GroupEvent(Enum):
    """What happens to a group; the coordinator decides when (the guards)."""

    #: a JoinGroup that takes part in a rebalance: a new member, changed
    #: metadata, the leader of a stable group, or any join while preparing
    JOIN = "join"
    #: a member left (LeaveGroup), its session expired, or it did not rejoin
    #: before the rebalance timeout, and other members remain
    MEMBER_GONE = "member gone"
    #: as MEMBER_GONE, for the group's last member
    LAST_MEMBER_GONE = "last member gone"
    #: every member waits in JoinGroup and the initial rebalance delay is over
    ALL_JOINED = "all joined"
    #: the leader's SyncGroup of the current generation, with the assignments
    LEADER_SYNCED = "leader synced"


class Action(Enum):
    """What the coordinator does on a transition (``GroupCoordinator._act``)."""

    #: deadline = now + the longest rebalance timeout of the members
    START_REBALANCE = "start rebalance"
    #: as START_REBALANCE; a new group also waits group.initial.rebalance.delay.ms
    START_FIRST_REBALANCE = "start first rebalance"
    #: already rebalancing: only the deadlines may have moved
    CONTINUE_REBALANCE = "continue rebalance"
    #: generation + 1, protocol and leader chosen, every waiting JoinGroup answered
    START_GENERATION = "start generation"
    #: the leader's assignments stand (stored by SyncGroup before the event)
    PUBLISH_ASSIGNMENTS = "publish assignments"
    #: generation + 1, leader, protocol and timers forgotten
    RESET = "reset"


class Transition(NamedTuple):
    target: GroupState
    action: Action


_EMPTY = GroupState.EMPTY
_PREPARING = GroupState.PREPARING_REBALANCE
_COMPLETING = GroupState.COMPLETING_REBALANCE
_STABLE = GroupState.STABLE

#: Every legal transition.  Pairs not listed cannot happen; see :func:`transition`.
TRANSITIONS: dict[tuple[GroupState, GroupEvent], Transition] = {
    (_EMPTY, GroupEvent.JOIN): Transition(_PREPARING, Action.START_FIRST_REBALANCE),
    (_PREPARING, GroupEvent.JOIN): Transition(_PREPARING, Action.CONTINUE_REBALANCE),
    (_PREPARING, GroupEvent.MEMBER_GONE): Transition(_PREPARING, Action.CONTINUE_REBALANCE),
    (_PREPARING, GroupEvent.ALL_JOINED): Transition(_COMPLETING, Action.START_GENERATION),
    (_PREPARING, GroupEvent.LAST_MEMBER_GONE): Transition(_EMPTY, Action.RESET),
    (_COMPLETING, GroupEvent.LEADER_SYNCED): Transition(_STABLE, Action.PUBLISH_ASSIGNMENTS),
    (_COMPLETING, GroupEvent.JOIN): Transition(_PREPARING, Action.START_REBALANCE),
    (_COMPLETING, GroupEvent.MEMBER_GONE): Transition(_PREPARING, Action.START_REBALANCE),
    (_COMPLETING, GroupEvent.LAST_MEMBER_GONE): Transition(_EMPTY, Action.RESET),
    (_STABLE, GroupEvent.JOIN): Transition(_PREPARING, Action.START_REBALANCE),
    (_STABLE, GroupEvent.MEMBER_GONE): Transition(_PREPARING, Action.START_REBALANCE),
    (_STABLE, GroupEvent.LAST_MEMBER_GONE): Transition(_EMPTY, Action.RESET),
}


class IllegalTransitionError(RuntimeError):
    """The coordinator tried a transition the table does not list (a bug)."""

    def __init__(self, group_id: str, state: GroupState, event: GroupEvent) -> None:
        super().__init__(f"group {group_id!r}: no transition from {state.value} on {event.value!r}")
        self.state = state
        self.event = event


def transition(group_id: str, state: GroupState, event: GroupEvent) -> Transition:
    """Where ``event`` leads from ``state``, and what to do; raises :class:`IllegalTransitionError`."""
    try:
        return TRANSITIONS[state, event]
    except KeyError:
        raise IllegalTransitionError(group_id, state, event) from None
