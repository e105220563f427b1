"""Consumer-group membership: join, sync, heartbeat, leave (Kafka's eager protocol).

:class:`GroupMember` runs in the consumer's I/O thread, one task per
subscribed consumer, and drives what Kafka's ``AbstractCoordinator`` does:

1. find the coordinator (``Cluster.coordinator``);
2. give up the current assignment (:meth:`GroupOwner.revoke`: the owner
   commits consumed positions and runs the user's listener) *before*
   joining -- the eager protocol, so no partition is ever consumed by two
   members at once and the new owner resumes exactly where we stopped;
3. JoinGroup with one protocol per configured assignor (preference order);
   from v4 a first join is answered MEMBER_ID_REQUIRED with an id to join
   with, and we join again at once with it;
4. the leader decodes every member's subscription, reads the partition
   counts and runs the chosen assignor; SyncGroup hands out the result;
5. heartbeat every ``heartbeat_interval_ms`` until the coordinator answers
   REBALANCE_IN_PROGRESS (someone joined or left), ILLEGAL_GENERATION or
   UNKNOWN_MEMBER_ID (we were dropped: partitions *lost*, not committed),
   the subscription or a subscribed topic's partition count changes, or
   ``poll()`` was not called for ``max_poll_interval_ms`` (we leave, as
   Java does, and rejoin at the next poll);
6. LeaveGroup on close, so the group rebalances at once rather than after
   ``session_timeout_ms``.

Every request's version is the highest both sides speak
(``BrokerConnection.pick`` over the client's table, ``CLIENT_VERSIONS``):
JoinGroup 0-9, SyncGroup 0-5, Heartbeat 0-4, LeaveGroup 0-5; LeaveGroup v5
tells the broker why (KIP-800), and a JoinGroup v9 answer that says
``skip_assignment`` is not assigned again.  Static membership
(``group_instance_id``) and the cooperative protocol are not implemented.
Settings and defaults are kafka-python's / Kafka 3's (the consumer's config).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from enum import Enum
from typing import Any, NamedTuple, Protocol

import trio

from hmb_client.assignors import (
    LATEST_VERSION,
    PROTOCOL_TYPE,
    Assignment,
    AssignorSpec,
    ConsumerProtocolError,
    PartitionAssignor,
    Subscription,
    assignors_for,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from hmb_client.cluster import Cluster
from hmb_client.connection import BrokerConnection
from hmb_client.consumer.coordinator import CoordinatorLink
from hmb_client.errors import (
    KafkaError,
    UnsupportedVersionError,
    error_for,
)
from hmb_client.structs import TopicPartition
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)

# Errors after which only a change of configuration helps: they surface from poll().
_FATAL_CODES = frozenset(
    {
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
        ErrorCode.INVALID_SESSION_TIMEOUT,
        ErrorCode.INVALID_GROUP_ID,
        ErrorCode.GROUP_AUTHORIZATION_FAILED,
        ErrorCode.GROUP_MAX_SIZE_REACHED,
        ErrorCode.FENCED_INSTANCE_ID,
    }
)


class GroupSettings(Protocol):
    """The settings a member reads (:class:`~hmb_client.consumer.config.ConsumerConfig` has them)."""

    @property
    def heartbeat_interval_ms(self) -> int: ...

    @property
    def session_timeout_ms(self) -> int: ...

    @property
    def max_poll_interval_ms(self) -> int:
        """Also the rebalance timeout sent in JoinGroup v1+."""

    @property
    def partition_assignment_strategy(self) -> Sequence[AssignorSpec]: ...

    @property
    def metadata_max_age_ms(self) -> int:
        """How often subscribed topics are checked for new partitions."""


class Generation(NamedTuple):
    """What commits must carry while the group owns our partitions."""

    generation_id: int
    member_id: str
    protocol: str


class ConsumerRebalanceListener:
    """Called from ``poll()`` (in the thread calling it) around each rebalance.

    Subclass it or pass any object with some of these methods.  In
    ``on_partitions_revoked`` the partitions are still assigned: ``commit()``
    and ``position()`` work; with ``enable_auto_commit`` their positions were
    committed just before.  In ``on_partitions_assigned`` the new partitions
    are assigned: ``seek()`` there decides where consumption starts.
    ``on_partitions_lost`` is called instead of ``on_partitions_revoked``
    when the group already gave the partitions to others (we were dropped):
    nothing was committed; by default it calls ``on_partitions_revoked``.
    """

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        """The partitions are about to be given up."""

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        """The partitions are now ours."""

    def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        """The partitions were already reassigned; by default the same as revoked."""
        self.on_partitions_revoked(lost)


class GroupOwner(Protocol):
    """What the group needs from its consumer (:class:`~hmb_client.consumer.membership.Membership`)."""

    def subscribed_topics(self) -> list[str]: ...

    def owned_partitions(self) -> list[TopicPartition]: ...

    async def revoke(self, lost: bool) -> None:
        """Give up every assigned partition (committing consumed positions unless ``lost``)."""

    def assigned(self, partitions: list[TopicPartition]) -> None:
        """Start consuming the new generation's ``partitions``."""

    def group_failed(self, exc: BaseException) -> None:
        """A fatal group error, for ``poll()`` to raise."""

    def last_poll(self) -> float:
        """``time.monotonic()`` of the last ``poll()`` (or subscribe)."""


