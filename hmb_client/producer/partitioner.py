"""Choosing a partition: murmur2 for keys exactly as Kafka's Java client, sticky for null keys.

A keyed record must land on the partition any Kafka client would pick, or
consumers that rely on per-key ordering break when producers are mixed.
The Java client computes ``(murmur2(key) & 0x7fffffff) % partitions``
(``Utils.toPositive``); librdkafka's ``murmur2_random`` partitioner does the
same for keys.  Null keys use the sticky partitioner (KIP-480): stay on one
partition until a batch is sent, then move, which keeps batches full.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable

_M = 0x5BD1E995
_SEED = 0x9747B28C
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Kafka's 32-bit murmur2 (``org.apache.kafka.common.utils.Utils.murmur2``), unsigned."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    n4 = length // 4
    for (k,) in struct.iter_unpack("<I", data[: n4 * 4]):
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    tail = data[n4 * 4 :]
    extra = len(tail)
    if extra >= 3:
        h ^= tail[2] << 16
    if extra >= 2:
        h ^= tail[1] << 8
    if extra >= 1:
        h ^= tail[0]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h


def partition_for_key(key: bytes, partitions: int) -> int:
    """The partition Kafka's default partitioner picks for ``key``."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


class DefaultPartitioner:
    """murmur2 for keys; sticky for null keys (a new partition after each sent batch)."""

    def __init__(self) -> None:
        self._sticky: dict[str, int] = {}

    def __call__(self, topic: str, key: bytes | None, partitions: int) -> int:
        if key is not None:
            return partition_for_key(key, partitions)
        p = self._sticky.get(topic)
        if p is None or p >= partitions:
            p = self._sticky[topic] = random.randrange(partitions)
        return p

    def batch_sent(self, topic: str, partition: int, partitions: int) -> None:
        """Move a topic's sticky partition after a batch for it left."""
        if self._sticky.get(topic) == partition and partitions > 1:
            choices = [p for p in range(partitions) if p != partition]
            self._sticky[topic] = random.choice(choices)


class RoundRobinPartitioner:
    """Every record to the next partition, keys ignored."""

    def __init__(self) -> None:
        self._next: dict[str, int] = {}

    def __call__(self, topic: str, key: bytes | None, partitions: int) -> int:
        p = self._next.get(topic, 0) % partitions
        self._next[topic] = p + 1
        return p

    def batch_sent(self, topic: str, partition: int, partitions: int) -> None:
        pass


Partitioner = Callable[[str, bytes | None, int], int]
