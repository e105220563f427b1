"""The producer: batches records per partition and sends them from the I/O thread.

``send()`` runs in the caller's thread and is cheap: serialize, pick a
partition, append to the partition's open batch under a lock, return a
future.  The I/O thread's sender takes batches that are full
(``batch_size``), old enough (``linger_ms``), or being flushed, groups them
by leader into Produce requests (at most ``max_in_flight_requests_per_connection``
outstanding per broker), and completes every future of a batch at once
when the broker answers.  Retriable errors are retried after
``retry_backoff_ms`` while ``retries`` and ``delivery_timeout_ms`` allow;
leader or topic errors refresh metadata first.

Config names and defaults follow kafka-python (Kafka's Java names in
snake_case): see :class:`ProducerConfig`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

import trio

from hmb_client.cluster import Cluster, cluster_config_of
from hmb_client.connection import BrokerConnection
from hmb_client.errors import (
    IllegalStateError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    error_for,
)
from hmb_client.partitioner import DefaultPartitioner, RoundRobinPartitioner
from hmb_client.runtime import IoThread
from kproto import ApiKey, ErrorCode
from kproto.records import Compression, MessageSetBuilder

log = logging.getLogger(__name__)

_COMPRESSION = {
    None: Compression.NONE,
    "none": Compression.NONE,
    "gzip": Compression.GZIP,
    "snappy": Compression.SNAPPY,
    "lz4": Compression.LZ4,
}
_MAGIC0_OVERHEAD = 26  # offset, size, crc, magic, attributes, key and value lengths


@dataclass(frozen=True)
class ProducerConfig:
    """Producer settings (kafka-python names; Kafka's defaults unless noted)."""

    bootstrap_servers: str | list[str] = "127.0.0.1:9092"
    client_id: str = "hmb-producer"
    acks: int | str = 1  # 0, 1, -1 or "all"
    retries: int = 2_147_483_647  # bounded in practice by delivery_timeout_ms
    retry_backoff_ms: int = 100
    delivery_timeout_ms: int = 120_000
    batch_size: int = 16_384
    linger_ms: int = 5  # Kafka 4.0's default
    buffer_memory: int = 33_554_432
    max_block_ms: int = 60_000
    max_request_size: int = 1_048_576
    max_in_flight_requests_per_connection: int = 5
    request_timeout_ms: int = 30_000
    compression_type: str | None = None  # None, "gzip", "snappy", "lz4"
    key_serializer: Callable[[Any], bytes] | None = None
    value_serializer: Callable[[Any], bytes] | None = None
    partitioner: str = "default"  # "default" (murmur2 keys, sticky null keys) or "round_robin"
    reconnect_backoff_ms: int = 50
    reconnect_backoff_max_ms: int = 1000

    def __post_init__(self) -> None:
        acks = self.acks
        if acks == "all":
            object.__setattr__(self, "acks", -1)
        elif acks not in (0, 1, -1):
            raise ValueError(f"acks must be 0, 1, -1 or 'all', not {acks!r}")
        if self.compression_type not in _COMPRESSION:
            raise ValueError(
                f"compression_type must be one of none, gzip, snappy, lz4; not {self.compression_type!r}"
            )
        if self.partitioner not in ("default", "round_robin"):
            raise ValueError("partitioner must be 'default' or 'round_robin'")
        if self.batch_size < 1 or self.max_in_flight_requests_per_connection < 1:
            raise ValueError("batch_size and max_in_flight_requests_per_connection must be positive")


@dataclass(frozen=True)
class RecordMetadata:
    """Where an acknowledged record landed (offset -1 when acks=0)."""

    topic: str
    partition: int
    offset: int


class _Batch:
    """Records for one partition, sent together; its futures complete together."""

    __slots__ = (
        "attempts",
        "base_offset",
        "callbacks",
        "created",
        "deadline",
        "done",
        "error",
        "keys",
        "lock",
        "partition",
        "retry_at",
        "size",
        "topic",
        "values",
    )

    def __init__(self, topic: str, partition: int, delivery_timeout_s: float) -> None:
        self.topic = topic
        self.partition = partition
        self.keys: list[bytes | None] = []
        self.values: list[bytes | None] = []
        self.size = 0
        self.created = time.monotonic()
        self.deadline = self.created + delivery_timeout_s
        self.done = threading.Event()
        self.base_offset = -1
        self.error: BaseException | None = None
        self.callbacks: list[Callable[[], None]] = []
        self.attempts = 0
        self.retry_at = 0.0
        self.lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.values)

    def _finish(self) -> None:
        with self.lock:
            self.done.set()
            callbacks, self.callbacks = self.callbacks, []
        for cb in callbacks:
            try:
                cb()
            except Exception:  # a user callback must not break the sender
                log.exception("producer callback failed")

    def complete(self, base_offset: int) -> None:
        self.base_offset = base_offset
        self._finish()

    def fail(self, error: BaseException) -> None:
        self.error = error
        self._finish()


