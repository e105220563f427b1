"""Transactional ids' state, persisted in Kafka's internal topic ``__transaction_state``.

Each change of a transactional id's state is appended as one record whose
key and value are Kafka's (``TransactionLogKey``, ``TransactionLogValue``),
so Kafka's tools could read the topic::

    key   (version 0) => version int16, transactional_id string
    value (version 0) => version int16, producer_id int64, producer_epoch int16,
                         transaction_timeout_ms int32, transaction_status int8,
                         transaction_partitions [topic string, partition_ids [int32]] (nullable),
                         transaction_last_update_timestamp_ms int64,
                         transaction_start_timestamp_ms int64

(strings: int16 length then UTF-8; arrays: int32 count, -1 for null.)  An id
that expires is forgotten with a tombstone: its key with a null value.
Kafka writes value version 1 (flexible, tagged fields) only for clients of
its second transaction protocol, which hmb does not serve; a record of
another version is skipped with a warning, never fatal to the start.

A transactional id's records live in partition ``abs(hashCode(id)) %
partitions`` (Java's ``String.hashCode``, as Kafka places them).  Alone the
broker has every partition on disk (one, made by the first transaction) and
reads them all back on start.  In a cluster the topic has
``transaction.state.log.num.partitions`` replicated partitions, a partition
is read back when this broker becomes its leader (:meth:`load` of one
partition), and each write waits, as an ``acks=all`` produce does, until
the in-sync replicas have it (:attr:`TransactionStateLog.replicated`): a
state the coordinator acts on survives the loss of its broker.  A state
change is acted on only once its record is in the log, so an acknowledged
EndTxn survives a crash.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Awaitable, Callable

from hmb.groups.offset_partitions import coordinator_partition
from hmb.log.manager import LogManager
from hmb.log.partition import PartitionLog
from hmb.txn.metadata import TransactionMetadata
from hmb.txn.states import TxnState
from kproto.records import RecordBatchBuilder, read_records

log = logging.getLogger(__name__)

TOPIC = "__transaction_state"
#: How Kafka creates the topic: compacted (an id's last state is kept however old; an expired
#: id's tombstone lets the cleaner forget it), in segments of transaction.state.log.segment.bytes.
TOPIC_CONFIG = {"cleanup.policy": "compact", "segment.bytes": "104857600"}

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_VALUE_HEAD = struct.Struct(">hqhib")  # version, producer id, epoch, timeout, status
_VALUE_TAIL = struct.Struct(">qq")  # last update, start


def _string(text: str) -> bytes:
    raw = text.encode()
    return _I16.pack(len(raw)) + raw


def _read_string(data: bytes, pos: int) -> tuple[str, int]:
    (length,) = _I16.unpack_from(data, pos)
    pos += 2
    if length < 0 or pos + length > len(data):
        raise ValueError("bad string length")
    return data[pos : pos + length].decode(), pos + length


def encode_key(transactional_id: str) -> bytes:
    return _I16.pack(0) + _string(transactional_id)


def decode_key(data: bytes) -> str:
    (version,) = _I16.unpack_from(data, 0)
    if version != 0:
        raise ValueError(f"transaction log key version {version}")
    tid, _ = _read_string(data, 2)
    return tid


def encode_value(meta: TransactionMetadata) -> bytes:
    parts = [
        _VALUE_HEAD.pack(0, meta.producer_id, meta.producer_epoch, meta.timeout_ms, int(meta.state)),
    ]
    if meta.state is TxnState.EMPTY and not meta.partitions:
        parts.append(_I32.pack(-1))  # Kafka writes null for a transaction with no partitions
    else:
        topics = meta.sorted_partitions()
        parts.append(_I32.pack(len(topics)))
        for topic, partitions in topics:
            parts.append(_string(topic) + _I32.pack(len(partitions)))
            parts.append(struct.pack(f">{len(partitions)}i", *partitions))
    parts.append(_VALUE_TAIL.pack(meta.last_update_ms, meta.start_ms))
    return b"".join(parts)


def decode_value(transactional_id: str, data: bytes) -> TransactionMetadata:
    version, pid, epoch, timeout_ms, status = _VALUE_HEAD.unpack_from(data, 0)
    if version != 0:
        raise ValueError(f"transaction log value version {version} is not one hmb reads")
    pos = _VALUE_HEAD.size
    (count,) = _I32.unpack_from(data, pos)
    pos += 4
    partitions: set[tuple[str, int]] = set()
    for _ in range(max(count, 0)):
        topic, pos = _read_string(data, pos)
        (n,) = _I32.unpack_from(data, pos)
        pos += 4
        partitions.update((topic, p) for p in struct.unpack_from(f">{n}i", data, pos))
        pos += 4 * n
    last_update, start = _VALUE_TAIL.unpack_from(data, pos)
    return TransactionMetadata(
        transactional_id,
        pid,
        epoch,
        timeout_ms,
        TxnState(status),
        partitions,
        start_ms=start,
        last_update_ms=last_update,
    )


class NotLeaderError(OSError):
    """This broker does not lead the transactional id's partition (any more): NOT_COORDINATOR."""


