"""A topic's configuration: the topic-level Kafka settings one partition's log obeys.

Every field is a property of the broker's table (hmb.properties.table) that
has a topic-level name (``segment.bytes``, ``retention.ms`` ...); its default is
the table's, and the broker-wide value (``log.segment.bytes`` ...) is every
topic's default.  Rule: a field is declared in the table first and named by
its ``attr``; a test checks that the two agree.  Field names are the log's
(``index_max_bytes`` for ``segment.index.bytes``, ``flush_interval_ms`` for
``flush.ms``), so that hmb.log reads them unchanged.  Some settings are only
declared so far (``acted_on=False`` in the table): their default is the only
behaviour hmb has.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from hmb.properties import NEVER, TOPIC_PROPERTIES, ConfigError, default_of, resolve_topic

if TYPE_CHECKING:
    from hmb.config import BrokerConfig

__all__ = ["NEVER", "LogConfig", "TopicConfig"]


@dataclass(frozen=True)
class TopicConfig:
    """A topic's log settings (Kafka's topic-level names beside each), defaults from the broker's."""

    segment_bytes: int = default_of("log.segment.bytes")  # segment.bytes
    segment_ms: int = default_of("log.roll.ms")  # segment.ms
    index_interval_bytes: int = default_of("log.index.interval.bytes")  # index.interval.bytes
    index_max_bytes: int = default_of("log.index.size.max.bytes")  # segment.index.bytes
    retention_ms: int = default_of("log.retention.ms")  # retention.ms (-1: forever)
    retention_bytes: int = default_of("log.retention.bytes")  # retention.bytes (-1: no limit)
    flush_interval_messages: int = default_of("log.flush.interval.messages")  # flush.messages
    flush_interval_ms: int = default_of("log.flush.interval.ms")  # flush.ms
    max_message_bytes: int = default_of("message.max.bytes")  # max.message.bytes
    cleanup_policy: tuple[str, ...] = default_of("log.cleanup.policy")  # cleanup.policy
    delete_retention_ms: int = default_of("log.cleaner.delete.retention.ms")  # delete.retention.ms
    min_compaction_lag_ms: int = default_of("log.cleaner.min.compaction.lag.ms")  # min.compaction.lag.ms
    max_compaction_lag_ms: int = default_of("log.cleaner.max.compaction.lag.ms")  # max.compaction.lag.ms
    min_cleanable_dirty_ratio: float = default_of("log.cleaner.min.cleanable.ratio")  # min.cleanable.dirty...
    message_timestamp_type: str = default_of("log.message.timestamp.type")  # message.timestamp.type
    message_timestamp_before_max_ms: int = default_of("log.message.timestamp.before.max.ms")
    message_timestamp_after_max_ms: int = default_of("log.message.timestamp.after.max.ms")
    compression_type: str = default_of("compression.type")  # compression.type
    segment_delete_delay_ms: int = default_of(
        "log.segment.delete.delay.ms"
    )  # file.delete.delay.ms (declared)
    min_insync_replicas: int = default_of("min.insync.replicas")

    @classmethod
    def from_broker(cls, broker: BrokerConfig, overrides: Mapping[str, str] | None = None) -> TopicConfig:
        """A topic's configuration: the broker-wide defaults, then the topic's own settings."""
        return broker.log.with_overrides(overrides or {})

    @property
    def compact(self) -> bool:
        """``cleanup.policy`` includes ``compact``: the log cleaner keeps the latest record per key."""
        return "compact" in self.cleanup_policy

    @property
    def delete(self) -> bool:
        """``cleanup.policy`` includes ``delete``: retention by time and size applies."""
        return "delete" in self.cleanup_policy

    def with_overrides(self, overrides: Mapping[str, str]) -> TopicConfig:
        """This configuration with topic-level settings (``{"retention.ms": "1000"}``) applied,
        each checked as the table declares; an unknown or bad one raises ConfigError."""
        values = resolve_topic(overrides, TOPIC_PROPERTIES)
        config = replace(self, **{p.attr: value for p, value in values.items()})
        if config.max_compaction_lag_ms < config.min_compaction_lag_ms:  # Kafka refuses the pair too
            raise ConfigError(
                f"max.compaction.lag.ms ({config.max_compaction_lag_ms}) must be at least "
                f"min.compaction.lag.ms ({config.min_compaction_lag_ms})"
            )
        return config


LogConfig = TopicConfig  # the name hmb.log knew it by
