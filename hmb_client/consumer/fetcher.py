"""The consumer's fetcher: Fetch requests, and positions for partitions without one.

Rules of this module (it runs in the consumer's I/O thread):

* At most one Fetch is in flight per leader broker, covering every assigned
  partition of that broker whose buffer holds less than two responses' worth
  (2 x ``max_partition_fetch_bytes``): one being consumed, one ready.
  Responses are decoded here (kproto's ``read_records``) into ready
  :class:`ConsumerRecord` lists; ``poll()`` only slices them.  The caller's
  thread wakes the fetcher only when a buffer drains below the bound, so no
  thread crossing happens per record.
* An answer is kept only if its partition's epoch and fetch offset are still
  those it was requested with (:mod:`hmb_client.consumer.partitions`).
* Recoverable trouble (a broker down, a leader moved) is retried after
  ``retry_backoff_ms`` and never surfaces; errors the user must act on
  (offset out of range with ``auto_offset_reset="error"``, a message larger
  than ``max_partition_fetch_bytes``, corrupt data) stick to their partition
  until it is re-positioned.
* A partition without a position gets the group's committed offset, else one
  per ``auto_offset_reset`` (:class:`~hmb_client.consumer.list_offsets.OffsetLookup`).

Requests go out at the highest version the leader and this client share
(:meth:`~hmb_client.connection.BrokerConnection.pick`).  Fetch v3+ bounds the
whole response (``fetch_max_bytes``), v4+ carries ``isolation_level`` (Kafka's
default, read_uncommitted, unless configured), v7+ would use incremental
fetch sessions: this client always sends session id 0 / epoch -1 (a full
fetch each time, no session).  v12+ is flexible; v13+ names topics by id, the
one the cluster's metadata (v10+) gave: a topic whose id is not known yet is
fetched at v12 by name, and UNKNOWN_TOPIC_ID (the topic was deleted, maybe
made again) refreshes the metadata like an unknown partition.  The record sets are read whatever their
message format (:mod:`hmb_client.consumer.fetch_records`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import trio

from hmb_client.cluster import NO_TOPIC_ID, Cluster
from hmb_client.consumer.config import ConsumerConfig
from hmb_client.consumer.fetch_records import committed_records, next_fetch_offset
from hmb_client.consumer.list_offsets import REFRESH_CODES, OffsetLookup
from hmb_client.consumer.offsets import GroupOffsets
from hmb_client.consumer.partitions import (
    COMMITTED,
    TIMESTAMPS,
    PartitionState,
    PartitionTable,
    new_record,
)
from hmb_client.errors import KafkaConnectionError, KafkaError, KafkaTimeoutError, error_for
from hmb_client.request_bodies import ISOLATION
from hmb_client.structs import ConsumerRecord, TopicPartition
from kproto import ApiKey, ErrorCode, KprotoError
from kproto.records import read_records

log = logging.getLogger(__name__)

OffsetOutOfRangeError = error_for(ErrorCode.OFFSET_OUT_OF_RANGE)
FETCH_BY_ID = 13  # from this Fetch version topics are named by id (KIP-516)
BUFFERED_FETCHES = 2  # a partition is fetched while it holds less than this many responses' bytes
#: Starts an I/O-thread task whose failure becomes the error ``poll()`` raises.
Spawn = Callable[..., None]


class Fetcher:
    """Keeps the assigned partitions' buffers filled; :meth:`run` is its task."""

    def __init__(
        self,
        config: ConsumerConfig,
        table: PartitionTable,
        cluster: Cluster,
        lookup: OffsetLookup,
        offsets: GroupOffsets | None,
        spawn: Spawn,
    ) -> None:
        self._config = config
        self._table = table
        self._cluster = cluster
        self._lookup = lookup
        self._offsets = offsets
        self._spawn = spawn
        # One response being consumed and the next one ready: the fetch after them goes out
        # while the first is used up, so the broker's latency hides behind the consumer's work.
        self.buffer_bound = BUFFERED_FETCHES * config.max_partition_fetch_bytes
        self._busy: set[int] = set()  # leaders with a fetch in flight
        self._refreshing = False
        self._metadata_retry_at = 0.0
        self._wake: trio.Event | None = None

    def wakeup(self) -> None:
        """Look again now (I/O thread): a position, an assignment or a buffer changed."""
        if self._wake is not None:
            self._wake.set()

    async def run(self) -> None:
        """Start fetches, position lookups and metadata refreshes; sleep until something changes."""
        cluster = self._cluster
        table = self._table
        spawn = self._spawn
        while True:
            self._wake = trio.Event()  # before looking: a wakeup from now on is not lost
            now = trio.current_time()
            next_at = float("inf")
            bound = self.buffer_bound
            to_resolve: list[PartitionState] = []
            by_leader: dict[int, list[tuple[PartitionState, int, int]]] = {}
            missing: set[str] = set()
            with table.lock:
                for p in table.order:
                    if p.error is not None or p.in_flight or p.resolving:
                        continue
                    if p.retry_at > now:
                        next_at = min(next_at, p.retry_at)
                    elif p.position is None:
                        p.resolving = True
                        to_resolve.append(p)
                    elif p.fetch_offset is not None and p.buffered < bound:
                        info = cluster.topics.get(p.tp.topic)
                        part = p.tp.partition
                        ok = info is not None and not info.error and part < info.partitions
                        leader = info.leaders[part] if info is not None and ok else -1
                        if leader < 0:
                            missing.add(p.tp.topic)
                        elif leader not in self._busy:
                            p.in_flight = True
                            by_leader.setdefault(leader, []).append((p, p.fetch_offset, p.epoch))
            if to_resolve:
                spawn(self._resolve_in_background, to_resolve)
            for leader, entries in by_leader.items():
                self._busy.add(leader)
                spawn(self._fetch, leader, entries)
            if missing and not self._refreshing:
                if self._metadata_retry_at <= now:
                    self._refreshing = True
                    spawn(self._refresh_metadata, missing)
                else:
                    next_at = min(next_at, self._metadata_retry_at)
            with trio.move_on_at(next_at):
                await self._wake.wait()

    async def _refresh_metadata(self, topics: set[str]) -> None:
        try:
            await self._cluster.refresh(sorted(topics), deadline_s=self._config.request_timeout_ms / 1000)
        except KafkaError as exc:
            log.debug("metadata refresh for %s failed: %s", sorted(topics), exc)
        finally:
            # Also after success: a topic still being created is asked for again, not in a loop.
            self._metadata_retry_at = trio.current_time() + self._config.retry_backoff_ms / 1000
            self._refreshing = False
            self.wakeup()

    def _topic_id(self, topic: str) -> bytes:
        """``topic``'s id from the cached metadata (all zeros: not known)."""
        info = self._cluster.topics.get(topic)
        return NO_TOPIC_ID if info is None else info.topic_id

    async def _fetch(self, leader: int, entries: list[tuple[PartitionState, int, int]]) -> None:
        """One Fetch to ``leader``; its records go to the partitions' buffers."""
        cfg = self._config
        try:
            topics: dict[str, list[dict[str, int]]] = {}
            for p, offset, _ in entries:
                topics.setdefault(p.tp.topic, []).append(
                    {
                        "partition": p.tp.partition,
                        "current_leader_epoch": -1,
                        "fetch_offset": offset,
                        "last_fetched_epoch": -1,  # v12+: no divergence check (no epochs tracked)
                        "log_start_offset": -1,
                        "partition_max_bytes": cfg.max_partition_fetch_bytes,
                    }
                )
            try:
                conn = await self._cluster.connection(leader)
                version = conn.pick(ApiKey.FETCH)
                ids = {t: self._topic_id(t) for t in topics}
                if version >= FETCH_BY_ID and NO_TOPIC_ID in ids.values():
                    version = conn.pick(ApiKey.FETCH, (0, FETCH_BY_ID - 1))  # a topic without a known id
                by_id = version >= FETCH_BY_ID
                body = {
                    "replica_id": -1,
                    "max_wait_ms": cfg.fetch_max_wait_ms,
                    "min_bytes": cfg.fetch_min_bytes,
                    "max_bytes": cfg.fetch_max_bytes,
                    "isolation_level": ISOLATION[cfg.isolation_level],
                    "session_id": 0,
                    "session_epoch": -1,  # no incremental fetch session: full fetches
                    "topics": [
                        {"topic_id": ids[t], "partitions": ps} if by_id else {"topic": t, "partitions": ps}
                        for t, ps in topics.items()
                    ],
                    "forgotten_topics_data": [],
                    "rack_id": "",
                }
                response = await conn.request(
                    ApiKey.FETCH,
                    version,
                    body,
                    timeout_s=(cfg.request_timeout_ms + cfg.fetch_max_wait_ms) / 1000,
                )
            except (KafkaConnectionError, KafkaTimeoutError) as exc:
                log.debug("fetch from broker %d failed: %s", leader, exc)
                retry_at = trio.current_time() + cfg.retry_backoff_ms / 1000
                with self._table.lock:
                    for p, _, _ in entries:
                        self._cluster.invalidate(p.tp.topic)  # the leader may have moved
                        p.retry_at = retry_at
                return
            if version >= 7 and response.error_code:  # a request-level (session) error
                raise error_for(response.error_code)(f"fetch from broker {leader}")
            committed = version >= 4 and cfg.isolation_level == "read_committed"
            names = {topic_id: name for name, topic_id in ids.items()}
            answers = {
                (names.get(bytes(t.topic_id), "") if by_id else t.topic, pd.partition_index): pd
                for t in response.responses
                for pd in t.partitions
            }
            for p, offset, epoch in entries:
                pd = answers.get(p.tp)
                if pd is not None:
                    aborted = pd.aborted_transactions if committed else None
                    self._fetched(p, offset, epoch, pd.error_code, pd.high_watermark, pd.records, aborted)
                else:  # not answered: ask again, but not in a tight loop
                    p.retry_at = trio.current_time() + cfg.retry_backoff_ms / 1000
        finally:
            with self._table.lock:
                for p, _, _ in entries:
                    p.in_flight = False
            self._busy.discard(leader)
            self.wakeup()

    def _fetched(
        self,
        p: PartitionState,
        offset: int,
        epoch: int,
        code: int,
        hw: int,
        data: bytes | None,
        aborted: list[Any] | None = None,
    ) -> None:
        """Handle one partition of a fetch response (decoding outside the lock)."""
        cfg = self._config
        tp = p.tp
        records: list[ConsumerRecord] = []
        next_offset = offset
        error: BaseException | None = None
        if code == ErrorCode.NONE and data:
            after = next_fetch_offset(data)
            try:
                raw = read_records(data) if aborted is None else committed_records(data, aborted)
            except KprotoError as exc:
                raw = []
                error = error_for(ErrorCode.CORRUPT_MESSAGE)(f"{tp.topic}-{tp.partition}@{offset}: {exc}")
            if raw and raw[0][0] < offset:  # a compressed wrapper or batch starts before the position
                raw = [r for r in raw if r[0] >= offset]
            if raw:
                next_offset = max(raw[-1][0] + 1, after)
                topic, partition = tp
                new = new_record
                cls = ConsumerRecord
                records = [
                    new(cls, (topic, partition, r[0], None if r[1] < 0 else r[1], r[2], r[3], r[4]))
                    for r in raw
                ]
            elif after > offset and error is None:
                next_offset = after  # control batches, aborted records or records before the position
            elif error is None:
                error = error_for(ErrorCode.MESSAGE_TOO_LARGE)(
                    f"{tp.topic}-{tp.partition} at offset {offset}: the message there is larger than "
                    f"max_partition_fetch_bytes={cfg.max_partition_fetch_bytes}; raise "
                    f"max_partition_fetch_bytes to consume it"
                )
        with self._table.cond:
            if p.epoch != epoch or p.fetch_offset != offset or self._table.parts.get(tp) is not p:
                return  # seeked, reset or unassigned meanwhile: the data belongs to an old position
            if hw >= 0:
                p.highwater = hw
            if code == ErrorCode.NONE:
                if error is not None:
                    p.error = error
                    self._table.cond.notify_all()
                elif records or next_offset != offset:
                    if records:
                        p.chunks.append([records, 0, len(data or b"")])
                        p.buffered += len(data or b"")
                        self._table.cond.notify_all()
                    elif p.position == offset and not p.chunks:
                        p.position = next_offset  # nothing to hand out in between (e.g. markers)
                    p.fetch_offset = next_offset
            elif code == ErrorCode.OFFSET_OUT_OF_RANGE:
                if cfg.auto_offset_reset == "error":
                    p.error = OffsetOutOfRangeError(
                        f"offset {offset} of {tp.topic}-{tp.partition} is out of range (high watermark {hw}) "
                        "and auto_offset_reset='error': seek to a valid offset"
                    )
                    self._table.cond.notify_all()
                else:
                    log.info(
                        "offset %d of %s-%d out of range: resetting to %s",
                        offset,
                        tp.topic,
                        tp.partition,
                        cfg.auto_offset_reset,
                    )
                    p.repositioned(None, cfg.auto_offset_reset)
            elif code in REFRESH_CODES:
                self._cluster.invalidate(tp.topic)
                p.retry_at = trio.current_time() + cfg.retry_backoff_ms / 1000
            else:
                p.error = error_for(code)(f"fetching {tp.topic}-{tp.partition} at offset {offset}")
                self._table.cond.notify_all()

    # ---------------------------------------------------------------- positions

    async def _resolve_in_background(self, parts: list[PartitionState]) -> None:
        try:
            await self.resolve(parts)
        except KafkaError as exc:
            log.debug("finding positions failed: %s", exc)
            retry_at = trio.current_time() + self._config.retry_backoff_ms / 1000
            with self._table.cond:
                for p in parts:
                    if exc.retriable:
                        p.retry_at = retry_at
                    elif p.position is None and p.error is None:
                        p.error = exc
                self._table.cond.notify_all()
        finally:
            with self._table.lock:
                for p in parts:
                    p.resolving = False
            self.wakeup()

    async def resolve(self, parts: list[PartitionState]) -> None:
        """Give a position to partitions without one: committed offset first, then the reset policy."""
        with self._table.lock:
            todo = [(p, p.epoch, p.reset) for p in parts if p.position is None and p.error is None]
        if not todo:
            return
        committed: dict[TopicPartition, int | None] = {}
        if self._offsets is not None and any(reset == COMMITTED for _, _, reset in todo):
            committed = await self._offsets.fetch([p.tp for p, _, reset in todo if reset == COMMITTED])
        found: dict[TopicPartition, int] = {}
        lookups: dict[TopicPartition, int] = {}
        errors: dict[TopicPartition, BaseException] = {}
        for p, _, reset in todo:
            if reset == COMMITTED:
                offset = committed.get(p.tp)
                if offset is not None:
                    found[p.tp] = offset
                    continue
                reset = self._config.auto_offset_reset
            if reset == "error":
                errors[p.tp] = OffsetOutOfRangeError(
                    f"{p.tp.topic}-{p.tp.partition} has no position (no committed offset) and "
                    "auto_offset_reset='error': seek to an offset first"
                )
            else:
                lookups[p.tp] = TIMESTAMPS[reset]
        if lookups:
            found.update(await self._lookup.offsets(lookups))
        with self._table.cond:
            for p, epoch, _ in todo:
                if p.epoch != epoch or p.position is not None or self._table.parts.get(p.tp) is not p:
                    continue
                if p.tp in found:
                    p.position = p.fetch_offset = found[p.tp]
                elif p.tp in errors:
                    p.error = errors[p.tp]
            self._table.cond.notify_all()
        self.wakeup()
