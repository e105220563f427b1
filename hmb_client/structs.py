"""Small value types shared by the producer, consumer, admin and CLI."""

from __future__ import annotations

from typing import NamedTuple


class TopicPartition(NamedTuple):
    topic: str
    partition: int


class ConsumerRecord(NamedTuple):
    """One consumed record.  ``timestamp`` is None for magic-0 messages (Kafka 0.8)."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None
    key: bytes | None
    value: bytes | None


class OffsetAndMetadata(NamedTuple):
    offset: int
    metadata: str = ""
