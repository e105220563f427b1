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

The message format follows the Produce version negotiated with each
leader: RecordBatch v2 (headers, zstd, idempotence) from Produce v3, magic 1
at v2, magic 0 below (a Kafka 0.8 broker); from v13 topics go by id when the
metadata gave every id (:mod:`hmb_client.producer.topic_ids`).  Records and futures live in
:mod:`hmb_client.producer.batches`, the idempotent producer's sequence bookkeeping in
:mod:`hmb_client.producer.idempotence`, transactions in :mod:`hmb_client.producer.transactions`.

Config names and defaults follow kafka-python (Kafka's Java names in
snake_case): see :class:`hmb_client.producer.config.ProducerConfig`.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import fields
from functools import partial
from typing import Any

import trio

from hmb_client.cluster import Cluster, cluster_config_of
from hmb_client.errors import (
    IllegalStateError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    UnsupportedVersionError,
    error_for,
)
from hmb_client.producer.batches import (
    Accumulator,
    FutureRecordMetadata,
    Headers,
    ProducerBatch,
    RecordMetadata,
    as_bytes,
    check_headers,
    encode_batch,
    magic_for_produce,
)
from hmb_client.producer.config import COMPRESSION, RACK_ACKS, ProducerConfig
from hmb_client.producer.idempotence import FAIL, RETRY, SUCCESS, Idempotence
from hmb_client.producer.in_flight import InFlight
from hmb_client.producer.partitioner import DefaultPartitioner, RoundRobinPartitioner
from hmb_client.producer.topic_ids import acks_decoder, produce_version
from hmb_client.producer.transactions import TransactionCalls, TransactionManager, transaction_manager
from hmb_client.runtime import IoThread
from kproto import ApiKey, ErrorCode, KprotoError
from kproto.produce_fast import encode_produce_request

__all__ = ["FutureRecordMetadata", "Producer", "ProducerConfig", "RecordMetadata"]

log = logging.getLogger(__name__)

_time_ns = time.time_ns
_new_future = object.__new__
_TopicData = list[tuple[str | bytes, list[tuple[int, bytes | None]]]]  # records by topic name or id
_MAGIC0_OVERHEAD = 26  # offset, size, crc, magic, attributes, key and value lengths


