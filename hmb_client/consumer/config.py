"""The consumer's settings: :class:`ConsumerConfig`, kafka-python's names and defaults.

Rule of this module: every consumer setting is declared here once, with its
default and its check; the parts of the consumer (fetcher, group member,
offset lookup) read what they need from the one frozen instance.  Spark's
options read the field names from here too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hmb_client.assignors import DEFAULT_ASSIGNORS, AssignorSpec, assignors_for
from hmb_client.request_bodies import ISOLATION
from hmb_client.security import SecuritySettings

__all__ = ["ConsumerConfig"]

_RESET_ALIASES = {"smallest": "earliest", "largest": "latest"}
_POSITIVE = (
    "auto_commit_interval_ms",
    "max_partition_fetch_bytes",
    "max_poll_records",
    "request_timeout_ms",
    "fetch_max_bytes",
    "heartbeat_interval_ms",
    "session_timeout_ms",
    "max_poll_interval_ms",
    "metadata_max_age_ms",
)


@dataclass(frozen=True)
class ConsumerConfig(SecuritySettings):
    """Consumer settings (kafka-python names; Kafka 3 defaults for the group settings)."""

    bootstrap_servers: str | list[str] = "127.0.0.1:9092"
    client_id: str = "hmb-consumer"
    group_id: str | None = None
    auto_offset_reset: str = "latest"  # "earliest", "latest" or "error" (also "smallest"/"largest")
    enable_auto_commit: bool = True  # only with group_id
    auto_commit_interval_ms: int = 5000
    fetch_min_bytes: int = 1
    fetch_max_wait_ms: int = 500
    fetch_max_bytes: int = 52_428_800  # a whole response (Fetch v3+)
    max_partition_fetch_bytes: int = 1_048_576
    api_version: tuple[int, ...] | None = None  # None: ApiVersions; (0, 8, 2): the 0.8.2 table
    isolation_level: str = "read_uncommitted"  # or "read_committed" (Fetch v4+, ListOffsets v2+)
    max_poll_records: int = 500
    request_timeout_ms: int = 30_000
    retry_backoff_ms: int = 100
    consumer_timeout_ms: float | None = None  # iteration stops after this long without records
    key_deserializer: Callable[[bytes], Any] | None = None
    value_deserializer: Callable[[bytes], Any] | None = None
    reconnect_backoff_ms: int = 50
    reconnect_backoff_max_ms: int = 1000
    # Group membership (subscribe()):
    heartbeat_interval_ms: int = 3000
    session_timeout_ms: int = 45_000
    max_poll_interval_ms: int = 300_000  # also the rebalance timeout sent in JoinGroup v1+
    partition_assignment_strategy: Sequence[AssignorSpec] = DEFAULT_ASSIGNORS
    metadata_max_age_ms: int = 300_000  # how often subscribed topics are checked for new partitions

    def __post_init__(self) -> None:
        super().__post_init__()
        reset = _RESET_ALIASES.get(self.auto_offset_reset, self.auto_offset_reset)
        if reset not in ("earliest", "latest", "error"):
            raise ValueError(f"auto_offset_reset must be 'earliest', 'latest' or 'error', not {reset!r}")
        object.__setattr__(self, "auto_offset_reset", reset)
        if self.isolation_level not in ISOLATION:
            raise ValueError("isolation_level must be 'read_uncommitted' or 'read_committed'")
        for name in _POSITIVE:
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if self.fetch_min_bytes < 0 or self.fetch_max_wait_ms < 0:
            raise ValueError("fetch_min_bytes and fetch_max_wait_ms must not be negative")
        object.__setattr__(self, "partition_assignment_strategy", tuple(self.partition_assignment_strategy))
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ValueError("heartbeat_interval_ms must be lower than session_timeout_ms")
        assignors_for(self.partition_assignment_strategy)  # raises on a bad entry

    @property
    def auto_commit(self) -> bool:
        """Whether positions are committed automatically (needs a ``group_id``)."""
        return bool(self.group_id) and self.enable_auto_commit
