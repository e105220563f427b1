"""Committed consumer offsets, stored in Kafka's internal ``__consumer_offsets`` topic.

Each commit is appended as a record whose key and value use Kafka's own
schemas (``GroupMetadataManager``), so Kafka tooling could read the log:

    key   (version 1) => version int16, group string, topic string, partition int32
    value (version 1) => version int16, offset int64, metadata string,
                         commit_timestamp int64, expire_timestamp int64

On start the whole topic is read back, last record per key winning.  A
commit is acknowledged only after its record is in the log, so an
acknowledged commit survives a crash like any acknowledged message.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from construct import Int16sb, Int32sb, Int64sb, PascalString, Struct

from hmb.log.partition import PartitionLog
from kproto.records import build_message_set, read_message_set

log = logging.getLogger(__name__)

TOPIC = "__consumer_offsets"
INT64_MAX = 2**63 - 1

_STRING = PascalString(Int16sb, "utf-8")
OFFSET_KEY = Struct("version" / Int16sb, "group" / _STRING, "topic" / _STRING, "partition" / Int32sb)
OFFSET_VALUE = Struct(
    "version" / Int16sb,
    "offset" / Int64sb,
    "metadata" / _STRING,
    "commit_timestamp" / Int64sb,
    "expire_timestamp" / Int64sb,
)


@dataclass(frozen=True)
class CommittedOffset:
    offset: int
    metadata: str
    commit_timestamp: int


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
        v = OFFSET_VALUE.parse(value)
        self._offsets[(k.group, k.topic, k.partition)] = CommittedOffset(
            v.offset, v.metadata, v.commit_timestamp
        )

    def get(self, group: str, topic: str, partition: int) -> CommittedOffset | None:
        return self._offsets.get((group, topic, partition))

    def of_group(self, group: str) -> dict[tuple[str, int], CommittedOffset]:
        """Every committed offset of a group (OffsetFetch v2+ with null topics), sorted."""
        return dict(sorted(((t, p), c) for (g, t, p), c in self._offsets.items() if g == group))

    def groups(self) -> set[str]:
        """Groups with committed offsets: Kafka lists them even when nobody is a member."""
        return {g for g, _, _ in self._offsets}

    async def commit(
        self, group: str, entries: list[tuple[str, int, int, str, int]], *, retention_ms: int = -1
    ) -> None:
        """Store ``(topic, partition, offset, metadata, commit_timestamp)`` durably, then in memory.

        ``retention_ms`` (OffsetCommit v2-v4) is recorded as the expire
        timestamp, as Kafka's value schema v1 does; -1 means the broker's
        retention (offsets are not expired here).
        """
        now = self.wall_ms()
        records = []
        for topic, partition, offset, metadata, ts in entries:
            ts = now if ts < 0 else ts
            key = OFFSET_KEY.build({"version": 1, "group": group, "topic": topic, "partition": partition})
            value = OFFSET_VALUE.build(
                {
                    "version": 1,
                    "offset": offset,
                    "metadata": metadata,
                    "commit_timestamp": ts,
                    # clamped: a client's retention near 2**63 must not overflow the int64 field
                    "expire_timestamp": min(ts + retention_ms, INT64_MAX) if retention_ms >= 0 else -1,
                }
            )
            records.append((key, value, ts))
        await self.plog.append(build_message_set(records, magic=1))
        for topic, partition, offset, metadata, ts in entries:
            self._offsets[(group, topic, partition)] = CommittedOffset(
                offset, metadata, now if ts < 0 else ts
            )
