"""What the admin client's cluster, config, group and log calls return.

Rule of this module: values only (named tuples and Kafka's enumerations),
no I/O, so the ``hmb`` tools and user code can build and read them without
starting a client.  Names follow kafka-python's and confluent-kafka's admin
clients where they have one (``ConfigResource``, ``ConfigEntry``,
``NewTopic``, ``OffsetSpec``), and the numbers are Kafka's wire codes.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

from hmb_client.structs import TopicPartition


class ConfigResourceType(IntEnum):
    """DescribeConfigs/AlterConfigs ``resource_type`` codes."""

    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8


class ConfigSource(IntEnum):
    """Where a config value comes from, most specific first (DescribeConfigs ``config_source``)."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8

    @classmethod
    def of(cls, code: int) -> ConfigSource:
        return cls(code) if code in cls._value2member_map_ else cls.UNKNOWN


class AlterConfigOpType(IntEnum):
    """IncrementalAlterConfigs ``config_operation`` codes."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


class ConfigResource(NamedTuple):
    """A topic (``name`` = the topic) or a broker (``name`` = its id; "" = the cluster-wide default)."""

    restype: ConfigResourceType
    name: str

    @classmethod
    def topic(cls, name: str) -> ConfigResource:
        return cls(ConfigResourceType.TOPIC, name)

    @classmethod
    def broker(cls, broker_id: int | str = "") -> ConfigResource:
        return cls(ConfigResourceType.BROKER, str(broker_id))


class ConfigSynonym(NamedTuple):
    """A lower-precedence value of the same setting (e.g. the broker default under a topic override)."""

    name: str
    value: str | None
    source: ConfigSource


class ConfigEntry(NamedTuple):
    """One setting of a resource as DescribeConfigs reports it."""

    name: str
    value: str | None  # None: sensitive, or no value
    source: ConfigSource
    read_only: bool
    sensitive: bool
    synonyms: tuple[ConfigSynonym, ...] = ()
    config_type: int = 0  # v3+: Kafka's ConfigType code (0 unknown)
    documentation: str | None = None

    @property
    def is_default(self) -> bool:
        return self.source == ConfigSource.DEFAULT_CONFIG


class AlterConfigOp(NamedTuple):
    """One change of IncrementalAlterConfigs: set, delete (back to the default), append or subtract."""

    name: str
    op: AlterConfigOpType
    value: str | None = None


class NewTopic(NamedTuple):
    """A topic to create; -1 leaves the count or replication to the broker (CreateTopics v4+)."""

    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    configs: dict[str, str] = {}  # a NamedTuple default, never mutated here


class CreatedTopic(NamedTuple):
    """What CreateTopics answered; the count, replication and configs only from v5 (else -1, {})."""

    name: str
    num_partitions: int
    replication_factor: int
    configs: dict[str, str | None]


class GroupListing(NamedTuple):
    """One group of ListGroups; ``state`` is "" when neither ListGroups nor DescribeGroups said."""

    group_id: str
    protocol_type: str
    state: str


class MemberDescription(NamedTuple):
    """A group member; ``assignment`` and ``topics`` decoded when the group speaks the consumer protocol."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    assignment: tuple[TopicPartition, ...]
    topics: tuple[str, ...]


class GroupDescription(NamedTuple):
    """DescribeGroups' answer for one group ("Dead" and no members: the group does not exist)."""

    group_id: str
    state: str
    protocol_type: str
    protocol: str  # the assignor, e.g. "range"
    members: tuple[MemberDescription, ...]
    coordinator: int


class Node(NamedTuple):
    node_id: int
    host: str
    port: int
    rack: str | None = None


class ClusterDescription(NamedTuple):
    cluster_id: str
    controller_id: int
    brokers: tuple[Node, ...]


class ReplicaInfo(NamedTuple):
    """One partition in a log directory: bytes on disk and how far a future replica lags."""

    size: int
    offset_lag: int
    is_future: bool


class LogDirDescription(NamedTuple):
    path: str
    error_code: int
    partitions: dict[TopicPartition, ReplicaInfo]
    total_bytes: int = -1  # v4+
    usable_bytes: int = -1  # v4+


class ProducerState(NamedTuple):
    """An idempotent or transactional producer active on a partition (DescribeProducers)."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int
    current_transaction_start_offset: int  # -1: no open transaction


class OffsetSpec(IntEnum):
    """The special times of ListOffsets; any other value is a timestamp in ms (first offset at/after)."""

    LATEST = -1
    EARLIEST = -2
    MAX_TIMESTAMP = -3  # v7+: the offset of the record with the largest timestamp
    EARLIEST_LOCAL = -4  # v8+
    LATEST_TIERED = -5  # v9+


#: The lowest ListOffsets version that knows each special time (a timestamp needs v1).
OFFSET_SPEC_VERSION = {
    OffsetSpec.LATEST: 0,
    OffsetSpec.EARLIEST: 0,
    OffsetSpec.MAX_TIMESTAMP: 7,
    OffsetSpec.EARLIEST_LOCAL: 8,
    OffsetSpec.LATEST_TIERED: 9,
}


class ListOffsetsResult(NamedTuple):
    """ListOffsets' answer: the offset (-1: none at or after the time), its timestamp and leader epoch."""

    offset: int
    timestamp: int
    leader_epoch: int = -1