class Producer(TransactionCalls):
    """A Kafka producer.  ``Producer(bootstrap_servers="127.0.0.1:9092", acks=1, linger_ms=5)``."""

    def __new__(cls, *args: Any, **config: Any) -> Producer:
        if cls is Producer and config.get("acks") in ("rack", RACK_ACKS):
            from hmb_client.rack.producer import RackProducer  # rAck: a producer with a monitor

            cls = RackProducer
        return super().__new__(cls)

    def __init__(self, bootstrap_servers: str | list[str] = "127.0.0.1:9092", **config: Any) -> None:
        unknown = set(config) - {f.name for f in fields(ProducerConfig)}
        if unknown:
            raise TypeError(f"unknown producer settings: {', '.join(sorted(unknown))}")
        if config.get("transactional_id"):
            config.setdefault("enable_idempotence", True)  # a transactional producer is idempotent
        if config.get("enable_idempotence"):
            config.setdefault("acks", -1)  # kafka-python: an explicit other value is an error
        self.config = ProducerConfig(bootstrap_servers=bootstrap_servers, **config)
        self._idempotence = Idempotence() if self.config.enable_idempotence else None
        self._txn = transaction_manager(self.config, self._idempotence)
        self._partitioner = (
            DefaultPartitioner() if self.config.partitioner == "default" else RoundRobinPartitioner()
        )
        self._acc = Accumulator()
        self._partition_counts: dict[str, int] = {}
        self._closed = False
        self._io = IoThread("hmb-producer-io")
        self._wake: trio.Event | None = None
        self._stopping = False
        cfg = self.config
        # send()'s settings as plain attributes: it runs once per record, and a
        # frozen dataclass's attribute costs a lookup more each time
        self._key_serializer = cfg.key_serializer
        self._value_serializer = cfg.value_serializer
        self._max_request_size = cfg.max_request_size
        self._buffer_memory = cfg.buffer_memory
        self._batch_size = cfg.batch_size
        self._delivery_timeout_s = cfg.delivery_timeout_ms / 1000
        self._linger_zero = cfg.linger_ms == 0
        self._backlog_per_partition = 2 * cfg.max_in_flight_requests_per_connection
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
        headers: Headers | None = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
    ) -> FutureRecordMetadata:
        """Queue a record; the future completes when the broker acknowledges it.

        ``headers`` is a list of ``(str, bytes)`` pairs (kafka-python's form);
        they need a leader that speaks RecordBatch v2 (Produce v3+), as does
        zstd, else the record's batch fails with UnsupportedVersionError.
        ``timestamp_ms`` defaults to now (CreateTime; unused by magic 0).

        Blocks only to fetch metadata for a topic not seen before, or when
        ``buffer_memory`` is full (both up to ``max_block_ms``).
        """
        if self._closed:
            raise IllegalStateError("send() after close()")
        if self._txn is not None:
            self._txn.check_open()
        if key is not None:
            if self._key_serializer is not None:
                key = self._key_serializer(key)
            if type(key) is not bytes:
                key = as_bytes("key", key)
        if value is not None:
            if self._value_serializer is not None:
                value = self._value_serializer(value)
            if type(value) is not bytes:
                value = as_bytes("value", value)
        size = _MAGIC0_OVERHEAD
        if key is not None:
            size += len(key)
        if value is not None:
            size += len(value)
        if headers:
            size += check_headers(headers)
        if timestamp_ms is None:
            timestamp_ms = _time_ns() // 1_000_000
        if size > self._max_request_size:
            return FutureRecordMetadata(
                None,
                0,
                error_for(ErrorCode.MESSAGE_TOO_LARGE)(
                    f"record of {size} bytes exceeds max_request_size={self._max_request_size}"
                ),
            )
        n = self._partition_counts.get(topic) or self._partitions(topic)
        acc = self._acc
        # acquire/release rather than ``with``: half the cost (~170 against ~390 ns
        # measured here), and send() pays it for every record
        acc.lock.acquire()
        try:
            if partition is None:
                # every partitioner picks 0 of 1 (murmur2 % 1, sticky, round robin)
                partition = 0 if n == 1 else self._partitioner(topic, key, n)
            elif not 0 <= partition < n:
                return FutureRecordMetadata(
                    None,
                    0,
                    error_for(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)(
                        f"{topic} has {n} partitions, there is no partition {partition}"
                    ),
                )
            if acc.buffered + size > self._buffer_memory:
                self._wait_for_space(size)
            tp = (topic, partition)
            batch = acc.open.get(tp)
            if batch is None or (batch.size + size > self._batch_size and batch.values):
                if batch is not None:
                    self._close_batch(tp, batch, n)
                batch = acc.open[tp] = ProducerBatch(topic, partition, self._delivery_timeout_s)
                acc.unfinished.add(batch)
            values = batch.values
            index = len(values)
            batch.keys.append(key)
            values.append(value)
            batch.timestamps.append(timestamp_ms)
            if headers:
                batch.add_headers(index, headers)
            elif batch.headers is not None:
                batch.headers.append(())
            batch.size += size
            acc.buffered += size
            if batch.size >= self._batch_size:
                self._close_batch(tp, batch, n)
            elif acc.sender_idle and (index == 0 or self._linger_zero):
                # an idle sender must learn of a new batch to time its linger
                acc.sender_idle = False
                self._io.call_soon(self._wakeup)
            if acc.closed > self._backlog_per_partition * n:
                self._wait_for_sender(n)
        finally:
            acc.lock.release()
        # the future without a call to __init__: ~170 against ~290 ns, per record
        future = _new_future(FutureRecordMetadata)
        future._batch = batch
        future._index = index
        future._error = None
        return future

    def _close_batch(self, tp: tuple[str, int], batch: ProducerBatch, partitions: int) -> None:
        """Move a batch from open to ready (lock held)."""
        acc = self._acc
        if acc.open.get(tp) is batch:
            del acc.open[tp]
        acc.ready.append(batch)
        acc.closed += 1
        self._partitioner.batch_sent(batch.topic, batch.partition, partitions)
        if acc.sender_idle:
            acc.sender_idle = False
            self._io.call_soon(self._wakeup)

    def _wait_for_sender(self, partitions: int) -> None:
        """Let the sender catch up when full batches pile up (lock held).

        Kafka's only limit is ``buffer_memory``; in Python it is not enough:
        a caller looping in ``send()`` holds the GIL, and the I/O thread gets
        it back only at the interpreter's switch interval, so acknowledgements
        crawl while tens of megabytes queue up (measured: 12k msg/s during the
        loop, 120k msg/s once it stopped).  Waiting here, on a condition that
        releases the GIL, until the backlog of full batches is down to what
        the in-flight requests can take, keeps both threads moving.  Bounded
        by ``max_block_ms`` like the buffer wait.
        """
        acc = self._acc
        low = self.config.max_in_flight_requests_per_connection * partitions
        deadline = time.monotonic() + self.config.max_block_ms / 1000
        while acc.closed > low:
            if acc.sender_idle:
                acc.sender_idle = False
                self._io.call_soon(self._wakeup)
            if not acc.space.wait(max(0.0, deadline - time.monotonic())):
                raise KafkaTimeoutError(f"sender made no progress for {self.config.max_block_ms} ms")

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

    def _drain(self) -> tuple[list[ProducerBatch], float | None]:
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

    def _hold(self, batches: list[ProducerBatch]) -> None:
        """Put drained batches back, in front (the idempotent producer holds some back)."""
        if batches:
            with self._acc.lock:
                self._acc.ready.extendleft(reversed(batches))

    def _still_in_order(self, batches: list[ProducerBatch]) -> list[ProducerBatch]:
        """The batches selected earlier that may still be written now; the others go back.

        Selection happens before the wait for an in-flight permit, and a broken
        connection's requests are marked lost only when their tasks run, which
        may be during that wait.  A batch written then, ahead of the lost ones'
        retries, pushed the oldest of them out of the broker's five-batch memory:
        its retry got OUT_OF_ORDER_SEQUENCE_NUMBER, was taken for "never
        appended", and was written again under a new producer id (duplicates
        under connection resets, found by the reliability study).
        """
        idem = self._idempotence
        assert idem is not None
        ok: list[ProducerBatch] = []
        held: list[ProducerBatch] = []
        for b in batches:
            (ok if idem.may_write(b) else held).append(b)
        for b in held:
            idem.not_sent(b)
        self._hold(held)
        return ok

    async def _idempotent_selection(
        self, cluster: Cluster, batches: list[ProducerBatch]
    ) -> list[ProducerBatch]:
        """The drained batches that may go now (stamped); the rest are held or failed."""
        idem = self._idempotence
        assert idem is not None
        if self._txn is not None:
            return await self._transactional_selection(cluster, batches, self._txn)
        if not idem.has_id:
            try:
                await idem.init_producer_id(await cluster.any_connection())
            except UnsupportedVersionError as exc:
                for b in batches:
                    self._finished(b, -1, UnsupportedVersionError(f"enable_idempotence: {exc}"))
                return []
            except KafkaError as exc:
                log.debug("InitProducerId failed: %s", exc)
                for b in batches:
                    self._retry_or_fail(b, exc, force=exc.retriable or isinstance(exc, KafkaConnectionError))
                return []
        send, hold = idem.select(batches)
        self._hold(hold)
        return send

    async def _transactional_selection(
        self, cluster: Cluster, batches: list[ProducerBatch], txn: TransactionManager
    ) -> list[ProducerBatch]:
        """Stamp the batches that may go and add their partitions to the transaction first."""
        idem = self._idempotence
        assert idem is not None
        if not idem.has_id:  # a sequence error lost the epoch: the transaction cannot go on
            for b in batches:
                self._finished(b, -1, KafkaError("the producer lost its epoch: abort the transaction"))
            return []
        send, hold = idem.select(batches)
        self._hold(hold)
        try:
            await txn.add_partitions(cluster, (b.tp for b in send))
        except KafkaError as exc:
            for b in send:
                idem.not_sent(b)
                self._finished(b, -1, exc)
            return []
        for b in send:
            b.transactional = True
        return send

    async def _sender(self, cluster: Cluster) -> None:
        limits: dict[int, InFlight] = {}
        busy_rounds = 0  # rounds in a row that never waited, so never let another task run
        while not (self._stopping and not self._acc.unfinished):
            busy_rounds += 1
            if busy_rounds > _BUSY_ROUNDS:
                busy_rounds = 0
                await trio.lowlevel.checkpoint()
            batches, next_at = self._drain()
            if batches and self._idempotence is not None:
                batches = await self._idempotent_selection(cluster, batches)
                if not batches:
                    with self._acc.lock:
                        self._acc.sender_idle = True  # all held back: send() must wake us
            if not batches:
                assert self._wake is not None
                timeout = 1.0 if next_at is None else max(0.0, next_at - time.monotonic())
                with trio.move_on_after(timeout):
                    await self._wake.wait()
                self._wake = trio.Event()
                busy_rounds = 0
                continue
            by_leader: dict[int, list[ProducerBatch]] = {}
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
                    self._not_sent(batch, found)
                elif batch.partition >= len(found):
                    self._not_sent(
                        batch,
                        error_for(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)(
                            f"{batch.topic} has no partition {batch.partition}"
                        ),
                    )
                else:
                    by_leader.setdefault(found[batch.partition], []).append(batch)
            for leader, group in by_leader.items():
                limit = limits.get(leader)
                if limit is None:
                    limit = limits[leader] = InFlight(self.config.max_in_flight_requests_per_connection)
                for request in self._split(group):
                    # Written here, in order: batches of one partition reach the broker in
                    # the order they were filled.  The answer comes back through a callback.
                    if await limit.acquire():
                        busy_rounds = 0
                    if self._idempotence is not None:
                        request = self._still_in_order(request)
                        if not request:
                            limit.release()
                            continue
                    await self._write_request(cluster, leader, request, limit)

    def _split(self, batches: list[ProducerBatch]) -> list[list[ProducerBatch]]:
        """Group batches into requests: at most max_request_size bytes and one batch per
        partition each (answers are per partition), keeping each partition's order."""
        out: list[list[ProducerBatch]] = [[]]
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

    def _encode(self, batches: list[ProducerBatch], version: int, ids: dict[str, bytes] | None) -> _TopicData:
        """Partition data for a Produce request, by topic id where ``ids`` are given (v13);
        batches that cannot be encoded fail here."""
        magic = magic_for_produce(version)
        codec = COMPRESSION[self.config.compression_type]
        topics: dict[str | bytes, list[tuple[int, bytes | None]]] = {}
        for b in list(batches):
            if self._idempotence is not None and magic < 2:
                error: Exception | None = UnsupportedVersionError(
                    f"enable_idempotence needs Produce v3+ (RecordBatch v2); the leader of "
                    f"{b.topic}-{b.partition} serves v{version}"
                )
            else:
                try:
                    data = encode_batch(b, magic, codec)
                    error = None
                except (KafkaError, KprotoError) as exc:  # fail the batch, never the sender
                    error = exc
            if error is not None:
                batches.remove(b)
                self._not_sent(b, error)
                continue
            b.attempts += 1
            topics.setdefault(b.topic if ids is None else ids[b.topic], []).append((b.partition, data))
        return list(topics.items())

    async def _write_request(
        self, cluster: Cluster, leader: int, batches: list[ProducerBatch], limit: InFlight
    ) -> None:
        """Write one Produce request; its answer comes to :meth:`_answered`.

        Framed by :mod:`kproto.produce_fast` (struct) rather than the grammar:
        at 16 KiB batches the grammar's encode and decode were a quarter of
        this thread's time (py-spy), and this thread is the producer's limit.
        """
        try:
            conn = await cluster.connection(leader)
            version = (
                conn.pick(ApiKey.PRODUCE) if self._txn is None else self._txn.version_of(conn, ApiKey.PRODUCE)
            )
            version, ids = produce_version(version, cluster.topics, (b.topic for b in batches))
            topics = self._encode(batches, version, ids)
            if not batches:
                limit.release()
                return
            cfg = self.config
            client_id, acks, timeout_ms = conn.client_id, int(cfg.acks), cfg.request_timeout_ms

            def encode(correlation_id: int) -> bytes:
                return encode_produce_request(
                    version, correlation_id, client_id, acks, timeout_ms, topics, cfg.transactional_id
                )

            if acks == 0 or acks == RACK_ACKS:  # no answer comes: done once written
                await conn.send_encoded(ApiKey.PRODUCE, version, encode, expect_response=False)
                for b in batches:
                    self._finished(b, -1, None)
                limit.release()
                return
            await conn.send_encoded(
                ApiKey.PRODUCE,
                version,
                encode,
                decode=acks_decoder(version, ids),
                on_response=partial(self._answered, cluster, batches, limit),
            )
        except (KafkaConnectionError, KafkaTimeoutError) as exc:
            self._connection_failed(cluster, batches, exc)
            limit.release()

    def _not_sent(self, batch: ProducerBatch, error: BaseException) -> None:
        """A batch drained for sending did not go out (no leader, unencodable, no connection)."""
        if self._idempotence is not None:
            self._idempotence.not_sent(batch)
        self._retry_or_fail(batch, error)

    def _connection_failed(self, cluster: Cluster, batches: list[ProducerBatch], exc: BaseException) -> None:
        for b in batches:
            cluster.invalidate(b.topic)
            if self._idempotence is not None:
                self._idempotence.connection_lost(b)
            self._retry_or_fail(b, exc)

    def _answered(
        self,
        cluster: Cluster,
        batches: list[ProducerBatch],
        limit: InFlight,
        response: Any,
        failure: BaseException | None,
    ) -> None:
        """A Produce request's answer, or why there is none (called by the connection's reader)."""
        idem = self._idempotence
        try:
            if failure is not None:
                if not isinstance(failure, KafkaError):  # an unreadable answer: as if it never came
                    failure = KafkaConnectionError(str(failure))
                self._connection_failed(cluster, batches, failure)
                return
            results = {(a.topic, a.partition): a for a in response}
            for b in batches:
                r = results.get((b.topic, b.partition))
                if r is None:
                    if idem is not None:
                        idem.connection_lost(b)
                    self._retry_or_fail(b, KafkaConnectionError("broker did not answer for this partition"))
                    continue
                code = r.error_code
                verdict = (SUCCESS if not code else FAIL) if idem is None else idem.answered(b, code)
                if verdict == SUCCESS:
                    self._finished(b, r.base_offset if not code else -1, None, r.log_append_time_ms)
                    continue
                message = r.error_message or ""
                error = error_for(code)(f"producing to {b.topic}-{b.partition} {message}".rstrip())
                if code in _REFRESH_CODES:
                    cluster.invalidate(b.topic)
                self._retry_or_fail(b, error, force=verdict == RETRY)
        finally:
            limit.release()
            if idem is not None:
                self._wakeup()  # batches held back for ordering may go now

    def _retry_or_fail(self, batch: ProducerBatch, error: BaseException, *, force: bool = False) -> None:
        cfg = self.config
        now = time.monotonic()
        if (
            (force or getattr(error, "retriable", False))
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

    def _finished(
        self, batch: ProducerBatch, base_offset: int, error: BaseException | None, log_append_time: int = -1
    ) -> None:
        if error is not None and self._idempotence is not None:
            self._idempotence.finished(batch)
        if error is not None and self._txn is not None:
            self._txn.send_failed(error)  # the transaction may no longer commit
        acc = self._acc
        with acc.lock:
            if batch in acc.unfinished:
                acc.unfinished.discard(batch)
                acc.closed -= 1
            acc.buffered -= batch.size
            acc.space.notify_all()
        if error is None:
            batch.complete(base_offset, log_append_time)
        else:
            batch.fail(error)


#: Sender rounds that wrote without ever waiting before it lets other tasks run.
_BUSY_ROUNDS = 8

_REFRESH_CODES = frozenset(
    {
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.UNKNOWN_TOPIC_ID,  # v13: the topic was deleted (maybe made again): a new id
    }
)
