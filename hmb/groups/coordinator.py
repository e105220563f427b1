"""Consumer-group membership: Kafka's group coordinator, on trio.

The states and every transition between them are the table of
:mod:`hmb.groups.states` (with its diagram); this module decides when each
event happens (the guards) and carries out the table's actions.  A group's
state changes in :meth:`GroupCoordinator._fire` only.

Rules of this module:

* A rebalance completes the moment every known member has (re)joined.  Some
  Kafka-compatible brokers wait out half the session timeout instead, and
  with the clients' default 45 s session every join then takes ~23 s (see
  docs/client-quirks.md, "Rebalances").  Members that do not rejoin are
  dropped when their session expires or, at the latest, when the longest
  rebalance timeout of the group runs out.
* ``group.initial.rebalance.delay.ms`` is honoured as Kafka does (a new
  group waits that long for more members, each newcomer extending the wait up
  to the rebalance timeout), but the broker defaults it to 0: Kafka's 3000 ms
  makes every first assignment take over 3 s, and librdkafka's first
  assignment is meant to arrive in under a second.
* A member with a JoinGroup or SyncGroup in flight is alive (Kafka's
  ``shouldKeepAlive``); when such a request is abandoned (the client went
  away) the member's session clock starts again, so a dead member blocks a
  rebalance for one session timeout, never forever.
* JoinGroup v4+ without a member id is answered MEMBER_ID_REQUIRED with an
  id to rejoin with (KIP-394); the id is remembered as pending until then.
* Static membership (``group.instance.id``, KIP-345): a member that names an
  instance id is registered under it.  When that instance joins again
  without a member id (a restarted consumer) it takes over the old member:
  a new member id, the same assignment, and in a Stable group whose
  protocol does not change, no rebalance for anybody.  Requests that carry
  the instance id with another member id than the registered one come from
  the replaced (zombie) member and get FENCED_INSTANCE_ID.  Static members do
  not need the MEMBER_ID_REQUIRED round trip (Kafka asks it of dynamic
  members only).
* Membership lives in memory only (committed offsets are durable, in
  :mod:`hmb.groups.offsets`): after a broker restart members are unknown and
  rejoin, as clients do on UNKNOWN_MEMBER_ID.
* Expiry is driven by one timer task that sleeps until the earliest deadline
  of any group and is woken when a deadline moves earlier; no polling.  Time
  is the broker's :class:`~hmb.clock.Clock` (trio's clock plus the skew a
  test adds with ``advance``, which wakes the timer): the real clock in the
  broker, a MockClock in tests, where timeouts then pass in no real time.
* The coordinator knows nothing of the wire: handlers translate requests to
  these calls and the results to responses.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import assert_never

import trio

from hmb.clock import Clock
from hmb.groups.states import Action, GroupEvent, GroupState, transition
from hmb.groups.subscription import CONSUMER_PROTOCOL_TYPE, SubscriptionFormatError, subscribed_topics
from kproto import ErrorCode

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JoinResult:
    """The answer to one JoinGroup: the generation joined, and for the leader every member."""

    error: int
    generation_id: int = -1
    protocol_name: str = ""
    leader: str = ""
    member_id: str = ""
    members: tuple[tuple[str, bytes], ...] = ()  # (member id, metadata), for the leader only
    instance_ids: tuple[str | None, ...] = ()  # each listed member's group instance id
    #: a restarted static leader of a Stable group: it must not assign again (KIP-814)
    skip_assignment: bool = False


@dataclass
class _JoinWaiter:
    """One JoinGroup request waiting for its rebalance (a member may resend its join)."""

    done: trio.Event = field(default_factory=trio.Event)
    result: JoinResult | None = None


@dataclass
class Member:
    """One member of a consumer group: who it is, its timeouts, protocols and assignment."""

    member_id: str
    client_id: str
    client_host: str
    session_timeout_s: float
    rebalance_timeout_s: float
    protocols: list[tuple[str, bytes]]
    group_instance_id: str | None = None
    assignment: bytes = b""
    last_seen: float = 0.0
    join_waiters: list[_JoinWaiter] = field(default_factory=list)
    sync_waiters: int = 0

    @property
    def awaiting_join(self) -> bool:
        return bool(self.join_waiters)

    def keep_alive(self) -> bool:
        """A member with a request in flight cannot be expected to heartbeat."""
        return bool(self.join_waiters) or self.sync_waiters > 0

    def session_deadline(self) -> float:
        return self.last_seen + self.session_timeout_s

    def protocol_metadata(self, name: str) -> bytes:
        for proto, meta in self.protocols:
            if proto == name:
                return meta
        return b""

    def finish_join(self, result: JoinResult) -> None:
        for waiter in self.join_waiters:
            waiter.result = result
            waiter.done.set()
        self.join_waiters.clear()


@dataclass
class Group:
    """One consumer group: its state in the rebalance protocol, generation, leader and members."""

    group_id: str
    state: GroupState = GroupState.EMPTY
    generation_id: int = 0
    protocol_type: str = ""
    protocol_name: str = ""
    leader: str = ""
    members: dict[str, Member] = field(default_factory=dict)
    pending_ids: dict[str, float] = field(default_factory=dict)  # KIP-394 ids handed out, with expiry
    static_members: dict[str, str] = field(default_factory=dict)  # group instance id -> member id
    rebalance_deadline: float | None = None
    delay_until: float | None = None  # group.initial.rebalance.delay.ms of a new group
    #: set when the current CompletingRebalance ends (leader synced, or aborted)
    sync_done: trio.Event = field(default_factory=trio.Event)

    def all_joined(self) -> bool:
        return bool(self.members) and all(m.awaiting_join for m in self.members.values())

    def fenced(self, member_id: str, group_instance_id: str | None) -> bool:
        """The instance id is registered to another member: ``member_id`` was replaced (KIP-345)."""
        if group_instance_id is None:
            return False
        registered = self.static_members.get(group_instance_id)
        return registered is not None and registered != member_id


class GroupCoordinator:
    """Every group of the broker.  Run :meth:`run` in a nursery for session expiry."""

    def __init__(
        self,
        *,
        min_session_timeout_ms: int = 6000,
        max_session_timeout_ms: int = 1_800_000,
        initial_rebalance_delay_ms: int = 0,
        clock: Clock | None = None,
    ) -> None:
        self.groups: dict[str, Group] = {}
        self.clock = clock or Clock()
        self.clock.on_advance(self._deadlines_changed)
        self.min_session_timeout_s = min_session_timeout_ms / 1000
        self.max_session_timeout_s = max_session_timeout_ms / 1000
        self.initial_rebalance_delay_s = initial_rebalance_delay_ms / 1000
        self._timer_changed = trio.Event()

    # ---------------------------------------------------------------- timers

    def _deadlines_changed(self) -> None:
        self._timer_changed.set()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Expire sessions, pending ids and rebalance timeouts; sleeps until the next deadline."""
        task_status.started()
        while True:
            now = self.clock.monotonic()
            self.expire(now)
            nxt = self._next_deadline()
            self._timer_changed = trio.Event()
            with trio.move_on_at(self.clock.trio_deadline(nxt if nxt is not None else now + 3600)):
                await self._timer_changed.wait()

    def _next_deadline(self) -> float | None:
        deadlines: list[float] = []
        for g in self.groups.values():
            if g.rebalance_deadline is not None:
                deadlines.append(g.rebalance_deadline)
            if g.delay_until is not None:
                deadlines.append(g.delay_until)
            deadlines += [m.session_deadline() for m in g.members.values() if not m.keep_alive()]
            deadlines += g.pending_ids.values()
        return min(deadlines, default=None)

    def expire(self, now: float) -> None:
        """Drop members whose session ran out; finish rebalances whose time is up."""
        for g in list(self.groups.values()):
            for mid, until in list(g.pending_ids.items()):
                if until <= now:
                    del g.pending_ids[mid]
            if g.delay_until is not None and now >= g.delay_until:
                g.delay_until = None
                self._maybe_complete(g)
            if (
                g.state == GroupState.PREPARING_REBALANCE
                and g.rebalance_deadline is not None
                and now >= g.rebalance_deadline
            ):
                g.delay_until = None
                laggards = [m.member_id for m in g.members.values() if not m.awaiting_join]
                for mid in laggards:
                    log.info("group %s: %s did not rejoin in time, removed", g.group_id, mid)
                    self._remove(g, mid)
                self._maybe_complete(g)
            expired = [
                m.member_id for m in g.members.values() if not m.keep_alive() and now >= m.session_deadline()
            ]
            for mid in expired:
                log.info("group %s: session of %s expired", g.group_id, mid)
                self._remove(g, mid)

    # ---------------------------------------------------------------- the state machine

    def _fire(self, g: Group, event: GroupEvent) -> None:
        """Take the transition the table lists for ``event`` in ``g``'s state, then its action."""
        source = g.state
        target, action = transition(g.group_id, source, event)
        g.state = target
        if source is GroupState.COMPLETING_REBALANCE:
            g.sync_done.set()  # SyncGroups waiting on the generation that just ended answer now
        self._act(g, action)
        self._deadlines_changed()

    def _act(self, g: Group, action: Action) -> None:
        now = self.clock.monotonic()
        match action:
            case Action.START_REBALANCE | Action.START_FIRST_REBALANCE:
                timeout = max((m.rebalance_timeout_s for m in g.members.values()), default=0.0)
                g.rebalance_deadline = now + timeout
                if action is Action.START_FIRST_REBALANCE and self.initial_rebalance_delay_s > 0:
                    g.delay_until = min(now + self.initial_rebalance_delay_s, g.rebalance_deadline)
                log.info("group %s: preparing rebalance (generation %d)", g.group_id, g.generation_id)
            case Action.CONTINUE_REBALANCE:
                pass
            case Action.START_GENERATION:
                g.generation_id += 1
                g.protocol_name = self._select_protocol(g)
                if g.leader not in g.members:
                    g.leader = next(iter(g.members))
                g.rebalance_deadline = None
                g.sync_done = trio.Event()
                for m in g.members.values():
                    m.assignment = b""
                    m.last_seen = now
                    m.finish_join(self._current_generation(g, m.member_id))
                log.info(
                    "group %s: generation %d with %d member(s), protocol %s, leader %s",
                    g.group_id,
                    g.generation_id,
                    len(g.members),
                    g.protocol_name,
                    g.leader,
                )
            case Action.PUBLISH_ASSIGNMENTS:
                log.info("group %s: generation %d is stable", g.group_id, g.generation_id)
            case Action.RESET:
                g.generation_id += 1
                g.leader = ""
                g.protocol_name = ""
                g.rebalance_deadline = None
                g.delay_until = None
            case _:
                assert_never(action)

    def _remove(self, g: Group, member_id: str) -> None:
        m = g.members.pop(member_id, None)
        if m is None:
            return
        if m.group_instance_id is not None and g.static_members.get(m.group_instance_id) == member_id:
            del g.static_members[m.group_instance_id]
        m.finish_join(JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id=member_id))
        if not g.members:
            self._fire(g, GroupEvent.LAST_MEMBER_GONE)
            return
        self._fire(g, GroupEvent.MEMBER_GONE)
        self._maybe_complete(g)

    def _maybe_complete(self, g: Group) -> None:
        """ALL_JOINED, when it has happened: every member waits in JoinGroup, no initial delay left."""
        if g.state == GroupState.PREPARING_REBALANCE and g.all_joined() and g.delay_until is None:
            self._fire(g, GroupEvent.ALL_JOINED)

    def _select_protocol(self, g: Group) -> str:
        """The protocol every member supports, by votes of each member's first choice (Kafka's rule)."""
        members = list(g.members.values())
        common = set.intersection(*({p for p, _ in m.protocols} for m in members))
        votes: dict[str, int] = {}
        for m in members:
            first = next(p for p, _ in m.protocols if p in common)
            votes[first] = votes.get(first, 0) + 1
        return max(sorted(votes), key=lambda p: votes[p])

    # ---------------------------------------------------------------- requests

    async def join(
        self,
        group_id: str,
        member_id: str,
        protocol_type: str,
        protocols: Sequence[tuple[str, bytes]],
        *,
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
        client_id: str = "",
        client_host: str = "",
        group_instance_id: str | None = None,
        require_known_member_id: bool = False,
    ) -> JoinResult:
        """JoinGroup: returns when the rebalance this join takes part in completes."""
        if not group_id:
            return JoinResult(ErrorCode.INVALID_GROUP_ID, member_id=member_id)
        session_s = session_timeout_ms / 1000
        if not self.min_session_timeout_s <= session_s <= self.max_session_timeout_s:
            return JoinResult(ErrorCode.INVALID_SESSION_TIMEOUT, member_id=member_id)
        if not protocol_type or not protocols:
            return JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id=member_id)
        g = self.groups.get(group_id)
        if member_id and g is not None and g.fenced(member_id, group_instance_id):
            return JoinResult(ErrorCode.FENCED_INSTANCE_ID, member_id=member_id)
        if member_id and (g is None or (member_id not in g.members and member_id not in g.pending_ids)):
            return JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id=member_id)
        if g is not None and g.members:
            if protocol_type != g.protocol_type or not self._compatible(g, protocols, member_id):
                return JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id=member_id)
        if g is None:
            g = self.groups[group_id] = Group(group_id)
        now = self.clock.monotonic()
        replaced = False
        if not member_id and group_instance_id is not None and group_instance_id in g.static_members:
            member_id = self._replace_static_member(g, group_instance_id, client_id)
            static = g.members[member_id]
            same_protocols = static.protocols == list(protocols)
            static.session_timeout_s, static.rebalance_timeout_s = session_s, rebalance_timeout_ms / 1000
            static.client_id, static.client_host, static.last_seen = client_id, client_host, now
            if g.state == GroupState.STABLE and same_protocols:
                # a restarted static member: its old assignment, nobody else rebalances
                return self._current_generation(g, member_id, static_rejoin=True)
            replaced = True  # otherwise it joins a rebalance: the leader must assign its new id
        elif not member_id:
            member_id = f"{client_id or 'member'}-{uuid.uuid4()}"
            if require_known_member_id and group_instance_id is None:
                g.pending_ids[member_id] = now + session_s
                self._deadlines_changed()
                return JoinResult(ErrorCode.MEMBER_ID_REQUIRED, member_id=member_id)
        g.pending_ids.pop(member_id, None)
        m = g.members.get(member_id)
        if m is None:
            m = g.members[member_id] = Member(
                member_id,
                client_id,
                client_host,
                session_s,
                rebalance_timeout_ms / 1000,
                list(protocols),
                group_instance_id,
                last_seen=now,
            )
            if len(g.members) == 1:
                g.protocol_type = protocol_type
            if group_instance_id is not None:
                g.static_members[group_instance_id] = member_id
            if g.delay_until is not None:  # Kafka: each newcomer extends the initial delay
                cap = g.rebalance_deadline if g.rebalance_deadline is not None else now
                g.delay_until = min(now + self.initial_rebalance_delay_s, cap)
        else:
            unchanged = m.protocols == list(protocols)
            if (
                not replaced
                and unchanged
                and (
                    g.state == GroupState.COMPLETING_REBALANCE
                    or (g.state == GroupState.STABLE and member_id != g.leader)
                )
            ):
                # a resent join, or a follower of a stable group with nothing new: the current generation
                m.last_seen = now
                return self._current_generation(g, member_id)
            m.protocols = list(protocols)
            m.session_timeout_s = session_s
            m.rebalance_timeout_s = rebalance_timeout_ms / 1000
            m.client_id, m.client_host = client_id, client_host
        m.last_seen = now
        waiter = _JoinWaiter()
        m.join_waiters.append(waiter)
        self._fire(g, GroupEvent.JOIN)
        self._maybe_complete(g)
        try:
            await waiter.done.wait()
        finally:
            if waiter in m.join_waiters:  # abandoned before the rebalance completed
                m.join_waiters.remove(waiter)
                m.last_seen = self.clock.monotonic()  # alive until now; the session clock runs again
                self._deadlines_changed()
        return waiter.result or JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id=member_id)

    def _replace_static_member(self, g: Group, group_instance_id: str, client_id: str) -> str:
        """Give the registered member of ``group_instance_id`` a new member id; fence the old one."""
        old_id = g.static_members[group_instance_id]
        new_id = f"{client_id or 'member'}-{uuid.uuid4()}"
        m = g.members.pop(old_id)
        m.finish_join(JoinResult(ErrorCode.FENCED_INSTANCE_ID, member_id=old_id))
        m.member_id = new_id
        g.members[new_id] = m
        g.static_members[group_instance_id] = new_id
        if g.leader == old_id:
            g.leader = new_id
        log.info(
            "group %s: static member %s rejoined as %s (was %s)",
            g.group_id,
            group_instance_id,
            new_id,
            old_id,
        )
        return new_id

    def _current_generation(self, g: Group, member_id: str, *, static_rejoin: bool = False) -> JoinResult:
        members: tuple[tuple[str, bytes], ...] = ()
        instance_ids: tuple[str | None, ...] = ()
        if member_id == g.leader:
            members = tuple((m.member_id, m.protocol_metadata(g.protocol_name)) for m in g.members.values())
            instance_ids = tuple(m.group_instance_id for m in g.members.values())
        return JoinResult(
            ErrorCode.NONE,
            g.generation_id,
            g.protocol_name,
            g.leader,
            member_id,
            members,
            instance_ids,
            skip_assignment=static_rejoin and member_id == g.leader,
        )

    def _compatible(self, g: Group, protocols: Sequence[tuple[str, bytes]], member_id: str) -> bool:
        others = [m for mid, m in g.members.items() if mid != member_id]
        if not others:
            return True
        common = set.intersection(*({p for p, _ in m.protocols} for m in others))
        return bool(common & {p for p, _ in protocols})

    async def sync(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        assignments: Sequence[tuple[str, bytes]],
        group_instance_id: str | None = None,
    ) -> tuple[int, bytes]:
        """SyncGroup: the leader hands out assignments; everyone waits for theirs."""
        g = self.groups.get(group_id)
        if g is not None and g.fenced(member_id, group_instance_id):
            return ErrorCode.FENCED_INSTANCE_ID, b""
        if g is None or member_id not in g.members:
            return ErrorCode.UNKNOWN_MEMBER_ID, b""
        if generation_id != g.generation_id:
            return ErrorCode.ILLEGAL_GENERATION, b""
        m = g.members[member_id]
        m.last_seen = self.clock.monotonic()
        if g.state == GroupState.PREPARING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS, b""
        if g.state == GroupState.STABLE:
            return ErrorCode.NONE, m.assignment
        if member_id == g.leader:
            given = dict(assignments)
            for mid, member in g.members.items():
                member.assignment = given.get(mid, b"")
            self._fire(g, GroupEvent.LEADER_SYNCED)
            return ErrorCode.NONE, m.assignment
        done = g.sync_done
        m.sync_waiters += 1
        try:
            await done.wait()
        finally:
            m.sync_waiters -= 1
            m.last_seen = self.clock.monotonic()
            self._deadlines_changed()
        if g.members.get(member_id) is not m:
            return ErrorCode.UNKNOWN_MEMBER_ID, b""
        if g.state != GroupState.STABLE or g.generation_id != generation_id:
            return ErrorCode.REBALANCE_IN_PROGRESS, b""
        return ErrorCode.NONE, m.assignment

    def heartbeat(
        self, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None = None
    ) -> int:
        g = self.groups.get(group_id)
        if g is not None and g.fenced(member_id, group_instance_id):
            return ErrorCode.FENCED_INSTANCE_ID
        if g is None or member_id not in g.members:
            return ErrorCode.UNKNOWN_MEMBER_ID
        g.members[member_id].last_seen = self.clock.monotonic()
        if generation_id != g.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        if g.state == GroupState.PREPARING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    def leave(self, group_id: str, member_id: str, group_instance_id: str | None = None) -> int:
        """LeaveGroup of one member; v3's members without an id are found by instance id."""
        g = self.groups.get(group_id)
        if g is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if not member_id and group_instance_id is not None:
            member_id = g.static_members.get(group_instance_id, "")
        elif g.fenced(member_id, group_instance_id):
            return ErrorCode.FENCED_INSTANCE_ID
        if member_id not in g.members:
            return ErrorCode.UNKNOWN_MEMBER_ID
        log.info("group %s: %s left", g.group_id, member_id)
        self._remove(g, member_id)
        return ErrorCode.NONE

    def check_commit(
        self, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None = None
    ) -> int:
        """Whether an OffsetCommit with this generation/member may commit (Kafka 3's rules).

        Generation -1 with an empty member id is a "simple" commit by a
        consumer that assigns partitions itself: allowed while the group has
        no members.  Members of the current generation may commit while a
        rebalance is being prepared (consumers commit before they rejoin),
        not between JoinGroup and SyncGroup.
        """
        g = self.groups.get(group_id)
        if g is None:
            return ErrorCode.NONE if generation_id < 0 else ErrorCode.ILLEGAL_GENERATION
        if g.fenced(member_id, group_instance_id):
            return ErrorCode.FENCED_INSTANCE_ID
        if generation_id < 0 and not g.members:
            return ErrorCode.NONE
        if generation_id >= 0 or member_id:
            m = g.members.get(member_id)
            if m is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if generation_id != g.generation_id:
                return ErrorCode.ILLEGAL_GENERATION
            if g.state == GroupState.COMPLETING_REBALANCE:
                return ErrorCode.REBALANCE_IN_PROGRESS
            m.last_seen = self.clock.monotonic()
            return ErrorCode.NONE
        if g.members:
            return ErrorCode.UNKNOWN_MEMBER_ID  # a simple commit into an active group would undo its work
        return ErrorCode.NONE

    def delete(self, group_id: str) -> int:
        """DeleteGroups' membership side: forget an Empty group (NON_EMPTY_GROUP while it has
        members; NONE for a group the coordinator does not know, whose offsets may still exist)."""
        g = self.groups.get(group_id)
        if g is None:
            return ErrorCode.NONE
        if g.members:
            return ErrorCode.NON_EMPTY_GROUP
        del self.groups[group_id]
        self._deadlines_changed()
        log.info("group %s deleted", group_id)
        return ErrorCode.NONE

    def subscribed_topics(self, group_id: str) -> set[str]:
        """The topics the members of a ``consumer`` group subscribe to (OffsetDelete's guard).

        Read from each member's metadata for the group's protocol (or, before a
        protocol is chosen, for any protocol it offered); unreadable metadata
        subscribes to nothing.
        """
        g = self.groups.get(group_id)
        if g is None or g.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return set()
        topics: set[str] = set()
        for m in g.members.values():
            offered = [meta for name, meta in m.protocols if not g.protocol_name or name == g.protocol_name]
            for meta in offered:
                try:
                    topics.update(subscribed_topics(meta))
                except SubscriptionFormatError:
                    continue
        return topics

    def describe(self, group_id: str) -> Group | None:
        return self.groups.get(group_id)

    def listing(self) -> list[tuple[str, str]]:
        """(group id, protocol type) of every group with members or history."""
        return [(g.group_id, g.protocol_type) for g in self.groups.values()]
