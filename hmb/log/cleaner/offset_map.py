"""The cleaner's map of key -> latest offset, in bounded memory, keyed as Kafka keys it.

Kafka's cleaner does not keep keys: it keeps the 16-byte MD5 digest of each
key and the offset of the key's latest record, 24 bytes an entry, in a buffer
of ``log.cleaner.dedupe.buffer.size`` shared by the cleaner threads, filled
to at most ``log.cleaner.io.buffer.load.factor`` (0.9).  This map counts its
entries the same way and refuses more than that budget allows: a log with more
distinct keys than fit is cleaned up to where the map filled, and the rest at
the next cleaning.  (A Python dict spends more than 24 bytes an entry; the
bound is what matters: memory grows with the budget, never with the log.)

Two keys with the same digest count as one, as in Kafka: the chance is
negligible, and the cost would be an older record dropped for a newer one of
another key.
"""

from __future__ import annotations

import hashlib

ENTRY_BYTES = 24  # a 16-byte MD5 digest and an 8-byte offset, as Kafka's SkimpyOffsetMap sizes them
LOAD_FACTOR = 0.9  # Kafka's log.cleaner.io.buffer.load.factor default


def slots_for(buffer_bytes: int, threads: int = 1) -> int:
    """How many keys one cleaner thread may hold with ``buffer_bytes`` shared by ``threads``."""
    return max(1, int(buffer_bytes // max(1, threads) // ENTRY_BYTES * LOAD_FACTOR))


class OffsetMap:
    """Key digest -> offset of the key's latest record seen so far."""

    __slots__ = ("_offsets", "capacity", "latest_offset")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._offsets: dict[bytes, int] = {}
        self.latest_offset = -1  # the highest offset put so far

    def __len__(self) -> int:
        return len(self._offsets)

    @property
    def full(self) -> bool:
        return len(self._offsets) >= self.capacity

    def put(self, key: bytes, offset: int) -> None:
        """``key``'s latest record is at ``offset`` (offsets come in increasing order)."""
        self._offsets[hashlib.md5(key, usedforsecurity=False).digest()] = offset
        self.latest_offset = offset

    def get(self, key: bytes) -> int:
        """The latest offset of ``key``, -1 when the map has not seen it."""
        return self._offsets.get(hashlib.md5(key, usedforsecurity=False).digest(), -1)

    def clear(self) -> None:
        self._offsets.clear()
        self.latest_offset = -1