class FutureRecordMetadata:
    """The eventual :class:`RecordMetadata` of one sent record."""

    __slots__ = ("_batch", "_error", "_index")

    def __init__(self, batch: _Batch | None, index: int, error: BaseException | None = None) -> None:
        self._batch = batch
        self._index = index
        self._error = error

    def done(self) -> bool:
        return self._batch is None or self._batch.done.is_set()

    def exception(self, timeout: float | None = None) -> BaseException | None:
        if self._batch is None:
            return self._error
        if not self._batch.done.wait(timeout):
            raise KafkaTimeoutError(f"record not acknowledged within {timeout}s")
        return self._batch.error

    def get(self, timeout: float | None = None) -> RecordMetadata:
        """Block until acknowledged; raise the send's error if it failed."""
        error = self.exception(timeout)
        if error is not None:
            raise error
        assert self._batch is not None
        b = self._batch
        return RecordMetadata(b.topic, b.partition, b.base_offset + self._index if b.base_offset >= 0 else -1)

    result = get

    def add_callback(self, fn: Callable[[RecordMetadata], object]) -> FutureRecordMetadata:
        """Call ``fn(metadata)`` on success (in the client's I/O thread, or now if done)."""
        return self._add(lambda: self.exception(0) is None and fn(self.get(0)))

    def add_errback(self, fn: Callable[[BaseException], object]) -> FutureRecordMetadata:
        """Call ``fn(exception)`` on failure."""
        return self._add(lambda: (e := self.exception(0)) is not None and fn(e))

    def _add(self, cb: Callable[[], object]) -> FutureRecordMetadata:
        batch = self._batch
        if batch is not None:
            with batch.lock:
                if not batch.done.is_set():
                    batch.callbacks.append(cb)  # type: ignore[arg-type]
                    return self
        cb()
        return self


