"""The producer's batches: what ``send()`` fills, the sender ships and futures wait on.

Beside :mod:`hmb_client.producer.producer`, so the producer module holds the
control flow (config, ``send()``, the sender loop) and this one the data:

* :class:`ProducerBatch` -- one partition's records, sent together and
  acknowledged together.  Keys, values and timestamps are kept as parallel
  lists (appending to three lists is the cheapest per-record work ``send()``
  can do); headers only once a record of the batch has some.
* :func:`as_bytes`, :func:`check_headers` -- the checks ``send()`` makes in the
  caller's thread;
* :func:`encode_batch` -- the wire bytes for the message format the leader
  speaks: RecordBatch v2 (magic 2) for Produce v3+, MessageSet magic 1 for
  Produce v2, magic 0 below.  The bytes are kept on the batch, so a retry
  resends exactly what was sent (an idempotent producer's retry must carry
  the same producer id, epoch and base sequence; the encoding is stable).
* :class:`FutureRecordMetadata` / :class:`RecordMetadata` -- kafka-python's
  names for the result of ``send()``.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from hmb_client.errors import KafkaTimeoutError, UnsupportedVersionError, error_for
from kproto import ErrorCode
from kproto.records import Compression, MessageSetBuilder, RecordBatchBuilder

log = logging.getLogger(__name__)

Headers = list[tuple[str, bytes | None]]
_NO_HEADERS: tuple[()] = ()
_order = itertools.count()  # creation order: a partition's batches sort by it


@dataclass(frozen=True)
class RecordMetadata:
    """Where an acknowledged record landed (offset -1 when acks=0).

    ``timestamp`` is the record's CreateTime, or the broker's LogAppendTime
    when the topic uses that (Produce v2+ reports it).
    """

    topic: str
    partition: int
    offset: int
    timestamp: int = -1


def magic_for_produce(version: int) -> int:
    """The message format a Produce version carries (Kafka: v3+ RecordBatch v2, v2 magic 1)."""
    return 2 if version >= 3 else 1 if version == 2 else 0


class ProducerBatch:
    """Records for one partition, sent together; its futures complete together."""

    __slots__ = (
        "attempts",
        "base_offset",
        "base_sequence",
        "callbacks",
        "created",
        "deadline",
        "done",
        "encoded",
        "error",
        "headers",
        "keys",
        "lock",
        "log_append_time",
        "order",
        "partition",
        "producer_epoch",
        "producer_id",
        "retry_at",
        "size",
        "timestamps",
        "topic",
        "transactional",
        "values",
    )

    def __init__(self, topic: str, partition: int, delivery_timeout_s: float) -> None:
        self.topic = topic
        self.partition = partition
        self.keys: list[bytes | None] = []
        self.values: list[bytes | None] = []
        self.timestamps: list[int] = []
        self.headers: list[Headers | tuple[()]] | None = None  # filled once a record has headers
        self.size = 0
        self.created = time.monotonic()
        self.deadline = self.created + delivery_timeout_s
        self.order = next(_order)
        self.done = threading.Event()
        self.base_offset = -1
        self.log_append_time = -1
        self.error: BaseException | None = None
        self.callbacks: list[Callable[[], None]] = []
        self.attempts = 0
        self.retry_at = 0.0
        self.lock = threading.Lock()
        # Idempotence (kafka's "producer state" of the batch); -1: not assigned yet.
        self.producer_id = -1
        self.producer_epoch = -1
        self.base_sequence = -1
        self.transactional = False  # part of a transaction (a transactional producer's batch)
        self.encoded: tuple[int, bytes] | None = None  # (magic, bytes) as last sent

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        seq = f" seq {self.base_sequence}" if self.base_sequence >= 0 else ""
        return f"<ProducerBatch {self.topic}-{self.partition} {len(self)} records{seq}>"

    @property
    def tp(self) -> tuple[str, int]:
        return (self.topic, self.partition)

    def add_headers(self, index: int, headers: Headers) -> None:
        """Attach headers to record ``index`` (the lists are aligned lazily)."""
        if self.headers is None:
            self.headers = [_NO_HEADERS] * index
        self.headers.append(headers)

    def stamp(self, producer_id: int, producer_epoch: int, base_sequence: int) -> None:
        """Give the batch its idempotence fields (drops bytes encoded without them)."""
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence
        self.encoded = None

    def _finish(self) -> None:
        with self.lock:
            self.done.set()
            callbacks, self.callbacks = self.callbacks, []
        for cb in callbacks:
            try:
                cb()
            except Exception:  # a user callback must not break the sender
                log.exception("producer callback failed")

    def complete(self, base_offset: int, log_append_time: int = -1) -> None:
        self.base_offset = base_offset
        self.log_append_time = log_append_time
        self._finish()

    def fail(self, error: BaseException) -> None:
        self.error = error
        self._finish()


def encode_batch(batch: ProducerBatch, magic: int, compression: Compression) -> bytes:
    """The batch as a record set of ``magic``; the same bytes again for a retry.

    Raises UnsupportedVersionError when the records need what the format
    lacks: headers before magic 2, zstd before magic 2 (Kafka's rules).
    """
    cached = batch.encoded
    if cached is not None and cached[0] == magic:
        return cached[1]
    keys, values, stamps = batch.keys, batch.values, batch.timestamps
    if magic == 2:
        builder = RecordBatchBuilder(
            compression, batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.transactional
        )
        builder.extend(keys, values, stamps, batch.headers)
        data = builder.build()
    else:
        if batch.headers is not None and any(batch.headers):
            raise UnsupportedVersionError(
                f"records with headers need RecordBatch v2 (Produce v3+); the leader of "
                f"{batch.topic}-{batch.partition} speaks message format {magic}"
            )
        if compression == Compression.ZSTD:
            raise error_for(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE)(
                f"zstd needs RecordBatch v2 (Produce v3+); the leader of {batch.topic}-{batch.partition} "
                f"speaks message format {magic}"
            )
        legacy = MessageSetBuilder(magic, compression)
        append = legacy.append
        if magic == 0:
            for key, value in zip(keys, values, strict=True):
                append(key, value)
        else:
            for key, value, ts in zip(keys, values, stamps, strict=True):
                append(key, value, ts)
        data = legacy.build()
    batch.encoded = (magic, data)
    return data


def as_bytes(name: str, data: object) -> bytes:
    """A key or value as bytes, or TypeError in the caller's thread (kafka-python raises
    there too): found only when the I/O thread encodes, it failed a whole batch."""
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    if isinstance(data, bytes):
        return data
    raise TypeError(
        f"{name} must be bytes, bytearray, memoryview or None, not {type(data).__name__} "
        f"(or give the producer a {name}_serializer)"
    )


def check_headers(headers: Headers) -> int:
    """Validate kafka-python-style headers; their size for batching purposes."""
    size = 1
    for header in headers:
        if not isinstance(header, tuple) or len(header) != 2 or not isinstance(header[0], str):
            raise TypeError(f"a header must be a (str, bytes) pair, not {header!r}")
        value = header[1]
        if value is not None and not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(f"header {header[0]!r}: value must be bytes or None, not {type(value).__name__}")
        size += len(header[0]) + (len(value) if value is not None else 0) + 2
    return size


class FutureRecordMetadata:
    """The eventual :class:`RecordMetadata` of one sent record."""

    __slots__ = ("_batch", "_error", "_index")

    def __init__(self, batch: ProducerBatch | None, index: int, error: BaseException | None = None) -> None:
        self._batch = batch
        self._index = index
        self._error = error

    def done(self) -> bool:
        return self._batch is None or self._batch.done.is_set()

    def exception(self, timeout: float | None = None) -> BaseException | None:
        batch = self._batch
        if batch is None:
            return self._error
        # is_set() first: Event.wait takes the event's lock even when it is set, and
        # callers that count acknowledgements ask every record's future
        if not batch.done.is_set() and not batch.done.wait(timeout):
            raise KafkaTimeoutError(f"record not acknowledged within {timeout}s")
        return batch.error

    def get(self, timeout: float | None = None) -> RecordMetadata:
        """Block until acknowledged; raise the send's error if it failed."""
        error = self.exception(timeout)
        if error is not None:
            raise error
        assert self._batch is not None
        b = self._batch
        i = self._index
        offset = b.base_offset + i if b.base_offset >= 0 else -1
        ts = b.log_append_time if b.log_append_time >= 0 else b.timestamps[i]
        return RecordMetadata(b.topic, b.partition, offset, ts)

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
class Accumulator:
    """State shared between callers' threads and the sender (guarded by ``lock``)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    space: threading.Condition = field(init=False)
    open: dict[tuple[str, int], ProducerBatch] = field(default_factory=dict)
    ready: deque[ProducerBatch] = field(default_factory=deque)
    unfinished: set[ProducerBatch] = field(default_factory=set)
    buffered: int = 0
    #: batches closed (full or lingered) and not yet acknowledged or failed
    closed: int = 0
    flushing: int = 0
    sender_idle: bool = False

    def __post_init__(self) -> None:
        self.space = threading.Condition(self.lock)
