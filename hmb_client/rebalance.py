"""The consumer's group half: the consumer side of rebalances, and group-aware commits.

Split from :mod:`hmb_client.consumer` (the caller-side half) to keep each a
readable size, as :mod:`hmb_client.fetcher` is.  :class:`GroupMember`
(:mod:`hmb_client.group`) speaks the group protocol; this class is what it
talks to (through :class:`_Owner`, a :class:`~hmb_client.group.GroupOwner`):
it gives partitions up before a rejoin (commit on revoke), installs new
assignments, and queues listener calls for the caller's ``poll()``.

Rules of this module (the consumer's lock guards everything shared):

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
  coordinator would refuse them.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import trio

from hmb_client.errors import KafkaError, error_for
from hmb_client.fetcher import ConsumerConfig as _FetchConfig
from hmb_client.fetcher import _FetchLoop, _Partition, _Taken
from hmb_client.group import GroupMember, GroupSettings, offset_commit_body
from hmb_client.structs import OffsetAndMetadata, TopicPartition
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ConsumerConfig(_FetchConfig, GroupSettings):
    """Consumer settings: fetching and offsets (kafka-python names and defaults) plus the
    group settings of :class:`hmb_client.group.GroupSettings`."""

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "partition_assignment_strategy", tuple(self.partition_assignment_strategy))
        self._check_group_settings()


@dataclass
class _Callback:
    """A listener call for the next ``poll()``; ``done`` releases the waiting rebalance."""

    kind: str  # "revoked", "lost" or "assigned"
    partitions: set[TopicPartition]
    done: trio.Event | None = None
    expired: bool = False  # the rebalance stopped waiting: the partitions are gone already


class _GroupConsumer(_FetchLoop):
    """The group methods of :class:`hmb_client.consumer.Consumer` (its base class)."""

    config: ConsumerConfig
    _subscription: list[str] | None
    _listener: Any
    _callbacks: deque[_Callback]
    _group: GroupMember | None
    _group_scope: trio.CancelScope | None
    _group_done: trio.Event | None
    _last_poll: float
    _pending: _Taken | None
    _turn: int

    def commit(self, offsets: Any = None) -> None:  # defined by Consumer
        raise NotImplementedError

    async def _start_group(self) -> None:
        cfg = self.config
        assert cfg.group_id and self._nursery is not None
        group = GroupMember(
            cfg.group_id,
            cfg,
            self._cluster,
            _Owner(self),
            request_timeout_s=cfg.request_timeout_ms / 1000,
            retry_backoff_s=cfg.retry_backoff_ms / 1000,
        )
        self._group = group
        self._group_done = done = trio.Event()
        self._group_scope = scope = trio.CancelScope()

        async def membership() -> None:
            try:
                with scope:
                    await self._guarded(group.run)
            finally:
                done.set()

        self._nursery.start_soon(membership)

    async def _stop_group(self) -> None:
        if self._group_scope is not None and self._group_done is not None:
            self._group_scope.cancel()
            await self._group_done.wait()

    def _leave_group(self, commit: bool) -> None:
        """Unsubscribe (caller's thread): stop rebalancing, commit, tell the listener, LeaveGroup."""
        group = self._group
        assert group is not None
        self._io.run(self._stop_group)
        try:
            if commit and self._auto_commit_enabled and self._order:
                try:
                    self.commit()
                except KafkaError as exc:
                    log.warning("commit before leaving group %s failed: %s", self.config.group_id, exc)
            with self._lock:
                owned = set(self._parts)
                self._callbacks.clear()
            if owned:
                self._call_listener("on_partitions_revoked", owned)
        finally:
            with self._cond:
                self._install([])
                self._subscription = None
                self._listener = None
            self._group = self._group_scope = self._group_done = None
            self._io.run(group.leave)

    # What the group task (I/O thread) asks of the consumer, through _Owner.

    def _group_failed(self, exc: BaseException) -> None:
        with self._cond:
            self._fatal = exc
            self._cond.notify_all()

    async def _revoke(self, lost: bool) -> None:
        """Give up every partition before rejoining: commit on revoke, then take them away."""
        if self._listener is None or lost:
            with self._cond:
                owned = set(self._parts)
                positions = {
                    p.tp: OffsetAndMetadata(p.position) for p in self._order if p.position is not None
                }
                self._install([])
                if self._listener is not None and owned:
                    self._callbacks.append(_Callback("lost", owned))
                    self._cond.notify_all()
            if positions and not lost and self._auto_commit_enabled:
                try:
                    await self._commit(positions)
                except KafkaError as exc:
                    log.warning("commit on revoke failed for group %s: %s", self.config.group_id, exc)
            return
        callback = _Callback("revoked", set(self._parts), trio.Event())
        with self._cond:
            self._callbacks.append(callback)
            self._cond.notify_all()
        assert callback.done is not None
        with trio.move_on_after(self.config.max_poll_interval_ms / 1000):
            await callback.done.wait()
        if not callback.done.is_set():
            log.warning(
                "group %s: poll() did not run the revoke listener within max_poll_interval_ms; "
                "giving the partitions up uncommitted",
                self.config.group_id,
            )
            with self._cond:
                callback.expired = True
                self._install([])

    def _assigned(self, partitions: list[TopicPartition]) -> None:
        with self._cond:
            self._install(partitions)
            for tp in partitions:
                self._last_committed.pop(tp, None)
            if self._listener is not None:
                self._callbacks.append(_Callback("assigned", set(partitions)))
            self._cond.notify_all()
        self._wakeup()

    def _install(self, partitions: Iterable[TopicPartition]) -> None:
        """Replace the assignment with fresh partitions (lock held); old responses are dropped."""
        for p in self._parts.values():
            p.epoch += 1
        self._parts = {tp: _Partition(tp) for tp in partitions}
        self._order = list(self._parts.values())
        self._pending = None
        self._turn = 0

    def _run_callbacks(self) -> None:
        """Run queued listener calls in the caller's thread (poll()); commit on revoke first."""
        while True:
            with self._lock:
                if not self._callbacks:
                    return
                cb = self._callbacks.popleft()
            try:
                if cb.kind == "revoked" and not cb.expired:
                    if self._auto_commit_enabled and self._order:
                        try:
                            self.commit()
                        except KafkaError as exc:
                            log.warning("commit on revoke failed for group %s: %s", self.config.group_id, exc)
                    self._call_listener("on_partitions_revoked", cb.partitions)
                elif cb.kind == "assigned":
                    self._call_listener("on_partitions_assigned", cb.partitions)
                else:
                    self._call_listener("on_partitions_lost", cb.partitions)
            finally:
                if cb.done is not None:
                    if not cb.expired:
                        with self._cond:
                            self._install([])
                    self._io.call_soon(cb.done.set)

    def _call_listener(self, name: str, partitions: set[TopicPartition]) -> None:
        fn: Callable[[set[TopicPartition]], object] | None = getattr(self._listener, name, None)
        if fn is None and name == "on_partitions_lost":  # Java's default: lost = revoked
            fn = getattr(self._listener, "on_partitions_revoked", None)
        if fn is not None:
            fn(set(partitions))

    async def _commit(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        """OffsetCommit at the best common version, naming our generation when subscribed."""
        assert self.config.group_id is not None
        generation = None
        if self._group is not None:
            generation = self._group.generation()
            if generation is None:
                raise error_for(ErrorCode.REBALANCE_IN_PROGRESS)(
                    f"group {self.config.group_id!r} is rebalancing: its partitions may move, commit refused"
                )
        version = await self._group_version(ApiKey.OFFSET_COMMIT)
        body = offset_commit_body(self.config.group_id, generation, offsets)
        response = await self._coordinator_request(ApiKey.OFFSET_COMMIT, version, body)
        for t in response.topics:
            for pr in t.partitions:
                self._check_group_code(pr.error_code, f"committing for {t.name}-{pr.partition_index}")
        for tp, om in offsets.items():
            self._last_committed[tp] = om.offset


class _Owner:
    """The consumer as its :class:`~hmb_client.group.GroupMember` sees it (a ``GroupOwner``),
    without widening the consumer's public API."""

    def __init__(self, consumer: _GroupConsumer) -> None:
        self._c = consumer

    def subscribed_topics(self) -> list[str]:
        return list(self._c._subscription or ())

    def owned_partitions(self) -> list[TopicPartition]:
        return list(self._c._parts)

    def last_poll(self) -> float:
        return self._c._last_poll

    def group_failed(self, exc: BaseException) -> None:
        self._c._group_failed(exc)

    async def revoke(self, lost: bool) -> None:
        await self._c._revoke(lost)

    def assigned(self, partitions: list[TopicPartition]) -> None:
        self._c._assigned(partitions)
