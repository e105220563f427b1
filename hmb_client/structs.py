"""Small value types shared by the producer, consumer, admin and CLI."""

from __future__ import annotations

from typing import NamedTuple


class TopicPartition(NamedTuple):
    topic: str
    partition: int


class ConsumerRecord(NamedTuple):
    """One consumed record.

    ``timestamp`` (epoch ms) is None for magic-0 messages (Kafka 0.8);
    ``headers`` are ``(str, bytes | None)`` pairs, as kafka-python gives them
    (always empty before RecordBatch v2).
    """

    topic: str
    partition: int
    offset: int
    timestamp: int | None
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()


class OffsetAndMetadata(NamedTuple):
    offset: int
    metadata: str = ""


class OffsetAndTimestamp(NamedTuple):
    """What ``offsets_for_times`` finds: the first offset at or after a time, and its timestamp."""

    offset: int
    timestamp: int
