"""Committed consumer offsets, stored in Kafka's internal ``__consumer_offsets`` topic.

Each commit is appended as a record whose key and value use Kafka's own
schemas (``GroupMetadataManager``), so Kafka tooling could read the log:

    key   (version 1) => version int16, group string, topic string, partition int32
    value (version 1) => version int16, offset int64, metadata string,
                         commit_timestamp int64, expire_timestamp int64
    value (version 3) => version int16, offset int64, leader_epoch int32,
                         metadata string, commit_timestamp int64

Deleting offsets (DeleteGroups, OffsetDelete) appends Kafka's tombstones: the
offset's key with a null value, and for a deleted group also a null value
under its group metadata key (version 2: ``version int16, group string``),
so a compacting reader of the topic forgets both.

A commit is written as value version 3 (it carries the leader epoch the
consumer saw, KIP-320), or version 1 when the client asked for a retention
time (OffsetCommit v2-v4), the only schema with an expire timestamp, as
Kafka chooses.  Versions 0 and 2 (Kafka's older writers) are read too.

A transaction's offsets (TxnOffsetCommit) are written as a transactional
RecordBatch of its producer (id, epoch, next sequence), as Kafka writes
them, and held apart per producer until the transaction's marker reaches
this partition: COMMIT makes them the group's committed offsets, ABORT
drops them, both when the coordinator writes the marker and when the log
is read back.

On start the whole topic is read back, last record per key winning.  A
commit is acknowledged only after its record is in the log, so an
acknowledged commit survives a crash like any acknowledged message.
"""

from __future__ import annotations

import logging
import struct
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from construct import Int16sb, Int32sb, Int64sb, PascalString, Struct

from hmb.log.partition import PartitionLog
from kproto.records import RecordBatchBuilder, RecordBatchReader, read_message_set
from kproto.records.entry import MAGIC_OFFSET, entry_size, last_offset

log = logging.getLogger(__name__)

TOPIC = "__consumer_offsets"
#: How Kafka creates ``__consumer_offsets``: compacted (never deleted by age or size), in
#: segments of offsets.topic.segment.bytes so that the cleaner gets to closed ones.
TOPIC_CONFIG = {"cleanup.policy": "compact", "segment.bytes": "104857600"}
INT64_MAX = 2**63 - 1

_STRING = PascalString(Int16sb, "utf-8")
GROUP_METADATA_KEY = Struct("version" / Int16sb, "group" / _STRING)  # version 2
OFFSET_KEY = Struct("version" / Int16sb, "group" / _STRING, "topic" / _STRING, "partition" / Int32sb)
OFFSET_VALUE = Struct(  # version 1
    "version" / Int16sb,
    "offset" / Int64sb,
    "metadata" / _STRING,
    "commit_timestamp" / Int64sb,
    "expire_timestamp" / Int64sb,
)
_VALUE_V0_V2 = Struct(
    "version" / Int16sb, "offset" / Int64sb, "metadata" / _STRING, "commit_timestamp" / Int64sb
)
OFFSET_VALUE_V3 = Struct(
    "version" / Int16sb,
    "offset" / Int64sb,
    "leader_epoch" / Int32sb,
    "metadata" / _STRING,
    "commit_timestamp" / Int64sb,
)
_I16 = struct.Struct(">h")
COMMIT_MARKER = 1  # a control record's key: version int16, type int16 (0 ABORT, 1 COMMIT)
_VALUES = {0: _VALUE_V0_V2, 1: OFFSET_VALUE, 2: _VALUE_V0_V2, 3: OFFSET_VALUE_V3}


def _commit_record(group: str, e: CommitEntry, ts: int) -> tuple[bytes, bytes]:
    """The key and value (schema v3, with the leader epoch) of one commit."""
    key = OFFSET_KEY.build({"version": 1, "group": group, "topic": e.topic, "partition": e.partition})
    value = OFFSET_VALUE_V3.build(
        {
            "version": 3,
            "offset": e.offset,
            "leader_epoch": e.leader_epoch,
            "metadata": e.metadata,
            "commit_timestamp": ts,
        }
    )
    return key, value


@dataclass(frozen=True)
class CommittedOffset:
    """A group's committed position in one partition, as OffsetFetch returns it."""

    offset: int
    metadata: str
    commit_timestamp: int
    leader_epoch: int = -1


class CommitEntry(NamedTuple):
    """One partition's offset to commit; a negative timestamp means "now"."""

    topic: str
    partition: int
    offset: int
    metadata: str = ""
    commit_timestamp: int = -1
    leader_epoch: int = -1


