"""Admin configs and topic shape against the real broker: DescribeConfigs,
AlterConfigs, IncrementalAlterConfigs, CreateTopics with configs and
validate_only, CreatePartitions (skipped until hmb serves it; run against
Tansu where Tansu serves the API).
"""

from __future__ import annotations

from typing import Any

import pytest
from admin_support import needs_hmb
from test_modern_wire import negotiated

from hmb_client.admin import Admin, TopicAlreadyExistsError
from hmb_client.admin_types import (
    AlterConfigOp,
    AlterConfigOpType,
    ConfigResource,
    ConfigSource,
    NewTopic,
)
from hmb_client.errors import InvalidConfigError, InvalidPartitionsError, UnknownTopicOrPartitionError
from kproto import ApiKey

SET, DELETE = AlterConfigOpType.SET, AlterConfigOpType.DELETE


def test_create_topics_with_configs_then_describe_them(in_process_broker: Any) -> None:
    with Admin(in_process_broker.bootstrap) as admin:
        created = admin.create_topics(
            [NewTopic("audit", 3, -1, {"retention.ms": "60000", "cleanup.policy": "compact"})]
        )
        assert set(created) == {"audit"}
        assert len(admin.describe_topic("audit").partitions) == 3
        topic = ConfigResource.topic("audit")
        entries = admin.describe_configs([topic])[topic]
        retention = entries["retention.ms"]
        assert (retention.value, retention.source) == ("60000", ConfigSource.DYNAMIC_TOPIC_CONFIG)
        assert not retention.read_only and not retention.sensitive
        # the topic override comes first among the synonyms, the broker's default after it
        assert retention.synonyms[0].source == ConfigSource.DYNAMIC_TOPIC_CONFIG
        assert ("log.retention.ms", ConfigSource.DEFAULT_CONFIG) in [
            (s.name, s.source) for s in retention.synonyms
        ]
        assert entries["cleanup.policy"].value == "compact"
        assert entries["segment.bytes"].source != ConfigSource.DYNAMIC_TOPIC_CONFIG  # not set: a default
        with pytest.raises(TopicAlreadyExistsError):
            admin.create_topics([NewTopic("audit", 1)])


def test_create_topics_validate_only_creates_nothing_and_bad_configs_are_refused(
    in_process_broker: Any,
) -> None:
    with Admin(in_process_broker.bootstrap) as admin:
        admin.create_topics([NewTopic("checked", 2, -1, {"retention.ms": "1000"})], validate_only=True)
        assert "checked" not in admin.topic_names()
        with pytest.raises(InvalidConfigError, match=r"no\.such\.setting"):
            admin.create_topics([NewTopic("bad", 1, -1, {"no.such.setting": "1"})])
        assert "bad" not in admin.topic_names()


def test_create_topic_with_configs_through_the_simple_call(in_process_broker: Any) -> None:
    with Admin(in_process_broker.bootstrap) as admin:
        admin.create_topic("simple", num_partitions=2, configs={"max.message.bytes": "4096"})
        topic = ConfigResource.topic("simple")
        assert admin.describe_configs([topic])[topic]["max.message.bytes"].value == "4096"


def test_incremental_alter_sets_and_deletes_only_what_it_names(in_process_broker: Any) -> None:
    with Admin(in_process_broker.bootstrap) as admin:
        admin.create_topics([NewTopic("inc", 1, -1, {"retention.ms": "1000", "flush.ms": "50"})])
        topic = ConfigResource.topic("inc")
        admin.incremental_alter_configs(
            {topic: [AlterConfigOp("retention.ms", SET, "7000"), AlterConfigOp("flush.ms", DELETE)]}
        )
        entries = admin.describe_configs([topic])[topic]
        assert (entries["retention.ms"].value, entries["retention.ms"].source) == (
            "7000",
            ConfigSource.DYNAMIC_TOPIC_CONFIG,
        )
        assert entries["flush.ms"].source != ConfigSource.DYNAMIC_TOPIC_CONFIG  # back to the default
        admin.incremental_alter_configs(
            {topic: [AlterConfigOp("retention.ms", SET, "1")]}, validate_only=True
        )
        assert admin.describe_configs([topic])[topic]["retention.ms"].value == "7000"
        with pytest.raises(InvalidConfigError):
            admin.incremental_alter_configs({topic: [AlterConfigOp("retention.ms", SET, "soon")]})
        assert admin.describe_configs([topic])[topic]["retention.ms"].value == "7000"