@dataclass
class _Accumulator:
    """State shared between callers' threads and the sender (guarded by ``lock``)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    space: threading.Condition = field(init=False)
    open: dict[tuple[str, int], _Batch] = field(default_factory=dict)
    ready: deque[_Batch] = field(default_factory=deque)
    unfinished: set[_Batch] = field(default_factory=set)
    buffered: int = 0
    flushing: int = 0
    sender_idle: bool = False

    def __post_init__(self) -> None:
        self.space = threading.Condition(self.lock)


class Producer:
    """A Kafka producer.  ``Producer(bootstrap_servers="127.0.0.1:9092", acks=1, linger_ms=5)``."""

    def __init__(self, bootstrap_servers: str | list[str] = "127.0.0.1:9092", **config: Any) -> None:
        unknown = set(config) - {f.name for f in fields(ProducerConfig)}
        if unknown:
            raise TypeError(f"unknown producer settings: {', '.join(sorted(unknown))}")
        self.config = ProducerConfig(bootstrap_servers=bootstrap_servers, **config)
        self._partitioner = (
            DefaultPartitioner() if self.config.partitioner == "default" else RoundRobinPartitioner()
        )
        self._acc = _Accumulator()
        self._partition_counts: dict[str, int] = {}
        self._closed = False
        self._io = IoThread("hmb-producer-io")
        self._wake: trio.Event | None = None
        self._stopping = False
        cfg = self.config
        self._cluster_config = cluster_config_of(cfg)
        self._cluster: Cluster = self._io.run(self._start)

    async def _start(self) -> Cluster:
        assert self._io.nursery is not None
        cluster = Cluster(self._cluster_config, self._io.nursery)
        self._wake = trio.Event()
        self._io.nursery.start_soon(self._sender, cluster)
        return cluster

    # ---------------------------------------------------------------- caller side

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def partitions_for(self, topic: str) -> set[int]:
        """The partition ids of ``topic`` (fetching metadata, creating it if the broker auto-creates)."""
        return set(range(self._partitions(topic)))

    def _partitions(self, topic: str) -> int:
        n = self._partition_counts.get(topic)
        if n is None:
            timeout = self.config.max_block_ms / 1000

            async def lookup() -> int:
                return (await self._cluster.topic(topic, timeout_s=timeout)).partitions

            n = self._partition_counts[topic] = self._io.run(lookup)
        return n

    def send(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int | None = None,
    ) -> FutureRecordMetadata:
        """Queue a record; the future completes when the broker acknowledges it.

        Blocks only to fetch metadata for a topic not seen before, or when
        ``buffer_memory`` is full (both up to ``max_block_ms``).
        """
        if self._closed:
            raise IllegalStateError("send() after close()")
        cfg = self.config
        if cfg.key_serializer is not None and key is not None:
            key = cfg.key_serializer(key)
        if cfg.value_serializer is not None and value is not None:
            value = cfg.value_serializer(value)
        size = (
            _MAGIC0_OVERHEAD + (len(key) if key is not None else 0) + (len(value) if value is not None else 0)
        )
        if size > cfg.max_request_size:
            return FutureRecordMetadata(
                None,
                0,
                error_for(ErrorCode.MESSAGE_TOO_LARGE)(
                    f"record of {size} bytes exceeds max_request_size={cfg.max_request_size}"
                ),
            )
        n = self._partitions(topic)
        acc = self._acc
        with acc.lock:
            if partition is None:
                partition = self._partitioner(topic, key, n)
            elif not 0 <= partition < n:
                return FutureRecordMetadata(
                    None,
                    0,
                    error_for(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)(
                        f"{topic} has {n} partitions, there is no partition {partition}"
                    ),
                )
            if acc.buffered + size > cfg.buffer_memory:
                self._wait_for_space(size)
            tp = (topic, partition)
            batch = acc.open.get(tp)
            if batch is None or (batch.size + size > cfg.batch_size and len(batch)):
                if batch is not None:
                    self._close_batch(tp, batch, n)
                batch = acc.open[tp] = _Batch(topic, partition, cfg.delivery_timeout_ms / 1000)
                acc.unfinished.add(batch)
            index = len(batch.values)
            batch.keys.append(key)
            batch.values.append(value)
            batch.size += size
            acc.buffered += size
            if batch.size >= cfg.batch_size:
                self._close_batch(tp, batch, n)
            elif acc.sender_idle and (cfg.linger_ms == 0 or index == 0):
                # an idle sender must learn of a new batch to time its linger
                acc.sender_idle = False
                self._io.call_soon(self._wakeup)
        return FutureRecordMetadata(batch, index)

    def _close_batch(self, tp: tuple[str, int], batch: _Batch, partitions: int) -> None:
        """Move a batch from open to ready (lock held)."""
        acc = self._acc
        if acc.open.get(tp) is batch:
            del acc.open[tp]
        acc.ready.append(batch)
        self._partitioner.batch_sent(batch.topic, batch.partition, partitions)
        if acc.sender_idle:
            acc.sender_idle = False
            self._io.call_soon(self._wakeup)

    def _wait_for_space(self, size: int) -> None:
        deadline = time.monotonic() + self.config.max_block_ms / 1000
        acc = self._acc
        while acc.buffered + size > self.config.buffer_memory:
            if acc.sender_idle:
                acc.sender_idle = False
                self._io.call_soon(self._wakeup)
            if not acc.space.wait(max(0.0, deadline - time.monotonic())):
                raise KafkaTimeoutError(f"buffer_memory full for {self.config.max_block_ms} ms")

    def flush(self, timeout: float | None = None) -> None:
        """Send everything queued and wait until every record is acknowledged or failed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        acc = self._acc
        with acc.lock:
            acc.flushing += 1
            pending = list(acc.unfinished)
            acc.sender_idle = False
        self._io.call_soon(self._wakeup)
        try:
            for batch in pending:
                remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
                if not batch.done.wait(remaining):
                    raise KafkaTimeoutError(f"flush did not finish within {timeout}s")
        finally:
            with acc.lock:
                acc.flushing -= 1

    def close(self, timeout: float | None = None) -> None:
        """Flush, then stop the I/O thread.  Records still unsent after ``timeout`` fail."""
        if self._closed:
            return
        try:
            self.flush(timeout)
        except KafkaTimeoutError:
            log.warning("producer closed with records still unacknowledged")
        finally:
            self._closed = True
            self._stopping = True
            self._io.call_soon(self._wakeup)
            with self._acc.lock:
                leftovers = list(self._acc.unfinished)
            for batch in leftovers:
                if not batch.done.is_set():
                    batch.fail(IllegalStateError("producer closed before the record was sent"))
            try:
                self._io.run(self._cluster.close)
            except RuntimeError:
                pass
            self._io.close()

    # ---------------------------------------------------------------- I/O thread side

    def _wakeup(self) -> None:
        if self._wake is not None:
            self._wake.set()

    def _drain(self) -> tuple[list[_Batch], float | None]:
        """Batches to send now, and when the next open batch's linger expires."""
        now = time.monotonic()
        linger = self.config.linger_ms / 1000
        acc = self._acc
        with acc.lock:
            out = [b for b in acc.ready if b.retry_at <= now]
            acc.ready = deque(b for b in acc.ready if b.retry_at > now)
            next_at: float | None = min((b.retry_at for b in acc.ready), default=None)
            for tp, batch in list(acc.open.items()):
                if acc.flushing or self._stopping or now - batch.created >= linger:
                    self._close_batch(tp, batch, self._partition_counts.get(batch.topic, 1))
                    acc.ready.pop()
                    out.append(batch)
                else:
                    at = batch.created + linger
                    next_at = at if next_at is None else min(next_at, at)
            if not out:
                acc.sender_idle = True
        return out, next_at

    async def _sender(self, cluster: Cluster) -> None:
        limits: dict[int, trio.Semaphore] = {}
        async with trio.open_nursery() as nursery:
            while not (self._stopping and not self._acc.unfinished):
                batches, next_at = self._drain()
                if not batches:
                    assert self._wake is not None
                    timeout = 1.0 if next_at is None else max(0.0, next_at - time.monotonic())
                    with trio.move_on_after(timeout):
                        await self._wake.wait()
                    self._wake = trio.Event()
                    continue
                by_leader: dict[int, list[_Batch]] = {}
                leaders: dict[str, list[int] | KafkaError] = {}
                for batch in batches:
                    # one metadata lookup per topic per round: with the broker down, each
                    # lookup waits out its timeout, which must not be paid per batch
                    if batch.topic not in leaders:
                        try:
                            leaders[batch.topic] = (await cluster.topic(batch.topic, timeout_s=5.0)).leaders
                        except KafkaError as exc:
                            leaders[batch.topic] = exc
                    found = leaders[batch.topic]
                    if isinstance(found, KafkaError):
                        self._retry_or_fail(batch, found)
                    elif batch.partition >= len(found):
                        self._retry_or_fail(
                            batch,
                            error_for(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)(
                                f"{batch.topic} has no partition {batch.partition}"
                            ),
                        )
                    else:
                        by_leader.setdefault(found[batch.partition], []).append(batch)
                for leader, group in by_leader.items():
                    sem = limits.setdefault(
                        leader, trio.Semaphore(self.config.max_in_flight_requests_per_connection)
                    )
                    for request in self._split(group):
                        # Written here, in order: batches of one partition reach the broker in
                        # the order they were filled.  Only the wait for the answer is a task.
                        await sem.acquire()
                        pending = await self._write_request(cluster, leader, request, sem)
                        if pending is not None:
                            nursery.start_soon(self._await_response, cluster, pending, request, sem)

    def _split(self, batches: list[_Batch]) -> list[list[_Batch]]:
        """Group batches into requests: at most max_request_size bytes and one batch per
        partition each (answers are per partition), keeping each partition's order."""
        out: list[list[_Batch]] = [[]]
        size = 0
        seen: set[tuple[str, int]] = set()
        for b in batches:
            tp = (b.topic, b.partition)
            if out[-1] and (size + b.size > self.config.max_request_size or tp in seen):
                out.append([])
                size = 0
                seen = set()
            out[-1].append(b)
            seen.add(tp)
            size += b.size
        return out

    def _build(self, batch: _Batch) -> bytes:
        builder = MessageSetBuilder(0, _COMPRESSION[self.config.compression_type])
        append = builder.append
        for key, value in zip(batch.keys, batch.values, strict=True):
            append(key, value)
        return builder.build()

    async def _write_request(
        self, cluster: Cluster, leader: int, batches: list[_Batch], sem: trio.Semaphore
    ) -> tuple[BrokerConnection, Any] | None:
        """Write one Produce request; returns what to wait on (None when done or failed)."""
        topics: dict[str, list[dict[str, Any]]] = {}
        for b in batches:
            b.attempts += 1
            topics.setdefault(b.topic, []).append({"index": b.partition, "records": self._build(b)})
        body = {
            "acks": self.config.acks,
            "timeout_ms": self.config.request_timeout_ms,
            "topic_data": [{"name": t, "partition_data": parts} for t, parts in topics.items()],
        }
        try:
            conn = await cluster.connection(leader)
            if self.config.acks == 0:
                await conn.send(ApiKey.PRODUCE, 0, body, expect_response=False)
                for b in batches:
                    self._finished(b, -1, None)
                sem.release()
                return None
            return conn, await conn.send(ApiKey.PRODUCE, 0, body)
        except (KafkaConnectionError, KafkaTimeoutError) as exc:
            self._connection_failed(cluster, batches, exc)
            sem.release()
            return None

    def _connection_failed(self, cluster: Cluster, batches: list[_Batch], exc: BaseException) -> None:
        for b in batches:
            cluster.invalidate(b.topic)
            self._retry_or_fail(b, exc)

    async def _await_response(
        self,
        cluster: Cluster,
        pending: tuple[BrokerConnection, Any],
        batches: list[_Batch],
        sem: trio.Semaphore,
    ) -> None:
        conn, handle = pending
        try:
            try:
                response = await conn.wait(handle)
            except (KafkaConnectionError, KafkaTimeoutError) as exc:
                self._connection_failed(cluster, batches, exc)
                return
            results = {(t.name, p.index): p for t in response.responses for p in t.partition_responses}
            for b in batches:
                r = results.get((b.topic, b.partition))
                if r is None:
                    self._retry_or_fail(b, KafkaConnectionError("broker did not answer for this partition"))
                elif r.error_code:
                    error = error_for(r.error_code)(f"producing to {b.topic}-{b.partition}")
                    if r.error_code in (
                        ErrorCode.NOT_LEADER_OR_FOLLOWER,
                        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                        ErrorCode.LEADER_NOT_AVAILABLE,
                    ):
                        cluster.invalidate(b.topic)
                    self._retry_or_fail(b, error)
                else:
                    self._finished(b, r.base_offset, None)
        finally:
            sem.release()

    def _retry_or_fail(self, batch: _Batch, error: BaseException) -> None:
        cfg = self.config
        now = time.monotonic()
        if (
            getattr(error, "retriable", False)
            and batch.attempts <= cfg.retries
            and not self._stopping
            and now + cfg.retry_backoff_ms / 1000 < batch.deadline
        ):
            log.debug("retrying %s-%d after %s", batch.topic, batch.partition, error)
            batch.retry_at = now + cfg.retry_backoff_ms / 1000
            with self._acc.lock:
                self._acc.ready.append(batch)
            self._wakeup()
            return
        self._finished(batch, -1, error)

    def _finished(self, batch: _Batch, base_offset: int, error: BaseException | None) -> None:
        acc = self._acc
        with acc.lock:
            acc.unfinished.discard(batch)
            acc.buffered -= batch.size
            acc.space.notify_all()
        if error is None:
            batch.complete(base_offset)
        else:
            batch.fail(error)