class TransactionStateLog:
    """Reads and appends the ``__transaction_state`` partitions.

    The topic is created by the first state change, as Kafka creates it when
    the first transactional producer looks for its coordinator: a broker
    that never sees a transaction has no such topic.  In a cluster the
    topic is made through ZooKeeper by FindCoordinator, never here.
    """

    def __init__(self, logs: LogManager, wall_ms: Callable[[], int]) -> None:
        self.logs = logs
        self.wall_ms = wall_ms
        #: how many partitions the topic has: alone, those on disk (one once made)
        self.partitions = max(1, len(logs.topics.get(TOPIC) or ()))
        #: in a cluster: waits until the in-sync replicas hold the record at ``offset`` of a
        #: partition (OSError when they cannot: too few in sync, no longer leader); None alone
        self.replicated: Callable[[PartitionLog, int], Awaitable[None]] | None = None

    def partition_of(self, transactional_id: str) -> int:
        return coordinator_partition(transactional_id, self.partitions)

    def plog_of(self, transactional_id: str) -> PartitionLog:
        partition = self.partition_of(transactional_id)
        plog = self.logs.get(TOPIC, partition)
        if plog is not None:
            return plog
        if self.replicated is not None:  # in a cluster the topic comes from ZooKeeper
            raise NotLeaderError(f"{TOPIC}-{partition} is not open on this broker")
        return self.logs.create_topic(TOPIC, 1, TOPIC_CONFIG)[0]

    def load(self, partition: int | None = None) -> dict[str, TransactionMetadata]:
        """Every transactional id's last state (tombstoned ids left out), of one ``partition``
        or (``None``) of every partition on disk."""
        out: dict[str, TransactionMetadata] = {}
        if partition is None:
            plogs = list(self.logs.topics.get(TOPIC) or ())
        else:
            one = self.logs.get(TOPIC, partition)
            plogs = [] if one is None else [one]
        for plog in plogs:
            out.update(_read(plog))
        return out

    async def write(self, meta: TransactionMetadata) -> None:
        """Append ``meta``'s state (durably, as any acknowledged record)."""
        await self._append(meta.transactional_id, encode_value(meta))

    async def forget(self, transactional_id: str) -> None:
        """Append the tombstone of an expired id."""
        await self._append(transactional_id, None)

    async def _append(self, transactional_id: str, value: bytes | None) -> None:
        plog = self.plog_of(transactional_id)
        info = await plog.append(_batch(encode_key(transactional_id), value, self.wall_ms()))
        if self.replicated is not None:
            await self.replicated(plog, info.last_offset)


def _read(plog: PartitionLog) -> dict[str, TransactionMetadata]:
    """One partition's transactional ids, last record per key winning."""
    out: dict[str, TransactionMetadata] = {}
    offset = plog.log_start_offset
    while offset < plog.high_watermark:
        with plog.read(offset, 1 << 20, min_one=True) as region:
            if region is None:
                break
            data = region.read()
        records = read_records(data)  # RecordBatch v2 (what is written) and older message sets
        if not records:
            raise RuntimeError(f"cannot read {TOPIC}-{plog.partition} at offset {offset}")
        for rec in records:
            if rec.offset < offset:
                continue
            offset = rec.offset + 1
            if rec.key is None:
                continue
            try:
                tid = decode_key(rec.key)
                if rec.value is None:
                    out.pop(tid, None)
                else:
                    out[tid] = decode_value(tid, rec.value)
            except (ValueError, struct.error) as exc:
                log.warning("skipping unreadable %s record at %d: %s", TOPIC, rec.offset, exc)
    return out


def _batch(key: bytes, value: bytes | None, timestamp: int) -> bytes:
    """One record in a RecordBatch v2, the format Kafka 4 writes its internal topics in."""
    builder = RecordBatchBuilder()
    builder.append(key, value, timestamp)
    return builder.build()
