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

On start the whole topic is read back, last record per key winning.  A
commit is acknowledged only after its record is in the log, so an
acknowledged commit survives a crash like any acknowledged message.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple

from construct import Int16sb, Int32sb, Int64sb, PascalString, Struct

from hmb.log.partition import PartitionLog
from kproto.records import build_message_set, read_message_set

log = logging.getLogger(__name__)

TOPIC = "__consumer_offsets"
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
_VALUES = {0: _VALUE_V0_V2, 1: OFFSET_VALUE, 2: _VALUE_V0_V2, 3: OFFSET_VALUE_V3}


@dataclass(frozen=True)
class CommittedOffset:
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

    def load(self) -> int:
        """Read the whole log back; returns how many records were applied."""
        applied = 0
        offset = self.plog.log_start_offset
        while offset < self.plog.high_watermark:
            with self.plog.read(offset, 1 << 20) as region:
                if region is None:
                    break
                data = region.read()
            records = read_message_set(data)
            if not records:
                raise RuntimeError(f"cannot read {TOPIC} at offset {offset}: entry larger than 1 MiB?")
            for rec in records:
                if rec.offset < offset:
                    continue
                offset = rec.offset + 1
                try:
                    self._apply(rec.key, rec.value)
                    applied += 1
                except Exception as exc:  # any unreadable record: skipped, never fatal to the start
                    log.warning("skipping unreadable %s record at %d: %s", TOPIC, rec.offset, exc)
        return applied

    def _apply(self, key: bytes | None, value: bytes | None) -> None:
        if key is None:
            return
        k = OFFSET_KEY.parse(key)
        if k.version not in (0, 1):
            return  # group metadata records (version 2) are not offsets
        if value is None:  # tombstone: offset deleted
            self._offsets.pop((k.group, k.topic, k.partition), None)
            return
        version = int.from_bytes(value[:2], "big", signed=True)
        schema = _VALUES.get(version)
        if schema is None:
            raise ValueError(f"offset value version {version} is not one hmb reads")
        v = schema.parse(value)
        self._offsets[(k.group, k.topic, k.partition)] = CommittedOffset(
            v.offset, v.metadata, v.commit_timestamp, v.get("leader_epoch", -1)
        )

    def get(self, group: str, topic: str, partition: int) -> CommittedOffset | None:
        return self._offsets.get((group, topic, partition))

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
                value = OFFSET_VALUE_V3.build(
                    {
                        "version": 3,
                        "offset": e.offset,
                        "leader_epoch": epoch,
                        "metadata": e.metadata,
                        "commit_timestamp": ts,
                    }
                )
            records.append((key, value, ts))
            stored.append((e, CommittedOffset(e.offset, e.metadata, ts, epoch)))
        await self.plog.append(build_message_set(records, magic=1))
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
            await self.plog.append(build_message_set(records, magic=1))
        for key, committed in before.items():
            if self._offsets.get(key) is committed:  # not committed again while the tombstones were written
                del self._offsets[key]
        return doomed
