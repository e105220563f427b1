"""The consumer's I/O-thread half: fetching, finding positions, group offsets.

Split from :mod:`hmb_client.consumer` (the caller-side half: assign, seek,
poll, commit) so each stays a readable size; the two share the
per-partition :class:`_Partition` states under the consumer's lock, as the
consumer module's header describes.  Everything here runs in the consumer's
trio thread.

Requests go out at the highest version the leader and this client share
(:meth:`~hmb_client.connection.BrokerConnection.pick`).  Fetch v3+ bounds the
whole response (``fetch_max_bytes``), v4+ carries ``isolation_level`` (Kafka's
default, read_uncommitted, unless configured), v7+ would use incremental
fetch sessions: this client always sends session id 0 / epoch -1 (a full
fetch each time, no session).  The record sets are read whatever their
message format (:mod:`hmb_client.fetch_records`).  ListOffsets v1+ asks for
one offset per timestamp (which also makes :meth:`offsets_for_times`
possible); OffsetCommit/OffsetFetch/FindCoordinator use their newest shared
versions too, with the same generation -1 self-assigned commits.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import trio

from hmb_client.cluster import Cluster
from hmb_client.coordinator import CoordinatorLink
from hmb_client.errors import (
    IllegalStateError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    error_for,
)
from hmb_client.fetch_records import committed_records, next_fetch_offset
from hmb_client.list_offsets import ISOLATION as _ISOLATION
from hmb_client.list_offsets import REFRESH_CODES as _REFRESH_CODES
from hmb_client.list_offsets import OffsetLookups
from hmb_client.runtime import IoThread
from hmb_client.structs import ConsumerRecord, OffsetAndMetadata, TopicPartition
from kproto import ApiKey, ErrorCode, KprotoError
from kproto.records import read_records

log = logging.getLogger(__name__)

T = TypeVar("T")
CommitCallback = Callable[[dict[TopicPartition, OffsetAndMetadata], BaseException | None], object]

_COMMITTED = "committed"  # reset strategy of a fresh partition: committed offset, else auto_offset_reset
_TIMESTAMPS = {"earliest": -2, "latest": -1}  # ListOffsets special times
_new_record = cast(Any, tuple.__new__)  # tuple.__new__(ConsumerRecord, (...)): the fastest constructor
OffsetOutOfRangeError = error_for(ErrorCode.OFFSET_OUT_OF_RANGE)
_BUFFERED_FETCHES = 2  # a partition is fetched while it holds less than this many responses' bytes


@dataclass(frozen=True)
class ConsumerConfig:
    """Consumer settings (kafka-python names and defaults unless noted)."""

    bootstrap_servers: str | list[str] = "127.0.0.1:9092"
    client_id: str = "hmb-consumer"
    group_id: str | None = None
    auto_offset_reset: str = "latest"  # "earliest", "latest" or "error" (also "smallest"/"largest")
    enable_auto_commit: bool = True  # only with group_id
    auto_commit_interval_ms: int = 5000
    fetch_min_bytes: int = 1
    fetch_max_wait_ms: int = 500
    fetch_max_bytes: int = 52_428_800  # a whole response (Fetch v3+)
    max_partition_fetch_bytes: int = 1_048_576
    api_version: tuple[int, ...] | None = None  # None: ApiVersions; (0, 8, 2): the 0.8.2 table
    isolation_level: str = "read_uncommitted"  # or "read_committed" (Fetch v4+, ListOffsets v2+)
    max_poll_records: int = 500
    request_timeout_ms: int = 30_000
    retry_backoff_ms: int = 100
    consumer_timeout_ms: float | None = None  # iteration stops after this long without records
    key_deserializer: Callable[[bytes], Any] | None = None
    value_deserializer: Callable[[bytes], Any] | None = None
    reconnect_backoff_ms: int = 50
    reconnect_backoff_max_ms: int = 1000

    def __post_init__(self) -> None:
        aliases = {"smallest": "earliest", "largest": "latest"}
        reset = aliases.get(self.auto_offset_reset, self.auto_offset_reset)
        if reset not in ("earliest", "latest", "error"):
            raise ValueError(f"auto_offset_reset must be 'earliest', 'latest' or 'error', not {reset!r}")
        object.__setattr__(self, "auto_offset_reset", reset)
        if self.isolation_level not in _ISOLATION:
            raise ValueError("isolation_level must be 'read_uncommitted' or 'read_committed'")
        for name in (
            "auto_commit_interval_ms",
            "max_partition_fetch_bytes",
            "max_poll_records",
            "request_timeout_ms",
            "fetch_max_bytes",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if self.fetch_min_bytes < 0 or self.fetch_max_wait_ms < 0:
            raise ValueError("fetch_min_bytes and fetch_max_wait_ms must not be negative")


def _concat(pieces: list[list[ConsumerRecord]]) -> list[ConsumerRecord]:
    if len(pieces) == 1:
        return pieces[0]
    return [r for piece in pieces for r in piece]


class _Partition:
    """What the consumer knows of one assigned partition (guarded by the consumer's lock)."""

    __slots__ = (
        "buffered",
        "chunks",
        "epoch",
        "error",
        "fetch_offset",
        "highwater",
        "in_flight",
        "position",
        "reset",
        "resolving",
        "retry_at",
        "tp",
    )

    def __init__(self, tp: TopicPartition) -> None:
        self.tp = tp
        self.position: int | None = None  # next offset to hand to the user
        self.fetch_offset: int | None = None  # next offset to fetch
        self.reset: str = _COMMITTED  # how to find a position when there is none
        self.epoch = 0
        self.chunks: deque[list[Any]] = deque()  # [records, next index, bytes]
        self.buffered = 0
        self.error: BaseException | None = None
        self.in_flight = False
        self.resolving = False
        self.retry_at = 0.0  # trio time before which the fetcher leaves it alone
        self.highwater: int | None = None

    def repositioned(self, position: int | None, reset: str = _COMMITTED) -> None:
        """Move to ``position`` (None: find one per ``reset``), dropping buffered data and errors."""
        self.epoch += 1
        self.position = self.fetch_offset = position
        self.reset = reset
        self.chunks.clear()
        self.buffered = 0
        self.error = None
        self.retry_at = 0.0


class _Taken:
    """Records taken from a partition's buffer by iteration, handed out one at a time."""

    __slots__ = ("epoch", "next", "part", "records")

    def __init__(self, part: _Partition, records: list[ConsumerRecord]) -> None:
        self.part = part
        self.epoch = part.epoch  # stale once the partition is re-positioned
        self.records = records
        self.next = 0


class _FetchLoop(OffsetLookups):
    """The I/O-thread methods of :class:`hmb_client.consumer.Consumer` (its base class)."""

    config: ConsumerConfig
    _lock: threading.Lock
    _cond: threading.Condition
    _parts: dict[TopicPartition, _Partition]
    _order: list[_Partition]
    _fatal: BaseException | None
    _closed: bool
    _busy: set[int]
    _refreshing: bool
    _metadata_retry_at: float
    _coordinator: CoordinatorLink | None
    _last_committed: dict[TopicPartition, int]
    _async_commits: set[trio.Event]
    _wake: trio.Event | None
    _nursery: trio.Nursery | None
    _scope: trio.CancelScope | None
    _cluster: Cluster
    _buffer_bound: int
    _io: IoThread

    @property
    def _auto_commit_enabled(self) -> bool:
        return bool(self.config.group_id) and self.config.enable_auto_commit

    def _positions(self) -> dict[TopicPartition, OffsetAndMetadata]:  # defined by Consumer
        raise NotImplementedError

    # ================================================================ I/O thread side

    def _wakeup(self) -> None:
        if self._wake is not None:
            self._wake.set()

    async def _background(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        with trio.CancelScope() as scope:
            self._scope = scope
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._guarded, self._fetcher)
                if self._auto_commit_enabled:
                    nursery.start_soon(self._guarded, self._auto_commit)
                task_status.started()

    async def _guarded(self, afn: Callable[..., Awaitable[object]], *args: Any) -> None:
        """Run a background task; a bug in it becomes an error poll() raises, not a dead thread."""
        try:
            await afn(*args)
        except Exception as exc:
            log.exception("consumer background task failed")
            with self._cond:
                self._fatal = IllegalStateError(f"the consumer's I/O thread failed: {exc!r}")
                self._fatal.__cause__ = exc
                self._cond.notify_all()

    async def _shutdown(self) -> None:
        if self._scope is not None:
            self._scope.cancel()
        with trio.move_on_after(self.config.request_timeout_ms / 1000):
            for done in list(self._async_commits):
                await done.wait()
        await self._cluster.close()

    async def _retrying(self, afn: Callable[..., Awaitable[T]], arg: Any, deadline: float) -> T:
        """``await afn(arg)``, retrying retriable errors with backoff until ``deadline`` (monotonic)."""
        last: BaseException | None = None
        with trio.move_on_after(max(0.0, deadline - time.monotonic())):
            while True:
                try:
                    return await afn(arg)
                except KafkaError as exc:
                    if not exc.retriable:
                        raise
                    last = exc
                log.debug("retrying after %s", last)
                await trio.sleep(self.config.retry_backoff_ms / 1000)  # retry backoff
        if last is not None:
            raise last  # the reason it did not succeed in time
        raise KafkaTimeoutError(f"no answer within {self.config.request_timeout_ms} ms")

    # ---------------------------------------------------------------- fetcher

    async def _fetcher(self) -> None:
        """Start fetches, position lookups and metadata refreshes; sleep until something changes."""
        cluster = self._cluster
        assert self._nursery is not None
        nursery = self._nursery
        while True:
            self._wake = trio.Event()  # before looking: a wakeup from now on is not lost
            now = trio.current_time()
            next_at = float("inf")
            bound = self._buffer_bound
            to_resolve: list[_Partition] = []
            by_leader: dict[int, list[tuple[_Partition, int, int]]] = {}
            missing: set[str] = set()
            with self._lock:
                for p in self._order:
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
                nursery.start_soon(self._guarded, self._resolve_in_background, to_resolve)
            for leader, entries in by_leader.items():
                self._busy.add(leader)
                nursery.start_soon(self._guarded, self._fetch, leader, entries)
            if missing and not self._refreshing:
                if self._metadata_retry_at <= now:
                    self._refreshing = True
                    nursery.start_soon(self._guarded, self._refresh_metadata, missing)
                else:
                    next_at = min(next_at, self._metadata_retry_at)
            with trio.move_on_at(next_at):
                await self._wake.wait()

    async def _refresh_metadata(self, topics: set[str]) -> None:
        try:
            await self._cluster.refresh(sorted(topics), deadline_s=self.config.request_timeout_ms / 1000)
        except KafkaError as exc:
            log.debug("metadata refresh for %s failed: %s", sorted(topics), exc)
        finally:
            # Also after success: a topic still being created is asked for again, not in a loop.
            self._metadata_retry_at = trio.current_time() + self.config.retry_backoff_ms / 1000
            self._refreshing = False
            self._wakeup()

    async def _fetch(self, leader: int, entries: list[tuple[_Partition, int, int]]) -> None:
        """One Fetch to ``leader``; its records go to the partitions' buffers."""
        cfg = self.config
        try:
            topics: dict[str, list[dict[str, int]]] = {}
            for p, offset, _ in entries:
                topics.setdefault(p.tp.topic, []).append(
                    {
                        "partition": p.tp.partition,
                        "current_leader_epoch": -1,
                        "fetch_offset": offset,
                        "log_start_offset": -1,
                        "partition_max_bytes": cfg.max_partition_fetch_bytes,
                    }
                )
            body = {
                "replica_id": -1,
                "max_wait_ms": cfg.fetch_max_wait_ms,
                "min_bytes": cfg.fetch_min_bytes,
                "max_bytes": cfg.fetch_max_bytes,
                "isolation_level": _ISOLATION[cfg.isolation_level],
                "session_id": 0,
                "session_epoch": -1,  # no incremental fetch session: full fetches
                "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
                "forgotten_topics_data": [],
                "rack_id": "",
            }
            try:
                conn = await self._cluster.connection(leader)
                version = conn.pick(ApiKey.FETCH)
                response = await conn.request(
                    ApiKey.FETCH,
                    version,
                    body,
                    timeout_s=(cfg.request_timeout_ms + cfg.fetch_max_wait_ms) / 1000,
                )
            except (KafkaConnectionError, KafkaTimeoutError) as exc:
                log.debug("fetch from broker %d failed: %s", leader, exc)
                retry_at = trio.current_time() + cfg.retry_backoff_ms / 1000
                with self._lock:
                    for p, _, _ in entries:
                        self._cluster.invalidate(p.tp.topic)  # the leader may have moved
                        p.retry_at = retry_at
                return
            if version >= 7 and response.error_code:  # a request-level (session) error
                raise error_for(response.error_code)(f"fetch from broker {leader}")
            committed = version >= 4 and cfg.isolation_level == "read_committed"
            answers = {(t.topic, pd.partition_index): pd for t in response.responses for pd in t.partitions}
            for p, offset, epoch in entries:
                pd = answers.get(p.tp)
                if pd is not None:
                    aborted = pd.aborted_transactions if committed else None
                    self._fetched(p, offset, epoch, pd.error_code, pd.high_watermark, pd.records, aborted)
                else:  # not answered: ask again, but not in a tight loop
                    p.retry_at = trio.current_time() + cfg.retry_backoff_ms / 1000
        finally:
            with self._lock:
                for p, _, _ in entries:
                    p.in_flight = False
            self._busy.discard(leader)
            self._wakeup()

    def _fetched(
        self,
        p: _Partition,
        offset: int,
        epoch: int,
        code: int,
        hw: int,
        data: bytes | None,
        aborted: list[Any] | None = None,
    ) -> None:
        """Handle one partition of a fetch response (decoding outside the lock)."""
        cfg = self.config
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
                new = _new_record
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
        with self._cond:
            if p.epoch != epoch or p.fetch_offset != offset or self._parts.get(tp) is not p:
                return  # seeked, reset or unassigned meanwhile: the data belongs to an old position
            if hw >= 0:
                p.highwater = hw
            if code == ErrorCode.NONE:
                if error is not None:
                    p.error = error
                    self._cond.notify_all()
                elif records or next_offset != offset:
                    if records:
                        p.chunks.append([records, 0, len(data or b"")])
                        p.buffered += len(data or b"")
                        self._cond.notify_all()
                    elif p.position == offset and not p.chunks:
                        p.position = next_offset  # nothing to hand out in between (e.g. markers)
                    p.fetch_offset = next_offset
            elif code == ErrorCode.OFFSET_OUT_OF_RANGE:
                if cfg.auto_offset_reset == "error":
                    p.error = OffsetOutOfRangeError(
                        f"offset {offset} of {tp.topic}-{tp.partition} is out of range (high watermark {hw}) "
                        "and auto_offset_reset='error': seek to a valid offset"
                    )
                    self._cond.notify_all()
                else:
                    log.info(
                        "offset %d of %s-%d out of range: resetting to %s",
                        offset,
                        tp.topic,
                        tp.partition,
                        cfg.auto_offset_reset,
                    )
                    p.repositioned(None, cfg.auto_offset_reset)
            elif code in _REFRESH_CODES:
                self._cluster.invalidate(tp.topic)
                p.retry_at = trio.current_time() + cfg.retry_backoff_ms / 1000
            else:
                p.error = error_for(code)(f"fetching {tp.topic}-{tp.partition} at offset {offset}")
                self._cond.notify_all()

    # ---------------------------------------------------------------- positions

    async def _resolve_in_background(self, parts: list[_Partition]) -> None:
        try:
            await self._resolve(parts)
        except KafkaError as exc:
            log.debug("finding positions failed: %s", exc)
            retry_at = trio.current_time() + self.config.retry_backoff_ms / 1000
            with self._cond:
                for p in parts:
                    if exc.retriable:
                        p.retry_at = retry_at
                    elif p.position is None and p.error is None:
                        p.error = exc
                self._cond.notify_all()
        finally:
            with self._lock:
                for p in parts:
                    p.resolving = False
            self._wakeup()

    async def _resolve(self, parts: list[_Partition]) -> None:
        """Give a position to partitions without one: committed offset first, then the reset policy."""
        with self._lock:
            todo = [(p, p.epoch, p.reset) for p in parts if p.position is None and p.error is None]
        if not todo:
            return
        committed: dict[TopicPartition, int | None] = {}
        if self.config.group_id and any(reset == _COMMITTED for _, _, reset in todo):
            committed = await self._fetch_committed([p.tp for p, _, reset in todo if reset == _COMMITTED])
        found: dict[TopicPartition, int] = {}
        lookups: dict[TopicPartition, int] = {}
        errors: dict[TopicPartition, BaseException] = {}
        for p, _, reset in todo:
            if reset == _COMMITTED:
                offset = committed.get(p.tp)
                if offset is not None:
                    found[p.tp] = offset
                    continue
                reset = self.config.auto_offset_reset
            if reset == "error":
                errors[p.tp] = OffsetOutOfRangeError(
                    f"{p.tp.topic}-{p.tp.partition} has no position (no committed offset) and "
                    "auto_offset_reset='error': seek to an offset first"
                )
            else:
                lookups[p.tp] = _TIMESTAMPS[reset]
        if lookups:
            found.update(await self._list_offsets(lookups))
        with self._cond:
            for p, epoch, _ in todo:
                if p.epoch != epoch or p.position is not None or self._parts.get(p.tp) is not p:
                    continue
                if p.tp in found:
                    p.position = p.fetch_offset = found[p.tp]
                elif p.tp in errors:
                    p.error = errors[p.tp]
            self._cond.notify_all()
        self._wakeup()

    # ---------------------------------------------------------------- group offsets

    def _link(self) -> CoordinatorLink:
        assert self.config.group_id is not None
        if self._coordinator is None:
            self._coordinator = CoordinatorLink(self._cluster, self.config.group_id)
        return self._coordinator

    async def _coordinator_request(self, api_key: int, version: int, body: dict[str, Any]) -> Any:
        return await self._link().request(api_key, version, body)

    def _check_group_code(self, code: int, what: str) -> None:
        self._link().check(code, what)

    async def _group_version(self, api_key: int) -> int:
        """The version of a group API the coordinator and this client share."""
        return await self._link().version(api_key)

    async def _fetch_committed(self, tps: list[TopicPartition]) -> dict[TopicPartition, int | None]:
        """OffsetFetch (v1+): the committed offsets (None: nothing committed)."""
        topics: dict[str, list[int]] = {}
        for tp in tps:
            topics.setdefault(tp.topic, []).append(tp.partition)
        version = await self._group_version(ApiKey.OFFSET_FETCH)
        response = await self._coordinator_request(
            ApiKey.OFFSET_FETCH,
            version,
            {
                "group_id": self.config.group_id,
                "topics": [{"name": t, "partition_indexes": ps} for t, ps in topics.items()],
            },
        )
        if version >= 2:
            self._check_group_code(response.error_code, "fetching offsets")
        out: dict[TopicPartition, int | None] = {}
        for t in response.topics:
            for pr in t.partitions:
                self._check_group_code(pr.error_code, f"fetching the offset of {t.name}-{pr.partition_index}")
                out[TopicPartition(t.name, pr.partition_index)] = (
                    pr.committed_offset if pr.committed_offset >= 0 else None
                )
        return out

    async def _commit(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        """OffsetCommit (v1+) with generation -1 and no member id (self-assigned partitions)."""
        topics: dict[str, list[dict[str, Any]]] = {}
        for tp, om in offsets.items():
            topics.setdefault(tp.topic, []).append(
                {
                    "partition_index": tp.partition,
                    "committed_offset": om.offset,
                    "committed_leader_epoch": -1,
                    "commit_timestamp": -1,
                    "committed_metadata": om.metadata,
                }
            )
        version = await self._group_version(ApiKey.OFFSET_COMMIT)
        response = await self._coordinator_request(
            ApiKey.OFFSET_COMMIT,
            version,
            {
                "group_id": self.config.group_id,
                "generation_id": -1,
                "member_id": "",
                "group_instance_id": None,
                "retention_time_ms": -1,
                "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
            },
        )
        for t in response.topics:
            for pr in t.partitions:
                self._check_group_code(pr.error_code, f"committing for {t.name}-{pr.partition_index}")
        for tp, om in offsets.items():
            self._last_committed[tp] = om.offset

    async def _commit_in_background(
        self, offsets: dict[TopicPartition, OffsetAndMetadata], callback: CommitCallback | None
    ) -> None:
        done = trio.Event()
        self._async_commits.add(done)
        error: BaseException | None = None
        try:
            if offsets:
                deadline = time.monotonic() + self.config.request_timeout_ms / 1000
                await self._retrying(self._commit, offsets, deadline)
        except Exception as exc:  # reported to the callback, never allowed to kill the I/O thread
            error = exc
            if callback is None:
                log.warning("asynchronous commit failed: %s", exc)
        finally:
            done.set()
            self._async_commits.discard(done)
        if callback is not None:
            try:
                callback(offsets, error)
            except Exception:  # a user callback must not break the I/O thread
                log.exception("commit callback failed")

    async def _auto_commit(self) -> None:
        """Commit changed positions every ``auto_commit_interval_ms``."""
        interval = self.config.auto_commit_interval_ms / 1000
        while True:
            await trio.sleep(interval)  # the auto-commit timer
            last = self._last_committed
            changed = {tp: om for tp, om in self._positions().items() if last.get(tp) != om.offset}
            if changed:
                try:
                    await self._commit(changed)
                except KafkaError as exc:
                    log.warning("auto-commit failed (retried at the next interval): %s", exc)
