"""The consumer: assign partitions, seek, poll records; commit offsets for a group.

Rules of this module:

* A :class:`Consumer` is used from one thread (as kafka-python's is); its I/O
  thread is the only other actor.  Everything the two share lives in the
  per-partition :class:`_Partition` states and is guarded by one lock, whose
  condition variable is what :meth:`Consumer.poll` waits on.
* The I/O thread's fetcher keeps at most one Fetch v0 in flight per leader
  broker, covering every assigned partition of that broker whose buffer
  holds less than two responses' worth (2 x ``max_partition_fetch_bytes``):
  one being consumed, one ready.  Responses are decoded there (kproto's
  ``read_message_set``) into ready :class:`ConsumerRecord` lists; ``poll()``
  only slices them.  The user thread wakes the fetcher only when a buffer
  drains below the bound, so no thread crossing happens per record.
* Each partition has an *epoch*, bumped by ``seek``/``assign``/resets; a
  response is kept only if its partition's epoch and fetch offset are still
  those it was requested with, so a seek never sees data of the old position.
* ``position`` is the offset of the next record ``poll()``/iteration returns
  (the committed offset by Kafka's definition: last consumed + 1);
  ``fetch_offset`` is where the fetcher continues (beyond what is buffered).
* Recoverable trouble (a broker down, a leader moved, a coordinator away) is
  retried in the background with backoff and never surfaces; errors the user
  must act on (offset out of range with ``auto_offset_reset="error"``, a
  message larger than ``max_partition_fetch_bytes``, corrupt data) stick to
  their partition and are raised by ``poll()`` until it is re-positioned with
  ``seek*()`` or ``assign()``.

* Two ways to get partitions, never mixed: ``assign()`` (self-assigned;
  offsets committed with generation -1, as Kafka 0.8.2 consumers did) or
  ``subscribe()``: membership of ``group_id`` (:mod:`hmb_client.group`, its
  task in the I/O thread), partitions handed out by the group's leader with
  ``partition_assignment_strategy`` (:mod:`hmb_client.assignors`), commits
  carrying the generation.  Rebalances are eager: before rejoining, every
  partition is given up -- its position committed when
  ``enable_auto_commit`` (commit on revoke), and taken away under the lock
  so no record is handed out after the committed position.  Without a
  listener the I/O thread does this itself; with one, ``poll()`` runs the
  listener's callbacks in the caller's thread (as Java and kafka-python do)
  and the rejoin waits for it.  Newly assigned partitions start at the
  committed offset, else per ``auto_offset_reset``.

With ``enable_auto_commit`` the I/O thread commits changed positions every
``auto_commit_interval_ms``, and ``close()`` commits them once more (then
leaves the group).  Config names and defaults follow kafka-python (see
:class:`ConsumerConfig`); ``poll()`` takes seconds, and returns a list.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import fields
from typing import Any

import trio

from hmb_client.cluster import Cluster, cluster_config_of
from hmb_client.coordinator import CoordinatorLink
from hmb_client.errors import (
    IllegalStateError,
    KafkaError,
    KafkaTimeoutError,
)
from hmb_client.fetcher import (  # noqa: F401 - OffsetOutOfRangeError is public here
    _BUFFERED_FETCHES,
    _COMMITTED,
    _TIMESTAMPS,
    CommitCallback,
    OffsetOutOfRangeError,
    T,
    _concat,
    _new_record,
    _Partition,
    _Taken,
)
from hmb_client.group import ConsumerRebalanceListener, GroupMember
from hmb_client.rebalance import ConsumerConfig, _Callback, _GroupConsumer
from hmb_client.runtime import IoThread
from hmb_client.structs import ConsumerRecord, OffsetAndMetadata, TopicPartition

log = logging.getLogger(__name__)

__all__ = ["Consumer", "ConsumerConfig", "ConsumerRebalanceListener", "OffsetOutOfRangeError"]


class Consumer(_GroupConsumer):
    """A Kafka consumer.  ``Consumer(bootstrap_servers="127.0.0.1:9092", group_id="g")``."""

    def __init__(self, bootstrap_servers: str | list[str] = "127.0.0.1:9092", **config: Any) -> None:
        unknown = set(config) - {f.name for f in fields(ConsumerConfig)}
        if unknown:
            raise TypeError(f"unknown consumer settings: {', '.join(sorted(unknown))}")
        self.config = cfg = ConsumerConfig(bootstrap_servers=bootstrap_servers, **config)
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._parts: dict[TopicPartition, _Partition] = {}
        self._order: list[_Partition] = []  # assignment order, rotated by poll for fairness
        self._turn = 0
        # Records taken from a buffer by iteration but not handed out yet.
        self._pending: _Taken | None = None
        self._fatal: BaseException | None = None
        # Group membership (subscribe()): topics, listener, callbacks for the caller's poll().
        self._subscription: list[str] | None = None
        self._listener: Any = None
        self._callbacks: deque[_Callback] = deque()
        self._group: GroupMember | None = None
        self._group_scope: trio.CancelScope | None = None
        self._group_done: trio.Event | None = None
        self._last_poll = time.monotonic()
        # One response being consumed and the next one ready: the fetch after them goes out
        # while the first is used up, so the broker's latency hides behind the consumer's work.
        self._buffer_bound = _BUFFERED_FETCHES * cfg.max_partition_fetch_bytes
        self._deserializing = cfg.key_deserializer is not None or cfg.value_deserializer is not None
        self._closed = False
        # I/O thread only:
        self._busy: set[int] = set()  # leaders with a fetch in flight
        self._refreshing = False
        self._metadata_retry_at = 0.0
        self._coordinator: CoordinatorLink | None = None
        self._last_committed: dict[TopicPartition, int] = {}
        self._async_commits: set[trio.Event] = set()
        self._wake: trio.Event | None = None
        self._nursery: trio.Nursery | None = None
        self._scope: trio.CancelScope | None = None
        self._cluster_config = cluster_config_of(cfg)
        self._io = IoThread("hmb-consumer-io")
        self._cluster: Cluster = self._io.run(self._start)

    async def _start(self) -> Cluster:
        assert self._io.nursery is not None
        self._cluster = Cluster(self._cluster_config, self._io.nursery)
        await self._io.nursery.start(self._background)
        return self._cluster

    # ================================================================ caller side

    def __enter__(self) -> Consumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateError("the consumer is closed")

    def _wakeup_soon(self) -> None:
        self._io.call_soon(self._wakeup)

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Consume exactly ``partitions`` (replacing the previous assignment).

        Partitions kept from the previous assignment keep their position but drop
        buffered data; new ones start from the committed offset (with ``group_id``)
        or per ``auto_offset_reset``.
        """
        self._check_open()
        if self._subscription is not None:
            raise IllegalStateError("assign() while subscribed: call unsubscribe() first")
        tps = list(dict.fromkeys(TopicPartition(tp[0], tp[1]) for tp in partitions))
        removed: dict[TopicPartition, int] = {}
        with self._lock:
            parts: dict[TopicPartition, _Partition] = {}
            for tp in tps:
                p = self._parts.get(tp)
                if p is None:
                    p = _Partition(tp)
                elif p.position is not None:
                    p.repositioned(p.position)
                else:
                    p.repositioned(None, p.reset)
                parts[tp] = p
            for tp, p in self._parts.items():
                if tp not in parts:
                    p.epoch += 1  # responses in flight for it are dropped
                    if p.position is not None:
                        removed[tp] = p.position
            self._parts = parts
            self._order = list(parts.values())
            self._pending = None
        if removed and self._auto_commit_enabled:
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
        with self._lock:
            if self._subscription is None and self._parts:
                raise IllegalStateError("subscribe() while partitions are assigned: call unsubscribe() first")
            changed = self._subscription != wanted
            self._subscription = wanted
            self._listener = listener
        self._last_poll = time.monotonic()
        group = self._group
        if group is None:
            self._io.run(self._start_group)
        elif changed:
            self._io.call_soon(group.request_rejoin)

    def subscription(self) -> set[str] | None:
        """The subscribed topics (None when not subscribed)."""
        sub = self._subscription
        return None if sub is None else set(sub)

    def unsubscribe(self) -> None:
        """Stop consuming: leave the group (committing positions first with
        ``enable_auto_commit``), or drop every self-assigned partition."""
        self._check_open()
        if self._subscription is None:
            self.assign([])
            return
        self._leave_group(commit=True)

    def assignment(self) -> set[TopicPartition]:
        """The partitions consumed now (self-assigned or the group's current assignment)."""
        return set(self._parts)

    def group_statistics(self) -> dict[str, Any] | None:
        """Membership state (member id, generation, leader, completed joins); None unsubscribed."""
        group = self._group
        return None if group is None else group.statistics()

    def _part(self, tp: TopicPartition) -> _Partition:
        p = self._parts.get(TopicPartition(tp[0], tp[1]))
        if p is None:
            raise IllegalStateError(f"{tp[0]}-{tp[1]} is not assigned to this consumer")
        return p

    def seek(self, partition: TopicPartition, offset: int) -> None:
        """Continue ``partition`` at ``offset`` with the next poll."""
        self._check_open()
        if not isinstance(offset, int) or offset < 0:
            raise ValueError(f"offset must be a non-negative int, not {offset!r}")
        with self._lock:
            self._part(partition).repositioned(offset)
        self._wakeup_soon()

    def _seek_reset(self, tps: tuple[TopicPartition, ...], reset: str) -> None:
        self._check_open()
        with self._lock:
            parts = [self._part(tp) for tp in tps] if tps else list(self._order)
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
        p = self._part(partition)
        with self._lock:
            if p.position is not None:
                return p.position
            if p.error is not None:
                raise p.error
        deadline = time.monotonic() + self.config.request_timeout_ms / 1000
        self._io.run(self._retrying, self._resolve, [p], deadline)
        with self._lock:
            if p.position is not None:
                return p.position
            if p.error is not None:
                raise p.error
        raise KafkaTimeoutError(f"position of {p.tp.topic}-{p.tp.partition} not found")

    def highwater(self, partition: TopicPartition) -> int | None:
        """The partition's high watermark as of the last fetch response (None before one)."""
        return self._part(partition).highwater

    def beginning_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The earliest offset of each partition (assigned or not)."""
        return self._offsets_at(partitions, "earliest")

    def end_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The offset the next record produced to each partition will get."""
        return self._offsets_at(partitions, "latest")

    def _offsets_at(self, partitions: Iterable[TopicPartition], where: str) -> dict[TopicPartition, int]:
        self._check_open()
        wanted = {TopicPartition(tp[0], tp[1]): _TIMESTAMPS[where] for tp in partitions}
        deadline = time.monotonic() + self.config.request_timeout_ms / 1000
        return self._io.run(self._retrying, self._list_offsets, wanted, deadline)

    def poll(self, timeout: float = 1.0, max_records: int | None = None) -> list[ConsumerRecord]:
        """Records from the assigned partitions, waiting up to ``timeout`` seconds for one.

        Returns at most ``max_records`` (default ``max_poll_records``) and advances the
        positions past them; an empty list when nothing arrived in time.  Raises an error
        that needs the caller (see the module docstring) before returning records.
        """
        self._check_open()
        limit = max_records or self.config.max_poll_records
        deadline = time.monotonic() + max(0.0, timeout)
        self._polled()
        out: list[ConsumerRecord] = []
        while not out:
            if self._callbacks:
                self._run_callbacks()
            with self._cond:
                while not self._callbacks:  # listener calls come before records
                    if not self._parts and self._subscription is None:
                        raise IllegalStateError("poll() with no partitions assigned: call assign() first")
                    self._raise_errors()
                    out = self._take(limit)
                    if out:
                        break
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return out
                    self._cond.wait(remaining)
        return self._deserialize(out) if self._deserializing else out

    def _polled(self) -> None:
        """Note a poll: the group's ``max_poll_interval_ms`` watch (one clock read, no thread crossing)."""
        self._last_poll = time.monotonic()
        group = self._group
        if group is not None and group.waiting_for_poll:
            self._io.call_soon(group.poll_seen)

    def _raise_errors(self) -> None:
        """Raise a fatal error or the first partition's sticky error (lock held)."""
        if self._fatal is not None:
            raise self._fatal
        for p in self._order:
            if p.error is not None:
                raise p.error

    def _take(self, limit: int, advance: bool = True) -> list[ConsumerRecord]:
        """Up to ``limit`` buffered records, partitions served in turn (lock held).

        ``advance=False`` (iteration) takes from one partition only and leaves its
        position to be advanced per yielded record.
        """
        out: list[ConsumerRecord] = []
        taken = self._pending
        if taken is not None:
            if taken.part.epoch != taken.epoch:
                self._pending = taken = None
            elif not advance:
                return []
            else:
                i = taken.next
                out = taken.records[i : i + limit]
                taken.next = i + len(out)
                if taken.next >= len(taken.records):
                    self._pending = None
                taken.part.position = out[-1].offset + 1
                return out
        order = self._order
        n = len(order)
        wake = False
        bound = self._buffer_bound
        pieces: list[list[ConsumerRecord]] = []
        room = limit
        for k in range(n):
            p = order[(self._turn + k) % n]
            chunks = p.chunks
            while chunks and room > 0:
                chunk = chunks[0]
                recs, i = chunk[0], chunk[1]
                got = recs if i == 0 and len(recs) <= room else recs[i : i + room]
                pieces.append(got)
                room -= len(got)
                i += len(got)
                if i >= len(recs):
                    chunks.popleft()
                    before = p.buffered
                    p.buffered -= chunk[2]
                    wake = wake or before >= bound > p.buffered
                else:
                    chunk[1] = i
                if advance:
                    p.position = got[-1].offset + 1
            if pieces and not advance:
                self._pending = _Taken(p, _concat(pieces))
                pieces = []
                break
            if room <= 0:
                break
        self._turn = (self._turn + 1) % n if n else 0
        if wake:
            self._wakeup_soon()
        return _concat(pieces)

    def _deserialize(self, records: list[ConsumerRecord]) -> list[ConsumerRecord]:
        """Apply the deserializers (None keys/values stay None)."""
        kd = self.config.key_deserializer
        vd = self.config.value_deserializer
        return [
            _new_record(
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
        self._last_poll = time.monotonic()
        with self._lock:
            rec = self._next_taken()
        if rec is None:
            rec = self._next_waiting()
        return self._deserialize([rec])[0] if self._deserializing else rec

    def _next_taken(self) -> ConsumerRecord | None:
        """The next record iteration took from a buffer, if still valid (lock held)."""
        taken = self._pending
        if taken is None:
            return None
        if taken.part.epoch != taken.epoch:  # re-positioned since
            self._pending = None
            return None
        rec = taken.records[taken.next]
        taken.next += 1
        if taken.next >= len(taken.records):
            self._pending = None
        taken.part.position = rec[2] + 1
        return rec

    def _next_waiting(self) -> ConsumerRecord:
        self._check_open()
        timeout_ms = self.config.consumer_timeout_ms
        deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000
        while True:
            self._polled()
            if self._callbacks:
                self._run_callbacks()
            with self._cond:
                if self._callbacks:
                    continue
                if not self._parts and self._subscription is None:
                    raise IllegalStateError("iterating with no partitions assigned: call assign() first")
                self._raise_errors()
                self._take(self.config.max_poll_records, advance=False)
                rec = self._next_taken()
                if rec is not None:
                    return rec
                remaining = 1.0 if deadline is None else deadline - time.monotonic()
                if remaining <= 0:
                    raise StopIteration
                self._cond.wait(remaining)

    # ---------------------------------------------------------------- offsets

    def _positions(self) -> dict[TopicPartition, OffsetAndMetadata]:
        with self._lock:
            return {p.tp: OffsetAndMetadata(p.position) for p in self._order if p.position is not None}

    def _commit_offsets(
        self, offsets: Mapping[TopicPartition, int | OffsetAndMetadata] | None
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        self._check_open()
        if not self.config.group_id:
            raise IllegalStateError("committing offsets needs a group_id")
        if offsets is None:
            return self._positions()
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
            deadline = time.monotonic() + self.config.request_timeout_ms / 1000
            self._io.run(self._retrying, self._commit, todo, deadline)

    def commit_async(
        self,
        offsets: Mapping[TopicPartition, int | OffsetAndMetadata] | None = None,
        callback: CommitCallback | None = None,
    ) -> None:
        """Commit in the background; ``callback(offsets, exception_or_None)`` runs in the I/O thread."""
        todo = self._commit_offsets(offsets)
        self._io.start_task(self._commit_in_background, todo, callback)

    def committed(self, partition: TopicPartition) -> int | None:
        """The offset committed for ``group_id`` on ``partition`` (None when nothing is)."""
        self._check_open()
        if not self.config.group_id:
            raise IllegalStateError("committed() needs a group_id")
        tp = TopicPartition(partition[0], partition[1])
        deadline = time.monotonic() + self.config.request_timeout_ms / 1000
        return self._io.run(self._retrying, self._fetch_committed, [tp], deadline).get(tp)

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
            if self._group is not None:
                self._leave_group(commit=autocommit)
            elif autocommit and self._auto_commit_enabled and self._order:
                try:
                    self.commit()
                except KafkaError as exc:
                    log.warning("commit on close failed: %s", exc)
        finally:
            self._closed = True
            self._pending = None
            try:
                self._io.run(self._shutdown)
            except RuntimeError:
                pass
            self._io.close()
