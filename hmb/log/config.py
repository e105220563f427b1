"""What one partition's log needs to know, with Kafka's defaults.

Each field carries the Kafka broker property it comes from; the broker's
configuration (:mod:`hmb.config`) builds this from ``server.properties``.
"""

from __future__ import annotations

from dataclasses import dataclass

NEVER = 2**63 - 1  # Kafka's Long.MAX_VALUE: "no limit" for flush and retention settings


@dataclass(frozen=True)
class LogConfig:
    segment_bytes: int = 1024 * 1024 * 1024  # log.segment.bytes
    index_interval_bytes: int = 4096  # log.index.interval.bytes
    index_max_bytes: int = 10 * 1024 * 1024  # log.index.size.max.bytes
    retention_ms: int = 168 * 3600 * 1000  # log.retention.hours (168), or .minutes/.ms
    retention_bytes: int = -1  # log.retention.bytes (-1: no size limit)
    flush_interval_messages: int = NEVER  # log.flush.interval.messages
    flush_interval_ms: int = NEVER  # log.flush.interval.ms
    max_message_bytes: int = 1048588  # message.max.bytes (Kafka's default)
