"""The consumer's side of group membership: subscription, rebalances, the listener.

:class:`~hmb_client.consumer.group.GroupMember` speaks the group protocol;
:class:`Membership` is the consumer as the member sees it (a
:class:`~hmb_client.consumer.group.GroupOwner`): it gives partitions up before
a rejoin (commit on revoke), installs new assignments, and queues listener
calls for the caller's ``poll()``.

Rules of this module (the partition table's lock guards everything shared):

* Revoking takes the partitions away under the lock in the same step that
  reads their positions, so what is committed is exactly what ``poll()``
  handed out: the next owner starts where we stopped, nothing twice.
* With a listener, the revoke waits until ``poll()`` has run
  ``on_partitions_revoked`` (auto-commit first, as Java's client does) in
  the caller's thread; after ``max_poll_interval_ms`` it stops waiting and
  the partitions count as lost.  ``on_partitions_assigned`` runs in
  ``poll()`` before any record of the new partitions is returned.
* Commits made as a member carry the generation and member id; while the
  group rebalances they are refused (RebalanceInProgressError), as Kafka's
  coordinator would refuse them (:meth:`Membership.commit_generation`).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import trio

from hmb_client.cluster import Cluster
from hmb_client.consumer.config import ConsumerConfig
from hmb_client.consumer.group import Generation, GroupMember
from hmb_client.consumer.offsets import GroupOffsets
from hmb_client.consumer.partitions import PartitionTable
from hmb_client.errors import IllegalStateError, KafkaError, error_for
from hmb_client.runtime import IoThread
from hmb_client.structs import OffsetAndMetadata, TopicPartition
from kproto import ErrorCode

log = logging.getLogger(__name__)


@dataclass
class _Callback:
    """A listener call for the next ``poll()``; ``done`` releases the waiting rebalance."""

    kind: str  # "revoked", "lost" or "assigned"
    partitions: set[TopicPartition]
    done: trio.Event | None = None
    expired: bool = False  # the rebalance stopped waiting: the partitions are gone already


class Membership:
    """The subscription of one consumer and its :class:`GroupMember` while subscribed.

    ``commit`` is the consumer's blocking commit of its positions (caller's
    thread); ``offsets`` commits from the I/O thread; ``spawn`` starts the
    member's task; ``wake_fetcher`` (I/O thread) makes new partitions fetched.
    """

    def __init__(
        self,
        config: ConsumerConfig,
        table: PartitionTable,
        cluster: Cluster,
        io: IoThread,
        offsets: GroupOffsets | None,
        *,
        commit: Callable[[], None],
        spawn: Callable[..., None],
        wake_fetcher: Callable[[], None],
    ) -> None:
        self._config = config
        self._table = table
        self._cluster = cluster
        self._io = io
        self._offsets = offsets
        self._commit = commit
        self._spawn = spawn
        self._wake_fetcher = wake_fetcher
        self.subscription: list[str] | None = None
        self.listener: Any = None
        self.callbacks: deque[_Callback] = deque()  # for the caller's poll()
        self.member: GroupMember | None = None
        self._scope: trio.CancelScope | None = None
        self._done: trio.Event | None = None
        self.polled_at = time.monotonic()

    # ---------------------------------------------------------------- caller's thread

    def polled(self) -> None:
        """Note a poll: the group's ``max_poll_interval_ms`` watch (one clock read, no thread crossing)."""
        self.polled_at = time.monotonic()
        member = self.member
        if member is not None and member.waiting_for_poll:
            self._io.call_soon(member.poll_seen)

    def subscribe(self, topics: list[str], listener: Any) -> None:
        """Start or update the membership (``topics`` sorted, non-empty; lock not held)."""
        with self._table.lock:
            if self.subscription is None and self._table.parts:
                raise IllegalStateError("subscribe() while partitions are assigned: call unsubscribe() first")
            changed = self.subscription != topics
            self.subscription = topics
            self.listener = listener
        self.polled_at = time.monotonic()
        member = self.member
        if member is None:
            self._io.run(self._start)
        elif changed:
            self._io.call_soon(member.request_rejoin)

    def leave(self, commit: bool) -> None:
        """Unsubscribe: stop rebalancing, commit, tell the listener, LeaveGroup."""
        member = self.member
        assert member is not None
        self._io.run(self._stop)
        try:
            if commit and self._config.auto_commit and self._table.order:
                try:
                    self._commit()
                except KafkaError as exc:
                    log.warning("commit before leaving group %s failed: %s", self._config.group_id, exc)
            with self._table.lock:
                owned = set(self._table.parts)
                self.callbacks.clear()
            if owned:
                self._call_listener("on_partitions_revoked", owned)
        finally:
            with self._table.cond:
                self._table.install([])
                self.subscription = None
                self.listener = None
            self.member = self._scope = self._done = None
            self._io.run(member.leave)

    def run_callbacks(self) -> None:
        """Run queued listener calls in the caller's thread (poll()); commit on revoke first."""
        while True:
            with self._table.lock:
                if not self.callbacks:
                    return
                cb = self.callbacks.popleft()
            try:
                if cb.kind == "revoked" and not cb.expired:
                    if self._config.auto_commit and self._table.order:
                        try:
                            self._commit()
                        except KafkaError as exc:
                            log.warning(
                                "commit on revoke failed for group %s: %s", self._config.group_id, exc
                            )
                    self._call_listener("on_partitions_revoked", cb.partitions)
                elif cb.kind == "assigned":
                    self._call_listener("on_partitions_assigned", cb.partitions)
                else:
                    self._call_listener("on_partitions_lost", cb.partitions)
            finally:
                if cb.done is not None:
                    if not cb.expired:
                        with self._table.cond:
                            self._table.install([])
                    self._io.call_soon(cb.done.set)

    def _call_listener(self, name: str, partitions: set[TopicPartition]) -> None:
        fn: Callable[[set[TopicPartition]], object] | None = getattr(self.listener, name, None)
        if fn is None and name == "on_partitions_lost":  # Java's default: lost = revoked
            fn = getattr(self.listener, "on_partitions_revoked", None)
        if fn is not None:
            fn(set(partitions))

    # ---------------------------------------------------------------- I/O thread

    def commit_generation(self) -> Generation | None:
        """The generation a commit names: None when not subscribed; refused while rebalancing."""
        member = self.member
        if member is None:
            return None
        generation = member.generation()
        if generation is None:
            raise error_for(ErrorCode.REBALANCE_IN_PROGRESS)(
                f"group {self._config.group_id!r} is rebalancing: its partitions may move, commit refused"
            )
        return generation

    async def _start(self) -> None:
        cfg = self._config
        assert cfg.group_id
        member = GroupMember(
            cfg.group_id,
            cfg,
            self._cluster,
            self,
            request_timeout_s=cfg.request_timeout_ms / 1000,
            retry_backoff_s=cfg.retry_backoff_ms / 1000,
        )
        self.member = member
        self._done = done = trio.Event()
        self._scope = scope = trio.CancelScope()

        async def membership() -> None:
            try:
                with scope:
                    await member.run()
            finally:
                done.set()

        self._spawn(membership)

    async def _stop(self) -> None:
        if self._scope is not None and self._done is not None:
            self._scope.cancel()
            await self._done.wait()

    # What the group member asks of the consumer (GroupOwner).

    def subscribed_topics(self) -> list[str]:
        return list(self.subscription or ())

    def owned_partitions(self) -> list[TopicPartition]:
        return list(self._table.parts)

    def last_poll(self) -> float:
        return self.polled_at

    def group_failed(self, exc: BaseException) -> None:
        self._table.fail(exc)

    async def revoke(self, lost: bool) -> None:
        """Give up every partition before rejoining: commit on revoke, then take them away."""
        table = self._table
        if self.listener is None or lost:
            with table.cond:
                owned = set(table.parts)
                positions = {
                    p.tp: OffsetAndMetadata(p.position) for p in table.order if p.position is not None
                }
                table.install([])
                if self.listener is not None and owned:
                    self.callbacks.append(_Callback("lost", owned))
                    table.cond.notify_all()
            if positions and not lost and self._config.auto_commit and self._offsets is not None:
                try:
                    await self._offsets.commit(positions)
                except KafkaError as exc:
                    log.warning("commit on revoke failed for group %s: %s", self._config.group_id, exc)
            return
        callback = _Callback("revoked", set(table.parts), trio.Event())
        with table.cond:
            self.callbacks.append(callback)
            table.cond.notify_all()
        assert callback.done is not None
        with trio.move_on_after(self._config.max_poll_interval_ms / 1000):
            await callback.done.wait()
        if not callback.done.is_set():
            log.warning(
                "group %s: poll() did not run the revoke listener within max_poll_interval_ms; "
                "giving the partitions up uncommitted",
                self._config.group_id,
            )
            with table.cond:
                callback.expired = True
                table.install([])

    def assigned(self, partitions: list[TopicPartition]) -> None:
        with self._table.cond:
            self._table.install(partitions)
            if self._offsets is not None:
                self._offsets.forget(partitions)
            if self.listener is not None:
                self.callbacks.append(_Callback("assigned", set(partitions)))
            self._table.cond.notify_all()
        self._wake_fetcher()