class _State(Enum):
    UNJOINED = "unjoined"
    REBALANCING = "rebalancing"
    STABLE = "stable"


class _Rejoin(Exception):  # noqa: N818 - control flow, not an error
    """Start the join over (after an error that a new join fixes)."""


class GroupMember:
    """One consumer's membership of ``group_id``; :meth:`run` is its task in the I/O thread."""

    def __init__(
        self,
        group_id: str,
        settings: GroupSettings,
        cluster: Cluster,
        owner: GroupOwner,
        *,
        request_timeout_s: float,
        retry_backoff_s: float,
    ) -> None:
        self.group_id = group_id
        self.settings = settings
        self.cluster = cluster
        self.owner = owner
        self.request_timeout_s = request_timeout_s
        self.retry_backoff_s = retry_backoff_s
        self.assignors: list[PartitionAssignor] = assignors_for(settings.partition_assignment_strategy)
        self.member_id = ""
        self.generation_id = -1
        self.protocol = ""
        self.leader_id = ""
        self.state = _State.UNJOINED
        self.joins = 0  # completed rebalances, for statistics() and tests
        self._link = CoordinatorLink(cluster, group_id)
        self._rejoin_needed = True
        self._lost = False  # the current assignment is already someone else's
        self._wake = trio.Event()
        self._poll_seen: trio.Event | None = None  # set while waiting for poll() after a poll timeout
        self._partition_counts: dict[str, int] = {}  # of the topics we watch, as last assigned
        self._metadata_checked_at = 0.0

    # ---------------------------------------------------------------- called by the consumer

    def generation(self) -> Generation | None:
        """The generation commits must name; None while (re)joining."""
        if self.state is not _State.STABLE:
            return None
        return Generation(self.generation_id, self.member_id, self.protocol)

    def request_rejoin(self) -> None:
        """Rejoin soon (the subscription changed)."""
        self._rejoin_needed = True
        self._wake.set()

    @property
    def waiting_for_poll(self) -> bool:
        return self._poll_seen is not None

    def poll_seen(self) -> None:
        """``poll()`` was called after we left for exceeding ``max_poll_interval_ms``."""
        if self._poll_seen is not None:
            self._poll_seen.set()

    def statistics(self) -> dict[str, Any]:
        return {
            "state": self.state.value,
            "member_id": self.member_id,
            "generation_id": self.generation_id,
            "protocol": self.protocol,
            "leader": self.leader_id == self.member_id,
            "joins": self.joins,
        }

    # ---------------------------------------------------------------- the task

    async def run(self) -> None:
        """Join, stay, rejoin: until cancelled (the consumer unsubscribes or closes)."""
        while True:
            if self._rejoin_needed:
                try:
                    await self._rebalance()
                except KafkaError as exc:
                    if exc.code in _FATAL_CODES or isinstance(exc, UnsupportedVersionError):
                        log.error("group %s: %s", self.group_id, exc)
                        self.owner.group_failed(exc)
                        return
                    log.info("group %s: joining failed (%s); retrying", self.group_id, exc)
                    await trio.sleep(self.retry_backoff_s)  # retry backoff
                continue
            await self._stay()

    async def _coordinator(self) -> BrokerConnection:
        return await self._link.connection()

    async def _request(self, api_key: int, body: dict[str, Any], timeout_s: float | None = None) -> Any:
        """The response to a request to the coordinator at the best common version."""
        version = await self._link.version(api_key)
        return await self._link.request(api_key, version, body, timeout_s)

    def _check(self, code: int, what: str) -> None:
        """Raise the error of ``code``, forgetting the coordinator when it moved."""
        self._link.check(code, what)

    # ---------------------------------------------------------------- joining

    async def _rebalance(self) -> None:
        """Revoke, JoinGroup (again with the assigned id if asked), SyncGroup, assign."""
        await self._coordinator()
        if self.owner.owned_partitions() or self._lost:
            await self._revoke_keeping_alive()
        self._rejoin_needed = False
        self.state = _State.REBALANCING
        try:
            response = await self._join()
            self.generation_id = response.generation_id
            self.member_id = response.member_id
            self.protocol = response.protocol_name
            self.leader_id = response.leader
            assignments = []
            # v9+: a static leader back in a stable group keeps the assignment it made (KIP-814)
            if response.leader == response.member_id and not response.get("skip_assignment"):
                assignments = await self._lead(response.protocol_name, response.members)
            mine = await self._sync(assignments, response.protocol_name)
        except BaseException:
            self.state = _State.UNJOINED
            self._rejoin_needed = True
            raise
        try:
            assignment = decode_assignment(mine)
        except ConsumerProtocolError as exc:
            log.error("group %s: unreadable assignment (%s); rejoining", self.group_id, exc)
            self.state = _State.UNJOINED
            self._rejoin_needed = True
            await trio.sleep(self.retry_backoff_s)  # not a tight loop if the leader keeps at it
            return
        for a in self.assignors:
            if a.name == self.protocol:
                a.on_assignment(assignment, self.generation_id)
        topics = set(self.owner.subscribed_topics())
        if stray := {tp for tp in assignment.partitions if tp.topic not in topics}:
            log.warning("group %s: assigned partitions of topics not subscribed to: %s", self.group_id, stray)
        if not self.leader_id == self.member_id:
            await self._note_partition_counts(topics)
        self.state = _State.STABLE
        self._lost = False
        self.joins += 1
        log.info(
            "group %s: generation %d, member %s%s, assigned %s",
            self.group_id,
            self.generation_id,
            self.member_id,
            " (leader)" if self.leader_id == self.member_id else "",
            sorted(assignment.partitions),
        )
        self.owner.assigned(assignment.partitions)

    async def _revoke_keeping_alive(self) -> None:
        """Let the owner give up its partitions while heartbeats keep our session.

        Revoking may wait for the user's listener in ``poll()``; Kafka drops a
        member that is silent for ``session_timeout_ms`` even mid-rebalance.
        """
        async with trio.open_nursery() as nursery:
            if not self._lost and self.generation_id >= 0:
                nursery.start_soon(self._keep_alive)
            await self.owner.revoke(self._lost)
            nursery.cancel_scope.cancel()

    async def _keep_alive(self) -> None:
        while True:
            await trio.sleep(self.settings.heartbeat_interval_ms / 1000)  # the heartbeat timer
            try:
                await self._heartbeat()
            except (KafkaError, _Rejoin) as exc:
                log.debug("group %s: heartbeat while revoking: %s", self.group_id, exc)

    async def _join(self) -> Any:
        cfg = self.settings
        topics = sorted(set(self.owner.subscribed_topics()))
        protocols = [
            {"name": a.name, "metadata": encode_subscription(a.subscription(topics))} for a in self.assignors
        ]
        rebalance_timeout_s = cfg.max_poll_interval_ms / 1000
        while True:
            body = {
                "group_id": self.group_id,
                "session_timeout_ms": cfg.session_timeout_ms,
                "rebalance_timeout_ms": cfg.max_poll_interval_ms,
                "member_id": self.member_id,
                "group_instance_id": None,
                "protocol_type": PROTOCOL_TYPE,
                "protocols": protocols,
                "reason": None,  # v8+: Kafka logs why a member (re)joins; nothing to add here
            }
            # The coordinator answers once every member has joined: up to the rebalance
            # timeout (the session timeout before v1), as Java's client allows for.
            wait_s = max(self.request_timeout_s, max(rebalance_timeout_s, cfg.session_timeout_ms / 1000) + 5)
            started = time.monotonic()
            response = await self._request(ApiKey.JOIN_GROUP, body, timeout_s=wait_s)
            code = response.error_code
            log.debug(
                "group %s: JoinGroup answered %s after %.1fs",
                self.group_id,
                ErrorCode.of(code).name,
                time.monotonic() - started,
            )
            if code == ErrorCode.MEMBER_ID_REQUIRED:  # v4+: join again with the id we were given
                self.member_id = response.member_id
                continue
            if code == ErrorCode.UNKNOWN_MEMBER_ID:
                self.member_id = ""
                self.generation_id = -1
            elif code == ErrorCode.REBALANCE_IN_PROGRESS:
                continue
            self._check(code, "joining")
            return response

    async def _lead(self, protocol: str, members: list[Any]) -> list[dict[str, Any]]:
        """The leader's part: everyone's subscription -> the chosen assignor's assignment."""
        assignor = next((a for a in self.assignors if a.name == protocol), None)
        if assignor is None:
            unknown = error_for(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
            raise unknown(f"the group chose assignor {protocol!r}, which this member does not have")
        subscriptions: dict[str, Subscription] = {}
        for m in members:
            try:
                sub = decode_subscription(m.metadata)
            except ConsumerProtocolError as exc:
                log.warning(
                    "group %s: member %s sent an unreadable subscription (%s): assigning it nothing",
                    self.group_id,
                    m.member_id,
                    exc,
                )
                sub = Subscription([])
            sub.group_instance_id = getattr(m, "group_instance_id", None)
            subscriptions[m.member_id] = sub
        topics = {t for s in subscriptions.values() for t in s.topics}
        counts = await self._note_partition_counts(topics)
        result = assignor.assign(counts, subscriptions)
        log.debug("group %s: %s assignment of %s: %s", self.group_id, protocol, counts, result)
        return [
            {
                "member_id": member,
                "assignment": encode_assignment(
                    Assignment(
                        result.get(member, []), None, min(subscriptions[member].version, LATEST_VERSION)
                    )
                ),
            }
            for member in subscriptions
        ]

    async def _note_partition_counts(self, topics: set[str]) -> dict[str, int]:
        """Partition counts of ``topics`` (fresh from a broker), remembered to notice changes."""
        counts: dict[str, int] = {}
        if topics:
            try:
                await self.cluster.refresh(sorted(topics), deadline_s=self.request_timeout_s)
            except KafkaError as exc:
                log.warning("group %s: metadata of %s not refreshed (%s)", self.group_id, sorted(topics), exc)
        for topic in topics:
            info = self.cluster.topics.get(topic)
            counts[topic] = info.partitions if info is not None and not info.error else 0
        self._partition_counts = counts
        self._metadata_checked_at = trio.current_time()
        return {t: n for t, n in counts.items() if n > 0}

    async def _sync(self, assignments: list[dict[str, Any]], protocol_name: str | None) -> bytes:
        """SyncGroup; v5+ name the protocol type and the assignor the join chose (KIP-559)."""
        body = {
            "group_id": self.group_id,
            "generation_id": self.generation_id,
            "member_id": self.member_id,
            "group_instance_id": None,
            "protocol_type": PROTOCOL_TYPE,
            "protocol_name": protocol_name,
            "assignments": assignments,
        }
        response = await self._request(ApiKey.SYNC_GROUP, body)
        code = response.error_code
        if code == ErrorCode.UNKNOWN_MEMBER_ID:
            self.member_id = ""
            self.generation_id = -1
        self._check(code, "syncing")
        return bytes(response.assignment or b"")

    # ---------------------------------------------------------------- staying

    async def _stay(self) -> None:
        """Heartbeat until a rejoin is needed; watch the poll interval and the metadata."""
        cfg = self.settings
        interval = cfg.heartbeat_interval_ms / 1000
        session = cfg.session_timeout_ms / 1000
        last_ok = trio.current_time()
        while not self._rejoin_needed:
            with trio.move_on_after(interval):
                await self._wake.wait()
            self._wake = trio.Event()
            if self._rejoin_needed:
                return
            if time.monotonic() - self.owner.last_poll() > cfg.max_poll_interval_ms / 1000:
                await self._left_for_poll_timeout()
                return
            try:
                await self._heartbeat()
                last_ok = trio.current_time()
            except _Rejoin:
                return
            except KafkaError as exc:
                log.info("group %s: heartbeat failed: %s", self.group_id, exc)
                if trio.current_time() - last_ok > session:
                    log.warning(
                        "group %s: no heartbeat answered for %.0fs: the partitions are lost",
                        self.group_id,
                        session,
                    )
                    self._lost = True
                    self.state = _State.UNJOINED
                    self._rejoin_needed = True
                    return
                continue
            await self._check_metadata()

    async def _heartbeat(self) -> None:
        """One Heartbeat; raises _Rejoin when the group moved on without us."""
        body = {
            "group_id": self.group_id,
            "generation_id": self.generation_id,
            "member_id": self.member_id,
            "group_instance_id": None,
        }
        response = await self._request(ApiKey.HEARTBEAT, body)
        code = response.error_code
        if code == ErrorCode.REBALANCE_IN_PROGRESS:
            # Our generation stays valid until we rejoin: the revoke commits with it.
            log.info("group %s is rebalancing: %s rejoining", self.group_id, self.member_id)
            self._rejoin_needed = True
            raise _Rejoin
        if code == ErrorCode.ILLEGAL_GENERATION:
            log.info("group %s: generation %d is over: rejoining", self.group_id, self.generation_id)
            self._lost = True
            self.generation_id = -1
        elif code == ErrorCode.UNKNOWN_MEMBER_ID:
            log.info("group %s: member %s unknown: rejoining as a new member", self.group_id, self.member_id)
            self._lost = True
            self.member_id = ""
            self.generation_id = -1
        else:
            self._check(code, "heartbeat")
            return
        self.state = _State.UNJOINED
        self._rejoin_needed = True
        raise _Rejoin

    async def _check_metadata(self) -> None:
        """Rejoin when a watched topic's partition count changed (cheap: the cache, and a
        Metadata request every ``metadata_max_age_ms``)."""
        watched = set(self._partition_counts) | set(self.owner.subscribed_topics())
        if trio.current_time() - self._metadata_checked_at >= self.settings.metadata_max_age_ms / 1000:
            self._metadata_checked_at = trio.current_time()
            try:
                await self.cluster.refresh(sorted(watched), deadline_s=self.request_timeout_s)
            except KafkaError as exc:
                log.debug("group %s: metadata refresh failed: %s", self.group_id, exc)
        for topic in watched:
            info = self.cluster.topics.get(topic)
            if info is None or info.error:
                continue  # unknown for now (or invalidated after an error): not a change
            if info.partitions != self._partition_counts.get(topic, 0):
                log.info(
                    "group %s: %s has %d partitions now (was %d): rejoining",
                    self.group_id,
                    topic,
                    info.partitions,
                    self._partition_counts.get(topic, 0),
                )
                self.request_rejoin()
                return

    async def _left_for_poll_timeout(self) -> None:
        """Leave (as Java does) when poll() was not called in time; rejoin after the next poll."""
        log.warning(
            "group %s: poll() not called for max_poll_interval_ms=%d: leaving the group",
            self.group_id,
            self.settings.max_poll_interval_ms,
        )
        self._poll_seen = trio.Event()
        await self.leave("poll() not called within max_poll_interval_ms")
        self._lost = True
        await self.owner.revoke(True)
        self._lost = False
        await self._poll_seen.wait()
        self._poll_seen = None
        self._rejoin_needed = True

    # ---------------------------------------------------------------- leaving

    async def leave(self, reason: str = "the consumer is closing") -> None:
        """LeaveGroup (best effort): the group rebalances now instead of after the session timeout."""
        member_id = self.member_id
        self.state = _State.UNJOINED
        self.member_id = ""
        self.generation_id = -1
        if not member_id:
            return
        body = {
            "group_id": self.group_id,
            "member_id": member_id,
            "members": [{"member_id": member_id, "group_instance_id": None, "reason": reason}],
        }
        try:
            with trio.move_on_after(self.request_timeout_s):
                response = await self._request(ApiKey.LEAVE_GROUP, body)
                members = getattr(response, "members", None) or []
                codes = [response.error_code, *(m.error_code for m in members)]
                if any(codes):
                    log.info("group %s: LeaveGroup answered %s", self.group_id, codes)
                else:
                    log.info("group %s: left (%s)", self.group_id, reason)
        except KafkaError as exc:
            log.info("group %s: LeaveGroup failed (%s); the session will time out", self.group_id, exc)
