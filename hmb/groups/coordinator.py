"""Consumer-group membership: Kafka's group coordinator state machine, on trio.

States, as Kafka names them::

    Empty --join--> PreparingRebalance --all known members joined--> CompletingRebalance
      ^                  ^      |                                        | leader's SyncGroup
      |                  |      +-- rebalance timeout: drop laggards ----+
      +-- last leaves ---+-------- join / leave / session expiry ------ Stable

Rules of this module:

* A rebalance completes the moment every known member has (re)joined.  Kafka
  additionally waits ``group.initial.rebalance.delay.ms`` for a new group and
  some Kafka-compatible brokers wait out half the session timeout; clients
  then sit ~23 s per join (PROTOCOL.md, trap 8).  Members that do not rejoin
  are dropped when the longest rebalance timeout of the group expires.
* JoinGroup v4+ without a member id is answered MEMBER_ID_REQUIRED with an
  id to rejoin with (KIP-394); the id is remembered as pending until then.
* Session expiry is driven by one timer task that sleeps until the earliest
  deadline of any group and is woken when deadlines change; no polling.
* The coordinator knows nothing of the wire: handlers translate requests to
  these calls and the results to responses.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

import trio

from kproto import ErrorCode

log = logging.getLogger(__name__)


class GroupState(Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass
class Member:
    member_id: str
    client_id: str
    client_host: str
    session_timeout_s: float
    rebalance_timeout_s: float
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    last_seen: float = 0.0
    joining: trio.Event | None = None  # set when this member's JoinGroup may return
    join_result: JoinResult | None = None
    syncing: trio.Event | None = None

    def protocol_metadata(self, name: str) -> bytes:
        for proto, meta in self.protocols:
            if proto == name:
                return meta
        return b""


@dataclass(frozen=True)
class JoinResult:
    error: int
    generation_id: int = -1
    protocol_name: str = ""
    leader: str = ""
    member_id: str = ""
    members: tuple[tuple[str, bytes], ...] = ()  # (member id, metadata), for the leader only


@dataclass
class Group:
    group_id: str
    state: GroupState = GroupState.EMPTY
    generation_id: int = 0
    protocol_type: str = ""
    protocol_name: str = ""
    leader: str = ""
    members: dict[str, Member] = field(default_factory=dict)
    pending_ids: dict[str, float] = field(default_factory=dict)  # KIP-394 ids handed out, with expiry
    rebalance_deadline: float | None = None

    def all_joined(self) -> bool:
        return bool(self.members) and all(m.joining is not None for m in self.members.values())


class GroupCoordinator:
    """Every group of the broker.  Run :meth:`run` in a nursery for session expiry."""

    def __init__(
        self, *, min_session_timeout_ms: int = 6000, max_session_timeout_ms: int = 1_800_000
    ) -> None:
        self.groups: dict[str, Group] = {}
        self.min_session_timeout_s = min_session_timeout_ms / 1000
        self.max_session_timeout_s = max_session_timeout_ms / 1000
        self._timer_changed = trio.Event()

    # ---------------------------------------------------------------- timers

    def _deadlines_changed(self) -> None:
        self._timer_changed.set()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Expire sessions and rebalance timeouts; sleeps until the next deadline."""
        task_status.started()
        while True:
            now = trio.current_time()
            self.expire(now)
            nxt = self._next_deadline()
            self._timer_changed = trio.Event()
            with trio.move_on_at(nxt if nxt is not None else now + 3600):
                await self._timer_changed.wait()

    def _next_deadline(self) -> float | None:
        deadlines: list[float] = []
        for g in self.groups.values():
            if g.rebalance_deadline is not None:
                deadlines.append(g.rebalance_deadline)
            if g.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
                deadlines += [m.last_seen + m.session_timeout_s for m in g.members.values()]
            deadlines += g.pending_ids.values()
        return min(deadlines, default=None)

    def expire(self, now: float) -> None:
        """Drop members whose session ran out; finish rebalances whose time is up."""
        for g in list(self.groups.values()):
            for mid, until in list(g.pending_ids.items()):
                if until <= now:
                    del g.pending_ids[mid]
            if g.state == GroupState.PREPARING_REBALANCE:
                if g.rebalance_deadline is not None and now >= g.rebalance_deadline:
                    laggards = [m for m in g.members.values() if m.joining is None]
                    for m in laggards:
                        log.info("group %s: %s did not rejoin in time, removed", g.group_id, m.member_id)
                        del g.members[m.member_id]
                    self._maybe_complete(g)
                continue
            if g.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
                expired = [m for m in g.members.values() if now >= m.last_seen + m.session_timeout_s]
                for m in expired:
                    log.info("group %s: session of %s expired", g.group_id, m.member_id)
                    self._remove(g, m.member_id)

    # ---------------------------------------------------------------- transitions

    def _group(self, group_id: str) -> Group:
        g = self.groups.get(group_id)
        if g is None:
            g = self.groups[group_id] = Group(group_id)
        return g

    def _prepare_rebalance(self, g: Group) -> None:
        if g.state == GroupState.COMPLETING_REBALANCE:
            for m in g.members.values():  # syncs of the aborted generation must rejoin
                if m.syncing is not None:
                    m.syncing.set()
        if g.state != GroupState.PREPARING_REBALANCE:
            g.state = GroupState.PREPARING_REBALANCE
            timeout = max((m.rebalance_timeout_s for m in g.members.values()), default=0.0)
            g.rebalance_deadline = trio.current_time() + timeout
            log.info("group %s: preparing rebalance (generation %d)", g.group_id, g.generation_id)
        self._deadlines_changed()

    def _remove(self, g: Group, member_id: str) -> None:
        m = g.members.pop(member_id, None)
        if m is None:
            return
        if m.joining is not None and not m.joining.is_set():
            m.join_result = JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id=member_id)
            m.joining.set()
        if m.syncing is not None:
            m.syncing.set()
        if not g.members:
            g.state = GroupState.EMPTY
            g.generation_id += 1
            g.leader = ""
            g.protocol_name = ""
            g.rebalance_deadline = None
            self._deadlines_changed()
            return
        self._prepare_rebalance(g)
        self._maybe_complete(g)

    def _select_protocol(self, g: Group) -> str:
        """The protocol every member supports, by votes of each member's first choice (Kafka's rule)."""
        members = list(g.members.values())
        common = set.intersection(*({p for p, _ in m.protocols} for m in members))
        votes: dict[str, int] = {}
        for m in members:
            first = next(p for p, _ in m.protocols if p in common)
            votes[first] = votes.get(first, 0) + 1
        return max(sorted(votes), key=lambda p: votes[p])

    def _maybe_complete(self, g: Group) -> None:
        if g.state != GroupState.PREPARING_REBALANCE or not g.all_joined():
            return
        g.generation_id += 1
        g.protocol_name = self._select_protocol(g)
        if g.leader not in g.members:
            g.leader = next(iter(g.members))
        g.state = GroupState.COMPLETING_REBALANCE
        g.rebalance_deadline = None
        now = trio.current_time()
        members = tuple((m.member_id, m.protocol_metadata(g.protocol_name)) for m in g.members.values())
        for m in g.members.values():
            m.assignment = b""
            m.last_seen = now
            m.join_result = JoinResult(
                ErrorCode.NONE,
                g.generation_id,
                g.protocol_name,
                g.leader,
                m.member_id,
                members if m.member_id == g.leader else (),
            )
            assert m.joining is not None
            m.joining.set()
        log.info(
            "group %s: generation %d with %d member(s), protocol %s, leader %s",
            g.group_id,
            g.generation_id,
            len(g.members),
            g.protocol_name,
            g.leader,
        )
        self._deadlines_changed()

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
        require_known_member_id: bool = False,
    ) -> JoinResult:
        """JoinGroup: returns when the rebalance this join takes part in completes."""
        if not group_id:
            return JoinResult(ErrorCode.INVALID_GROUP_ID, member_id=member_id)
        session_s = session_timeout_ms / 1000
        if not self.min_session_timeout_s <= session_s <= self.max_session_timeout_s:
            return JoinResult(ErrorCode.INVALID_SESSION_TIMEOUT, member_id=member_id)
        if not protocols:
            return JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id=member_id)
        g = self._group(group_id)
        if g.state == GroupState.DEAD:
            return JoinResult(ErrorCode.COORDINATOR_NOT_AVAILABLE, member_id=member_id)
        if g.members and (protocol_type != g.protocol_type or not self._compatible(g, protocols, member_id)):
            return JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id=member_id)
        now = trio.current_time()
        if not member_id:
            member_id = f"{client_id or 'member'}-{uuid.uuid4()}"
            if require_known_member_id:
                g.pending_ids[member_id] = now + session_s
                self._deadlines_changed()
                return JoinResult(ErrorCode.MEMBER_ID_REQUIRED, member_id=member_id)
        elif member_id not in g.members and member_id not in g.pending_ids:
            return JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id=member_id)
        g.pending_ids.pop(member_id, None)
        m = g.members.get(member_id)
        if m is None:
            m = g.members[member_id] = Member(
                member_id,
                client_id,
                client_host,
                session_s,
                rebalance_timeout_ms / 1000,
                protocol_type,
                list(protocols),
                last_seen=now,
            )
            if len(g.members) == 1:
                g.protocol_type = protocol_type
        else:
            if g.state == GroupState.STABLE and m.protocols == list(protocols) and member_id != g.leader:
                # nothing changed for a follower of a stable group: answer with the current generation
                return JoinResult(ErrorCode.NONE, g.generation_id, g.protocol_name, g.leader, member_id)
            m.protocols = list(protocols)
            m.session_timeout_s = session_s
            m.rebalance_timeout_s = rebalance_timeout_ms / 1000
        m.last_seen = now
        m.joining = trio.Event()
        m.join_result = None
        self._prepare_rebalance(g)
        self._maybe_complete(g)
        joining = m.joining
        try:
            await joining.wait()
        finally:
            if m.joining is joining:
                m.joining = None
        result = m.join_result or JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id=member_id)
        return result

    def _compatible(self, g: Group, protocols: Sequence[tuple[str, bytes]], member_id: str) -> bool:
        others = [m for mid, m in g.members.items() if mid != member_id]
        if not others:
            return True
        common = set.intersection(*({p for p, _ in m.protocols} for m in others))
        return bool(common & {p for p, _ in protocols})

    async def sync(
        self, group_id: str, generation_id: int, member_id: str, assignments: Sequence[tuple[str, bytes]]
    ) -> tuple[int, bytes]:
        """SyncGroup: the leader hands out assignments; everyone waits for theirs."""
        g = self.groups.get(group_id)
        if g is None or member_id not in g.members:
            return ErrorCode.UNKNOWN_MEMBER_ID, b""
        if generation_id != g.generation_id:
            return ErrorCode.ILLEGAL_GENERATION, b""
        m = g.members[member_id]
        m.last_seen = trio.current_time()
        if g.state == GroupState.PREPARING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS, b""
        if g.state == GroupState.STABLE:
            return ErrorCode.NONE, m.assignment
        if member_id == g.leader:
            given = dict(assignments)
            for mid, member in g.members.items():
                member.assignment = given.get(mid, b"")
            g.state = GroupState.STABLE
            for member in g.members.values():
                if member.syncing is not None:
                    member.syncing.set()
            self._deadlines_changed()
            return ErrorCode.NONE, m.assignment
        m.syncing = trio.Event()
        syncing = m.syncing
        try:
            await syncing.wait()
        finally:
            if m.syncing is syncing:
                m.syncing = None
        if g.members.get(member_id) is not m:
            return ErrorCode.UNKNOWN_MEMBER_ID, b""
        if g.state != GroupState.STABLE or g.generation_id != generation_id:
            return ErrorCode.REBALANCE_IN_PROGRESS, b""
        return ErrorCode.NONE, m.assignment

    def heartbeat(self, group_id: str, generation_id: int, member_id: str) -> int:
        g = self.groups.get(group_id)
        if g is None or member_id not in g.members:
            return ErrorCode.UNKNOWN_MEMBER_ID
        g.members[member_id].last_seen = trio.current_time()
        if g.state == GroupState.PREPARING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        if generation_id != g.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        return ErrorCode.NONE

    def leave(self, group_id: str, member_id: str) -> int:
        g = self.groups.get(group_id)
        if g is None or member_id not in g.members:
            return ErrorCode.UNKNOWN_MEMBER_ID
        log.info("group %s: %s left", g.group_id, member_id)
        self._remove(g, member_id)
        return ErrorCode.NONE

    def check_commit(self, group_id: str, generation_id: int, member_id: str) -> int:
        """Whether an OffsetCommit with this generation/member may commit (Kafka's rules).

        Generation -1 with an empty member id is a "simple" commit by a
        consumer that assigns partitions itself; allowed unless the group
        has members (then it would undo their work).
        """
        g = self.groups.get(group_id)
        if generation_id < 0 and not member_id:
            if g is None or not g.members:
                return ErrorCode.NONE
            return ErrorCode.ILLEGAL_GENERATION
        if g is None or member_id not in g.members:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if g.state == GroupState.PREPARING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        if generation_id != g.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        g.members[member_id].last_seen = trio.current_time()
        return ErrorCode.NONE

    def describe(self, group_id: str) -> Group | None:
        return self.groups.get(group_id)

    def listing(self) -> list[tuple[str, str]]:
        """(group id, protocol type) of every group with members or history."""
        return [(g.group_id, g.protocol_type) for g in self.groups.values() if g.state != GroupState.DEAD]
