"""The producer's settings: :class:`ProducerConfig`, kafka-python's names and Kafka's defaults.

Beside :mod:`hmb_client.producer.producer`, which holds the control
flow (``send()``, the sender) and this one what a user sets; Spark's
options read the field names from here too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hmb_client.producer.idempotence import MAX_IN_FLIGHT
from hmb_client.security import SecuritySettings
from kproto.records import Compression

__all__ = ["COMPRESSION", "RACK_ACKS", "ProducerConfig"]

#: ``acks="rack"`` on the wire: rAck, the fourth acknowledgement level (:mod:`hmb_client.rack`)
RACK_ACKS = -2

#: ``compression_type`` values and the codec each stands for
COMPRESSION = {
    None: Compression.NONE,
    "none": Compression.NONE,
    "gzip": Compression.GZIP,
    "snappy": Compression.SNAPPY,
    "lz4": Compression.LZ4,
    "zstd": Compression.ZSTD,  # RecordBatch v2 only: fails against Produce v0-2 leaders
}


@dataclass(frozen=True)
class ProducerConfig(SecuritySettings):
    """Producer settings (kafka-python names; Kafka's defaults unless noted).

    ``enable_idempotence`` defaults to False, unlike Kafka 3 and kafka-python
    3 (True, with ``acks="all"``): this client's default is ``acks=1`` and it
    must work unchanged against Kafka 0.8-style brokers such as hmb's core,
    which have neither InitProducerId nor RecordBatch v2.  Turned on, it
    needs Produce v3+ and InitProducerId from the broker (batches fail with
    UnsupportedVersionError otherwise), makes ``acks`` default to -1 (an
    explicit other value is an error, as in kafka-python) and caps
    ``max_in_flight_requests_per_connection`` at 5.
    """

    bootstrap_servers: str | list[str] = "127.0.0.1:9092"
    client_id: str = "hmb-producer"
    acks: int | str = 1  # 0, 1, -1, "all" or "rack" (rAck: -2 on the wire, hmb_client.rack)
    retries: int = 2_147_483_647  # bounded in practice by delivery_timeout_ms
    retry_backoff_ms: int = 100
    delivery_timeout_ms: int = 120_000
    batch_size: int = 16_384
    linger_ms: int = 5  # Kafka 4.0's default
    buffer_memory: int = 33_554_432
    max_block_ms: int = 60_000
    max_request_size: int = 1_048_576
    max_in_flight_requests_per_connection: int = 5
    request_timeout_ms: int = 30_000
    compression_type: str | None = None  # None, "gzip", "snappy", "lz4", "zstd"
    enable_idempotence: bool = False  # see the class docstring for why not True
    transactional_id: str | None = None  # transactions (init_transactions() ...); implies idempotence
    transaction_timeout_ms: int = 60_000  # the coordinator aborts a transaction open longer
    api_version: tuple[int, ...] | None = None  # None: ApiVersions; (0, 8, 2): the 0.8.2 table
    key_serializer: Callable[[Any], bytes] | None = None
    value_serializer: Callable[[Any], bytes] | None = None
    partitioner: str = "default"  # "default" (murmur2 keys, sticky null keys) or "round_robin"
    reconnect_backoff_ms: int = 50
    reconnect_backoff_max_ms: int = 1000
    # rAck (acks="rack"): the monitor's settings, the design's values by default
    rack_monitor: str | None = None  # HOST:PORT of an `hmb rack-monitor`; None: in this process
    rack_zookeeper_connect: str | None = None  # the cluster's ZooKeeper: receipts are znodes there
    rack_backup_slots: int = 15_000  # the circular list's slots at start
    rack_backup_max_slots: int = 1_000_000  # how far the list may grow
    rack_retry_interval_ms: int = 180_000  # failed resends are sent again this often
    rack_receipt_wait_ms: int = 10_000  # flush() resends what has no receipt after this long without one

    def __post_init__(self) -> None:
        super().__post_init__()
        acks = self.acks
        if acks == "all":
            object.__setattr__(self, "acks", -1)
        elif acks == "rack":
            object.__setattr__(self, "acks", RACK_ACKS)
        elif acks not in (0, 1, -1, RACK_ACKS):
            raise ValueError(f"acks must be 0, 1, -1, 'all' or 'rack', not {acks!r}")
        if self.compression_type not in COMPRESSION:
            raise ValueError(
                f"compression_type must be none, gzip, snappy, lz4 or zstd; not {self.compression_type!r}"
            )
        if self.partitioner not in ("default", "round_robin"):
            raise ValueError("partitioner must be 'default' or 'round_robin'")
        if self.batch_size < 1 or self.max_in_flight_requests_per_connection < 1:
            raise ValueError("batch_size and max_in_flight_requests_per_connection must be positive")
        if self.transactional_id is not None and not self.enable_idempotence:
            raise ValueError("transactional_id needs enable_idempotence")
        if self.enable_idempotence:
            if self.acks != -1:
                raise ValueError("enable_idempotence needs acks='all' (-1)")
            if self.max_in_flight_requests_per_connection > MAX_IN_FLIGHT:
                raise ValueError(
                    f"enable_idempotence needs max_in_flight_requests_per_connection <= {MAX_IN_FLIGHT}"
                )
            if self.retries < 1:
                raise ValueError("enable_idempotence needs retries > 0")