def test_alter_configs_replaces_the_whole_set(in_process_broker: Any) -> None:
    with Admin(in_process_broker.bootstrap) as admin:
        admin.create_topics([NewTopic("legacy", 1, -1, {"retention.ms": "1000", "flush.ms": "50"})])
        topic = ConfigResource.topic("legacy")
        admin.alter_configs({topic: {"retention.ms": "2000"}})
        entries = admin.describe_configs([topic])[topic]
        assert entries["retention.ms"].value == "2000"
        assert entries["flush.ms"].source != ConfigSource.DYNAMIC_TOPIC_CONFIG  # left out: reset


def test_broker_configs_default_and_per_broker(in_process_broker: Any) -> None:
    with Admin(in_process_broker.bootstrap) as admin:
        (node,) = admin.brokers()
        broker = ConfigResource.broker(node.node_id)
        default = ConfigResource.broker()
        entries = admin.describe_configs([broker])[broker]
        assert "log.retention.ms" in entries
        admin.incremental_alter_configs({default: [AlterConfigOp("log.retention.ms", SET, "3600000")]})
        got = admin.describe_configs([broker, default])
        assert got[default]["log.retention.ms"].value == "3600000"
        assert got[default]["log.retention.ms"].source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
        assert got[broker]["log.retention.ms"].value == "3600000"  # the default reaches each broker
        with pytest.raises(UnknownTopicOrPartitionError):
            admin.describe_configs([ConfigResource.topic("never-made")])


# ---------------------------------------------------------------- CreatePartitions


@needs_hmb(ApiKey.CREATE_PARTITIONS)
def test_create_partitions_grows_and_never_shrinks(in_process_broker: Any) -> None:
    with Admin(in_process_broker.bootstrap) as admin:
        admin.create_topic("grow", num_partitions=2)
        admin.create_partitions({"grow": 5}, validate_only=True)
        assert len(admin.describe_topic("grow").partitions) == 2
        admin.create_partitions({"grow": 5})
        assert [p.partition for p in admin.describe_topic("grow").partitions] == list(range(5))
        with pytest.raises(InvalidPartitionsError):
            admin.create_partitions({"grow": 3})
        assert len(admin.describe_topic("grow").partitions) == 5


# ---------------------------------------------------------------- against Tansu, where it serves the API


def test_tansu_describe_configs_and_create_with_configs(tansu: Any) -> None:
    served = negotiated(tansu.bootstrap)
    if ApiKey.DESCRIBE_CONFIGS not in served:
        pytest.skip("this Tansu does not serve DescribeConfigs")
    with Admin(tansu.bootstrap) as admin:
        admin.create_topics([NewTopic("tconf", 1, -1, {"retention.ms": "60000"})])
        topic = ConfigResource.topic("tconf")
        entries = admin.describe_configs([topic])[topic]
        assert entries, "Tansu described no configs"
        assert all(e.name == name for name, e in entries.items())


def test_tansu_create_partitions_when_served(tansu: Any) -> None:
    if ApiKey.CREATE_PARTITIONS not in negotiated(tansu.bootstrap):
        pytest.skip("this Tansu does not serve CreatePartitions")
    with Admin(tansu.bootstrap) as admin:
        admin.create_topic("tgrow", num_partitions=1)
        admin.create_partitions({"tgrow": 3})
        assert len(admin.describe_topic("tgrow").partitions) == 3
