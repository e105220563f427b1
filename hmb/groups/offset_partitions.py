"""Committed offsets spread over ``__consumer_offsets``'s partitions, by group, as Kafka does.

Rules:

* A group's offsets live in partition ``abs(hashCode(group)) % partitions``
  (Java's ``String.hashCode``, Kafka's ``abs``); each partition is one
  :class:`~hmb.groups.offsets.OffsetStore`, and :class:`GroupOffsets` routes
  every call to the store of the group's partition.  Its interface is the
  store's, so handlers do not know how many partitions there are.
* Only the partitions this broker coordinates are loaded.  Alone, that is
  every partition on disk (one, unless an older layout made more).  In a
  cluster it is the partitions this broker leads: a partition is read back
  from its log when the broker becomes its leader (:meth:`take_over`) and
  forgotten when it stops leading it (:meth:`give_up`), so committed
  offsets move with leadership.  A group whose partition is not loaded has
  no offsets here; its requests are answered NOT_COORDINATOR before they
  reach this class (:func:`hmb.api.leadership.not_coordinator`).
* A transaction's end applies to every loaded partition: a producer's
  pending offsets are only in the partitions its transaction wrote to.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from hmb.groups.offsets import TOPIC, CommitEntry, CommittedOffset, OffsetStore
from hmb.log.partition import PartitionLog

if TYPE_CHECKING:
    from hmb.log.manager import LogManager

log = logging.getLogger(__name__)


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units), as a signed 32-bit int."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def coordinator_partition(group: str, partitions: int) -> int:
    """Kafka's ``Utils.abs(groupId.hashCode) % partitions`` (its abs maps MIN_VALUE to 0)."""
    h = java_string_hash(group)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


class NotLoadedError(LookupError):
    """The group's partition is not loaded here: another broker coordinates the group."""


class GroupOffsets:
    """Group -> (topic, partition) -> committed offset, over the loaded offsets partitions."""

    def __init__(self, partitions: int, wall_ms: Callable[[], int] | None = None) -> None:
        self.partitions = partitions
        self.wall_ms = wall_ms
        self.stores: dict[int, OffsetStore] = {}

    # ---------------------------------------------------------------- which partitions are here

    def partition_of(self, group: str) -> int:
        return coordinator_partition(group, self.partitions)

    def take_over(self, partition: int, plog: PartitionLog) -> int:
        """Read ``partition``'s log back and serve its groups; how many records were applied."""
        store = OffsetStore(plog, self.wall_ms)
        applied = store.load()
        self.stores[partition] = store
        return applied

    def give_up(self, partition: int) -> None:
        """Stop serving ``partition``'s groups (another broker leads it now)."""
        self.stores.pop(partition, None)

    def _store(self, group: str) -> OffsetStore | None:
        return self.stores.get(self.partition_of(group))

    def log_of(self, group: str) -> PartitionLog | None:
        """The log holding ``group``'s offsets here (None: not loaded on this broker)."""
        store = self._store(group)
        return None if store is None else store.plog

    def _writable(self, group: str) -> OffsetStore:
        store = self._store(group)
        if store is None:
            raise NotLoadedError(f"{TOPIC}-{self.partition_of(group)} is not loaded on this broker")
        return store

    # ---------------------------------------------------------------- the store's interface

    def get(self, group: str, topic: str, partition: int) -> CommittedOffset | None:
        store = self._store(group)
        return None if store is None else store.get(group, topic, partition)

    def pending(self, group: str, topic: str, partition: int) -> bool:
        store = self._store(group)
        return store is not None and store.pending(group, topic, partition)

    def of_group(self, group: str) -> dict[tuple[str, int], CommittedOffset]:
        store = self._store(group)
        return {} if store is None else store.of_group(group)

    def groups(self) -> set[str]:
        return set().union(*(s.groups() for s in self.stores.values()))

    async def commit(self, group: str, entries: list[CommitEntry], *, retention_ms: int = -1) -> None:
        await self._writable(group).commit(group, entries, retention_ms=retention_ms)

    async def delete(
        self, group: str, partitions: Iterable[tuple[str, int]] | None = None
    ) -> list[tuple[str, int]]:
        store = self._store(group)
        return [] if store is None else await store.delete(group, partitions)

    async def stage_transaction(
        self, producer_id: int, producer_epoch: int, group: str, entries: list[CommitEntry]
    ) -> None:
        await self._writable(group).stage_transaction(producer_id, producer_epoch, group, entries)

    def complete_transaction(self, producer_id: int, *, commit: bool) -> None:
        for store in self.stores.values():
            store.complete_transaction(producer_id, commit=commit)


def follow_leadership(offsets: GroupOffsets, logs: LogManager, partitions: int, led: set[int]) -> None:
    """In a cluster: serve the offsets partitions this broker leads (``led``) of ``partitions``.

    Called by the broker's cluster loop after each change of the view: a
    partition newly led is read back from this broker's copy of its log, one
    no longer led is forgotten."""
    offsets.partitions = partitions
    for p in sorted(set(offsets.stores) - led):
        offsets.give_up(p)
        log.info("%s-%d: no longer led here, its groups' offsets are forgotten", TOPIC, p)
    for p in sorted(led - set(offsets.stores)):
        plog = logs.get(TOPIC, p)
        if plog is None:  # not opened here yet: the next change of the view tries again
            continue
        applied = offsets.take_over(p, plog)
        log.info("%s-%d: led here now, %d committed-offset record(s) loaded", TOPIC, p, applied)