class OffsetStore:
    """Group -> (topic, partition) -> committed offset, backed by one log partition."""

    def __init__(self, plog: PartitionLog, wall_ms: Callable[[], int] | None = None) -> None:
        self.plog = plog
        self.wall_ms = wall_ms or (lambda: int(time.time() * 1000))  # the broker's clock
        self._offsets: dict[tuple[str, str, int], CommittedOffset] = {}
        #: producer id -> the offsets its open transaction commits (TxnOffsetCommit)
        self._pending: dict[int, dict[tuple[str, str, int], CommittedOffset]] = {}

    def load(self) -> int:
        """Read the whole log back; returns how many records were applied.

        Transactional offsets (TxnOffsetCommit) are held per producer until
        their transaction's marker: COMMIT applies them, ABORT drops them;
        a transaction still open at the end stays pending for the
        transaction coordinator to complete.
        """
        applied = 0
        offset = self.plog.log_start_offset
        # to the log end, not the high watermark: a follower that just became leader holds
        # commits its high watermark has not caught up with (they are the partition's truth now)
        while offset < self.plog.log_end_offset:
            with self.plog.read(offset, 1 << 20, min_one=True, replica=True) as region:
                if region is None:
                    break
                data = region.read()
            pos, start = 0, offset
            while (size := entry_size(data, pos)) and pos + size <= len(data):
                entry = data[pos : pos + size]
                pos += size
                if last_offset(entry) < start:
                    continue
                offset = last_offset(entry) + 1
                try:
                    applied += self._load_entry(entry, start)
                except Exception as exc:  # any unreadable entry: skipped, never fatal to the start
                    log.warning("skipping unreadable %s entry before %d: %s", TOPIC, offset, exc)
            if offset == start:
                raise RuntimeError(f"cannot read {TOPIC} at offset {offset}")
        return applied

    def _load_entry(self, entry: bytes, start: int) -> int:
        """Apply one log entry (a message set or one record batch); returns records applied."""
        if entry[MAGIC_OFFSET] < 2:
            legacy = [r for r in read_message_set(entry) if r.offset >= start]
            for message in legacy:
                self._apply(message.key, message.value)
            return len(legacy)
        applied = 0
        for batch in RecordBatchReader(entry, allow_partial_tail=False):
            head = batch.header
            if head.is_control:
                key = batch.records()[0].key or b""
                self.complete_transaction(
                    head.producer_id, commit=_I16.unpack_from(key, 2)[0] == COMMIT_MARKER
                )
                continue
            for rec in batch.records():
                if rec.offset < start:
                    continue
                if head.is_transactional:
                    self._apply_pending(head.producer_id, rec.key, rec.value)
                else:
                    self._apply(rec.key, rec.value)
                applied += 1
        return applied

    def _apply(self, key: bytes | None, value: bytes | None) -> None:
        self._apply_to(self._offsets, key, value)

    def _apply_pending(self, producer_id: int, key: bytes | None, value: bytes | None) -> None:
        self._apply_to(self._pending.setdefault(producer_id, {}), key, value)

    @staticmethod
    def _apply_to(
        offsets: dict[tuple[str, str, int], CommittedOffset], key: bytes | None, value: bytes | None
    ) -> None:
        if key is None:
            return
        k = OFFSET_KEY.parse(key)
        if k.version not in (0, 1):
            return  # group metadata records (version 2) are not offsets
        if value is None:  # tombstone: offset deleted
            offsets.pop((k.group, k.topic, k.partition), None)
            return
        version = int.from_bytes(value[:2], "big", signed=True)
        schema = _VALUES.get(version)
        if schema is None:
            raise ValueError(f"offset value version {version} is not one hmb reads")
        v = schema.parse(value)
        offsets[(k.group, k.topic, k.partition)] = CommittedOffset(
            v.offset, v.metadata, v.commit_timestamp, v.get("leader_epoch", -1)
        )

    # ---------------------------------------------------------------- transactional offsets

    async def stage_transaction(
        self, producer_id: int, producer_epoch: int, group: str, entries: list[CommitEntry]
    ) -> None:
        """TxnOffsetCommit: write ``entries`` as a transactional batch of the producer, held
        back from the group's committed offsets until :meth:`complete_transaction`.

        The batch carries the producer's id, epoch and next sequence on this
        partition, so the log's idempotence rules fence a zombie's late commit.
        """
        now = self.wall_ms()
        known = self.plog.producers.producers.get(producer_id)
        seq = known.last_seq + 1 if known is not None and known.epoch == producer_epoch else 0
        builder = RecordBatchBuilder(
            producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=seq, is_transactional=True
        )
        staged: dict[tuple[str, str, int], CommittedOffset] = {}
        for e in entries:
            ts = now if e.commit_timestamp < 0 else e.commit_timestamp
            key, value = _commit_record(group, e, ts)
            builder.append(key, value, ts)
            staged[(group, e.topic, e.partition)] = CommittedOffset(e.offset, e.metadata, ts, e.leader_epoch)
        await self.plog.append(builder.build())
        self._pending.setdefault(producer_id, {}).update(staged)

    def complete_transaction(self, producer_id: int, *, commit: bool) -> None:
        """The producer's transaction ended: its offsets become committed (or are dropped)."""
        staged = self._pending.pop(producer_id, {})
        if commit:
            self._offsets.update(staged)

    def get(self, group: str, topic: str, partition: int) -> CommittedOffset | None:
        return self._offsets.get((group, topic, partition))

    def pending(self, group: str, topic: str, partition: int) -> bool:
        """Whether an open transaction commits an offset of this group and partition."""
        key = (group, topic, partition)
        return any(key in staged for staged in self._pending.values())

    def of_group(self, group: str) -> dict[tuple[str, int], CommittedOffset]:
        """Every committed offset of a group (OffsetFetch v2+ with null topics), sorted."""
        return dict(sorted(((t, p), c) for (g, t, p), c in self._offsets.items() if g == group))

    def groups(self) -> set[str]:
        """Groups with committed offsets: Kafka lists them even when nobody is a member."""
        return {g for g, _, _ in self._offsets}

    async def commit(self, group: str, entries: list[CommitEntry], *, retention_ms: int = -1) -> None:
        """Store ``entries`` durably, then in memory.

        ``retention_ms`` (OffsetCommit v2-v4) is recorded as the expire
        timestamp, in Kafka's value schema v1; -1 means the broker's
        retention (offsets are not expired here) and the record is written
        in schema v3, with the leader epoch.
        """
        now = self.wall_ms()
        records = []
        stored: list[tuple[CommitEntry, CommittedOffset]] = []
        for e in entries:
            ts = now if e.commit_timestamp < 0 else e.commit_timestamp
            key = OFFSET_KEY.build({"version": 1, "group": group, "topic": e.topic, "partition": e.partition})
            if retention_ms >= 0:
                value = OFFSET_VALUE.build(
                    {
                        "version": 1,
                        "offset": e.offset,
                        "metadata": e.metadata,
                        "commit_timestamp": ts,
                        # clamped: a client's retention near 2**63 must not overflow the int64 field
                        "expire_timestamp": min(ts + retention_ms, INT64_MAX),
                    }
                )
                epoch = -1
            else:
                epoch = e.leader_epoch
                key, value = _commit_record(group, e, ts)
            records.append((key, value, ts))
            stored.append((e, CommittedOffset(e.offset, e.metadata, ts, epoch)))
        await self.plog.append(_batch(records))
        for e, committed in stored:
            self._offsets[(group, e.topic, e.partition)] = committed

    async def delete(
        self, group: str, partitions: Iterable[tuple[str, int]] | None = None
    ) -> list[tuple[str, int]]:
        """Remove committed offsets durably: tombstones first, then from memory.

        ``partitions`` None deletes the whole group: every offset and its
        group metadata key.  Returns the (topic, partition)s that had an
        offset; partitions without one are skipped, as Kafka writes no
        tombstone for them.
        """
        if partitions is None:
            doomed = [(t, p) for (g, t, p) in self._offsets if g == group]
        else:
            doomed = [(t, p) for t, p in dict.fromkeys(partitions) if (group, t, p) in self._offsets]
        now = self.wall_ms()
        records: list[tuple[bytes, None, int]] = [
            (OFFSET_KEY.build({"version": 1, "group": group, "topic": t, "partition": p}), None, now)
            for t, p in doomed
        ]
        if partitions is None:
            records.append((GROUP_METADATA_KEY.build({"version": 2, "group": group}), None, now))
        before = {(group, t, p): self._offsets[(group, t, p)] for t, p in doomed}
        if records:
            await self.plog.append(_batch(records))
        for key, committed in before.items():
            if self._offsets.get(key) is committed:  # not committed again while the tombstones were written
                del self._offsets[key]
        return doomed


def _batch(records: Sequence[tuple[bytes, bytes | None, int]]) -> bytes:
    """``(key, value, timestamp)`` records in one RecordBatch v2, as Kafka 4 writes offsets."""
    builder = RecordBatchBuilder()
    for key, value, ts in records:
        builder.append(key, value, ts)
    return builder.build()
