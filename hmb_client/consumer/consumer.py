"""The consumer: assign partitions, seek, poll records; commit offsets for a group.

A :class:`Consumer` is made of parts, each a class with a narrow interface,
composed here:

* :class:`~hmb_client.consumer.partitions.PartitionTable` -- the assigned
  partitions, their buffers and positions, under the one lock both threads share;
* :class:`~hmb_client.consumer.fetcher.Fetcher` -- fills the buffers (Fetch)
  and finds positions (the I/O thread);
* :class:`~hmb_client.consumer.list_offsets.OffsetLookup` -- offsets by time
  (ListOffsets);
* :class:`~hmb_client.consumer.offsets.GroupOffsets` -- committed offsets of
  ``group_id`` (OffsetFetch, OffsetCommit, auto-commit);
* :class:`~hmb_client.consumer.membership.Membership` -- ``subscribe()``: the
  group member (:mod:`hmb_client.consumer.group`) and the rebalance listener.

Rules of this module:

* A :class:`Consumer` is used from one thread (as kafka-python's is); its I/O
  thread is the only other actor, and the two meet only in the partition
  table.  This module is the caller's side: it never blocks the I/O thread
  and crosses to it only to wake the fetcher, when a buffer drains below its
  bound, or to run a request (``commit``, ``position``, ...) and wait for it.
* Two ways to get partitions, never mixed: ``assign()`` (self-assigned;
  offsets committed with generation -1, as Kafka 0.8.2 consumers did) or
  ``subscribe()``: membership of ``group_id``, partitions handed out by the
  group's leader with ``partition_assignment_strategy``
  (:mod:`hmb_client.assignors`), commits carrying the generation.
  Rebalances are eager: before rejoining, every partition is given up -- its
  position committed when ``enable_auto_commit`` (commit on revoke), and
  taken away under the lock so no record is handed out after the committed
  position.  Without a listener the I/O thread does this itself; with one,
  ``poll()`` runs the listener's callbacks in the caller's thread (as Java and
  kafka-python do) and the rejoin waits for it.  Newly assigned partitions
  start at the committed offset, else per ``auto_offset_reset``.
* Errors the user must act on stick to their partition and are raised by
  ``poll()`` until it is re-positioned with ``seek*()`` or ``assign()``; a
  failure of the I/O thread is raised by every ``poll()``.

With ``enable_auto_commit`` the I/O thread commits changed positions every
``auto_commit_interval_ms``, and ``close()`` commits them once more (then
leaves the group).  Config names and defaults follow kafka-python (see
:class:`~hmb_client.consumer.config.ConsumerConfig`); ``poll()`` takes
seconds, and returns a list.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import fields
from typing import Any, TypeVar

import trio

from hmb_client.cluster import Cluster, cluster_config_of
from hmb_client.consumer.config import ConsumerConfig
from hmb_client.consumer.fetcher import Fetcher, OffsetOutOfRangeError
from hmb_client.consumer.list_offsets import OffsetLookup
from hmb_client.consumer.membership import Membership
from hmb_client.consumer.offsets import CommitCallback, GroupOffsets
from hmb_client.consumer.partitions import TIMESTAMPS, PartitionTable, new_record
from hmb_client.consumer.retry import retrying
from hmb_client.errors import IllegalStateError, KafkaError, KafkaTimeoutError
from hmb_client.runtime import IoThread
from hmb_client.structs import ConsumerRecord, OffsetAndMetadata, OffsetAndTimestamp, TopicPartition

log = logging.getLogger(__name__)

__all__ = ["Consumer", "OffsetOutOfRangeError"]

T = TypeVar("T")


class Consumer:
    """A Kafka consumer.  ``Consumer(bootstrap_servers="127.0.0.1:9092", group_id="g")``."""

    def __init__(self, bootstrap_servers: str | list[str] = "127.0.0.1:9092", **config: Any) -> None:
        unknown = set(config) - {f.name for f in fields(ConsumerConfig)}
        if unknown:
            raise TypeError(f"unknown consumer settings: {', '.join(sorted(unknown))}")
        self.config = cfg = ConsumerConfig(bootstrap_servers=bootstrap_servers, **config)
        self._table = PartitionTable()
        self._deserializing = cfg.key_deserializer is not None or cfg.value_deserializer is not None
        self._closed = False
        # I/O thread only:
        self._nursery: trio.Nursery | None = None
        self._scope: trio.CancelScope | None = None
        self._io = IoThread("hmb-consumer-io")
        self._cluster: Cluster = self._io.run(self._connect)
        self._offsets = (
            GroupOffsets(cfg, self._cluster, lambda: self._membership.commit_generation())
            if cfg.group_id
            else None
        )
        self._lookup = OffsetLookup(self._cluster, cfg.isolation_level, cfg.request_timeout_ms / 1000)
        self._fetcher = Fetcher(cfg, self._table, self._cluster, self._lookup, self._offsets, self._spawn)
        self._membership = Membership(
            cfg,
            self._table,
            self._cluster,
            self._io,
            self._offsets,
            commit=self.commit,
            spawn=self._spawn,
            wake_fetcher=self._fetcher.wakeup,
        )
        self._io.run(self._start)

    # ================================================================ I/O thread side

    async def _connect(self) -> Cluster:
        assert self._io.nursery is not None
        return Cluster(cluster_config_of(self.config), self._io.nursery)

    async def _start(self) -> None:
        assert self._io.nursery is not None
        await self._io.nursery.start(self._background)

    async def _background(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        with trio.CancelScope() as scope:
            self._scope = scope
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                self._spawn(self._fetcher.run)
                if self.config.auto_commit and self._offsets is not None:
                    self._spawn(self._offsets.auto_commit, self._table.positions)
                task_status.started()

    def _spawn(self, afn: Callable[..., Awaitable[object]], *args: Any) -> None:
        """Start a background task of a part (I/O thread)."""
        assert self._nursery is not None
        self._nursery.start_soon(self._guarded, afn, *args)

    async def _guarded(self, afn: Callable[..., Awaitable[object]], *args: Any) -> None:
        """Run a background task; a bug in it becomes an error poll() raises, not a dead thread."""
        try:
            await afn(*args)
        except Exception as exc:
            log.exception("consumer background task failed")
            fatal = IllegalStateError(f"the consumer's I/O thread failed: {exc!r}")
            fatal.__cause__ = exc
            self._table.fail(fatal)

    async def _shutdown(self) -> None:
        if self._scope is not None:
            self._scope.cancel()
        if self._offsets is not None:
            with trio.move_on_after(self.config.request_timeout_ms / 1000):
                await self._offsets.wait_for_async_commits()
        await self._cluster.close()

    # ================================================================ caller side

    def __enter__(self) -> Consumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateError("the consumer is closed")

    def _wakeup_soon(self) -> None:
        self._io.call_soon(self._fetcher.wakeup)

    def _blocking(self, afn: Callable[[Any], Awaitable[T]], arg: Any) -> T:
        """Run ``afn(arg)`` in the I/O thread, retried until ``request_timeout_ms`` passed."""
        cfg = self.config
        deadline = time.monotonic() + cfg.request_timeout_ms / 1000
        return self._io.run(retrying, afn, arg, deadline, cfg.retry_backoff_ms / 1000)

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Consume exactly ``partitions`` (replacing the previous assignment).

        Partitions kept from the previous assignment keep their position but drop
        buffered data; new ones start from the committed offset (with ``group_id``)
        or per ``auto_offset_reset``.
        """
        self._check_open()
        if self._membership.subscription is not None:
            raise IllegalStateError("assign() while subscribed: call unsubscribe() first")
        removed = self._table.reassign(TopicPartition(tp[0], tp[1]) for tp in partitions)
        if removed and self.config.auto_commit:
            self.commit_async(removed)
        self._wakeup_soon()

    def subscribe(self, topics: Iterable[str] | str, listener: Any = None) -> None:
        """Consume ``topics`` as a member of ``group_id``: the group divides their partitions.

        ``listener`` (optional) is a :class:`ConsumerRebalanceListener` or any object
        with some of its methods (``on_partitions_revoked(set)``,
        ``on_partitions_assigned(set)``, ``on_partitions_lost(set)``); they run inside
        ``poll()``.  Calling ``subscribe()`` again replaces topics and listener (and
        rejoins when the topics changed); an empty list unsubscribes.
        """
        self._check_open()
        if not self.config.group_id:
            raise IllegalStateError("subscribe() needs a group_id (or use assign())")
        names = [topics] if isinstance(topics, str) else list(topics)
        if not all(isinstance(t, str) and t for t in names):
            raise TypeError(f"topics must be non-empty strings, not {names!r}")
        wanted = sorted(set(names))
        if not wanted:
            self.unsubscribe()
            return
        self._membership.subscribe(wanted, listener)

    def subscription(self) -> set[str] | None:
        """The subscribed topics (None when not subscribed)."""
        sub = self._membership.subscription
        return None if sub is None else set(sub)

    def unsubscribe(self) -> None:
        """Stop consuming: leave the group (committing positions first with
        ``enable_auto_commit``), or drop every self-assigned partition."""
        self._check_open()
        if self._membership.subscription is None:
            self.assign([])
            return
        self._membership.leave(commit=True)

    def assignment(self) -> set[TopicPartition]:
        """The partitions consumed now (self-assigned or the group's current assignment)."""
        return set(self._table.parts)

    def group_statistics(self) -> dict[str, Any] | None:
        """Membership state (member id, generation, leader, completed joins); None unsubscribed."""
        member = self._membership.member
        return None if member is None else member.statistics()

    def seek(self, partition: TopicPartition, offset: int) -> None:
        """Continue ``partition`` at ``offset`` with the next poll."""
        self._check_open()
        if not isinstance(offset, int) or offset < 0:
            raise ValueError(f"offset must be a non-negative int, not {offset!r}")
        with self._table.lock:
            self._table.part(partition).repositioned(offset)
        self._wakeup_soon()

    def _seek_reset(self, tps: tuple[TopicPartition, ...], reset: str) -> None:
        self._check_open()
        with self._table.lock:
            parts = [self._table.part(tp) for tp in tps] if tps else list(self._table.order)
            for p in parts:
                p.repositioned(None, reset)
        self._wakeup_soon()

    def seek_to_beginning(self, *partitions: TopicPartition) -> None:
        """Continue at the earliest offset (of every assigned partition when none are named)."""
        self._seek_reset(partitions, "earliest")

    def seek_to_end(self, *partitions: TopicPartition) -> None:
        """Continue at the latest offset: only records produced from now on are consumed."""
        self._seek_reset(partitions, "latest")

    def position(self, partition: TopicPartition) -> int:
        """The offset of the next record to be consumed, finding it now if not known yet."""
        self._check_open()
        p = self._table.part(partition)
        with self._table.lock:
            if p.position is not None:
                return p.position
            if p.error is not None:
                raise p.error
        self._blocking(self._fetcher.resolve, [p])
        with self._table.lock:
            if p.position is not None:
                return p.position
            if p.error is not None:
                raise p.error
        raise KafkaTimeoutError(f"position of {p.tp.topic}-{p.tp.partition} not found")

    def highwater(self, partition: TopicPartition) -> int | None:
        """The partition's high watermark as of the last fetch response (None before one)."""
        return self._table.part(partition).highwater

    def beginning_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The earliest offset of each partition (assigned or not)."""
        return self._offsets_at(partitions, "earliest")

    def end_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The offset the next record produced to each partition will get."""
        return self._offsets_at(partitions, "latest")

    def _offsets_at(self, partitions: Iterable[TopicPartition], where: str) -> dict[TopicPartition, int]:
        self._check_open()
        wanted = {TopicPartition(tp[0], tp[1]): TIMESTAMPS[where] for tp in partitions}
        return self._blocking(self._lookup.offsets, wanted)

    def offsets_for_times(
        self, timestamps: dict[TopicPartition, int]
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """The earliest offset whose timestamp is >= the given one (ms), per partition.

        kafka-python's method: None for a partition without such a record;
        UnsupportedVersionError from a broker without ListOffsets v1 (Kafka
        0.10.1).
        """
        self._check_open()
        for tp, ts in timestamps.items():
            if type(ts) is not int or ts < 0:
                raise ValueError(f"the timestamp of {tp} must be a non-negative int (ms), not {ts!r}")
        wanted = {TopicPartition(tp[0], tp[1]): ts for tp, ts in timestamps.items()}

        async def lookup(w: dict[TopicPartition, int]) -> dict[TopicPartition, tuple[int, int]]:
            return await self._lookup.at_times(w, exact=True)

        found = self._blocking(lookup, wanted)
        return {
            tp: OffsetAndTimestamp(found[tp][0], found[tp][1]) if tp in found and found[tp][0] >= 0 else None
            for tp in wanted
        }

    def poll(self, timeout: float = 1.0, max_records: int | None = None) -> list[ConsumerRecord]:
        """Records from the assigned partitions, waiting up to ``timeout`` seconds for one.

        Returns at most ``max_records`` (default ``max_poll_records``) and advances the
        positions past them; an empty list when nothing arrived in time.  An error that
        needs the caller (see the module docstring) is raised once the records fetched
        before it have been returned.
        """
        self._check_open()
        limit = max_records or self.config.max_poll_records
        deadline = time.monotonic() + max(0.0, timeout)
        self._membership.polled()
        out: list[ConsumerRecord] = []
        while not out:
            if self._membership.callbacks:
                self._membership.run_callbacks()
            with self._table.cond:
                while not self._membership.callbacks:  # listener calls come before records
                    if not self._table.parts and self._membership.subscription is None:
                        raise IllegalStateError("poll() with no partitions assigned: call assign() first")
                    out = self._take(limit)
                    if out:
                        break
                    # an error comes after the records fetched before it, as Kafka's consumer has it
                    self._raise_errors()
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return out
                    self._table.cond.wait(remaining)
        return self._deserialize(out) if self._deserializing else out

    def _take(self, limit: int, advance: bool = True) -> list[ConsumerRecord]:
        """Buffered records (lock held), waking the fetcher when a buffer drained below its bound."""
        records, wake = self._table.take(limit, self._fetcher.buffer_bound, advance)
        if wake:
            self._wakeup_soon()
        return records

    def _raise_errors(self) -> None:
        """Raise a fatal error or the first partition's sticky error (lock held)."""
        if self._table.fatal is not None:
            raise self._table.fatal
        for p in self._table.order:
            if p.error is not None:
                raise p.error

    def _deserialize(self, records: list[ConsumerRecord]) -> list[ConsumerRecord]:
        """Apply the deserializers (None keys/values stay None)."""
        kd = self.config.key_deserializer
        vd = self.config.value_deserializer
        return [
            new_record(
                ConsumerRecord,
                (
                    r[0],
                    r[1],
                    r[2],
                    r[3],
                    kd(r[4]) if kd is not None and r[4] is not None else r[4],
                    vd(r[5]) if vd is not None and r[5] is not None else r[5],
                    r[6],
                ),
            )
            for r in records
        ]

    def __iter__(self) -> Iterator[ConsumerRecord]:
        return self

    def __next__(self) -> ConsumerRecord:
        """The next record, advancing the position past it only as it is handed out.

        Stops (StopIteration) after ``consumer_timeout_ms`` without records; never when
        that is None.
        """
        self._membership.polled_at = time.monotonic()
        with self._table.lock:
            rec = self._table.next_taken()
        if rec is None:
            rec = self._next_waiting()
        return self._deserialize([rec])[0] if self._deserializing else rec

    def _next_waiting(self) -> ConsumerRecord:
        self._check_open()
        timeout_ms = self.config.consumer_timeout_ms
        deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000
        while True:
            self._membership.polled()
            if self._membership.callbacks:
                self._membership.run_callbacks()
            with self._table.cond:
                if self._membership.callbacks:
                    continue
                if not self._table.parts and self._membership.subscription is None:
                    raise IllegalStateError("iterating with no partitions assigned: call assign() first")
                self._raise_errors()
                self._take(self.config.max_poll_records, advance=False)
                rec = self._table.next_taken()
                if rec is not None:
                    return rec
                remaining = 1.0 if deadline is None else deadline - time.monotonic()
                if remaining <= 0:
                    raise StopIteration
                self._table.cond.wait(remaining)

    # ---------------------------------------------------------------- offsets

    def _commit_offsets(
        self, offsets: Mapping[TopicPartition, int | OffsetAndMetadata] | None
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        self._check_open()
        if not self.config.group_id:
            raise IllegalStateError("committing offsets needs a group_id")
        if offsets is None:
            return self._table.positions()
        out = {}
        for tp, o in offsets.items():
            om = o if isinstance(o, OffsetAndMetadata) else OffsetAndMetadata(o)
            if not isinstance(om.offset, int) or om.offset < 0:
                raise ValueError(f"bad offset {o!r} for {tp}")
            out[TopicPartition(tp[0], tp[1])] = om
        return out

    def commit(self, offsets: Mapping[TopicPartition, int | OffsetAndMetadata] | None = None) -> None:
        """Store offsets for ``group_id`` and wait for the coordinator's answer.

        Default: the current position of every assigned partition (the next record
        to consume).  Retriable failures are retried up to ``request_timeout_ms``.
        """
        todo = self._commit_offsets(offsets)
        if todo:
            assert self._offsets is not None
            self._blocking(self._offsets.commit, todo)

    def commit_async(
        self,
        offsets: Mapping[TopicPartition, int | OffsetAndMetadata] | None = None,
        callback: CommitCallback | None = None,
    ) -> None:
        """Commit in the background; ``callback(offsets, exception_or_None)`` runs in the I/O thread."""
        todo = self._commit_offsets(offsets)
        assert self._offsets is not None
        self._io.start_task(self._offsets.commit_in_background, todo, callback)

    def committed(self, partition: TopicPartition) -> int | None:
        """The offset committed for ``group_id`` on ``partition`` (None when nothing is)."""
        self._check_open()
        if not self.config.group_id:
            raise IllegalStateError("committed() needs a group_id")
        tp = TopicPartition(partition[0], partition[1])
        assert self._offsets is not None
        return self._blocking(self._offsets.fetch, [tp]).get(tp)

    # ---------------------------------------------------------------- metadata

    def topics(self) -> set[str]:
        """Every topic of the cluster (internal ones excluded)."""
        self._check_open()
        self._io.run(self._cluster.refresh)
        return {name for name, info in self._cluster.topics.items() if not info.error}

    def partitions_for_topic(self, topic: str) -> set[int]:
        """The partition ids of ``topic``; empty when it does not exist (it is not created)."""
        self._check_open()
        self._io.run(self._cluster.refresh)
        info = self._cluster.topics.get(topic)
        return set() if info is None or info.error else set(range(info.partitions))

    def close(self, autocommit: bool = True) -> None:
        """Commit positions (with ``group_id``, ``enable_auto_commit`` and ``autocommit``), leave
        the group when subscribed, then stop."""
        if self._closed:
            return
        try:
            if self._membership.member is not None:
                self._membership.leave(commit=autocommit)
            elif autocommit and self.config.auto_commit and self._table.order:
                try:
                    self.commit()
                except KafkaError as exc:
                    log.warning("commit on close failed: %s", exc)
        finally:
            self._closed = True
            self._table.pending = None
            try:
                self._io.run(self._shutdown)
            except RuntimeError:
                pass
            self._io.close()
