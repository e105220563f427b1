"""Topic and broker settings through real admin clients: confluent-kafka and kafka-python.

Create a topic with settings, read them back with their sources, change
them incrementally and as a whole, and change a broker default at run time;
a bad setting comes back as the client's own INVALID_CONFIG error.
"""

from __future__ import annotations

import pytest
from broker_process import BrokerProcess

pytestmark = pytest.mark.interop

ck_admin = pytest.importorskip("confluent_kafka.admin")
ck = pytest.importorskip("confluent_kafka")
kafka_admin = pytest.importorskip("kafka.admin")


def test_confluent_kafka_admin_configs(broker: BrokerProcess) -> None:
    admin = ck_admin.AdminClient({"bootstrap.servers": broker.bootstrap, "log_level": 3})
    topic = ck_admin.NewTopic(
        "ck-configs", 2, 1, config={"retention.ms": "86400000", "segment.bytes": "1048576"}
    )
    admin.create_topics([topic])["ck-configs"].result(30)

    resource = ck_admin.ConfigResource(ck_admin.ResourceType.TOPIC, "ck-configs")
    entries = admin.describe_configs([resource])[resource].result(30)
    assert entries["retention.ms"].value == "86400000"
    assert entries["retention.ms"].source == ck_admin.ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert entries["cleanup.policy"].value == "delete"
    assert entries["cleanup.policy"].source == ck_admin.ConfigSource.DEFAULT_CONFIG.value

    change = ck_admin.ConfigResource(
        ck_admin.ResourceType.TOPIC,
        "ck-configs",
        incremental_configs=[
            ck_admin.ConfigEntry(
                "max.message.bytes", "2048", incremental_operation=ck_admin.AlterConfigOpType.SET
            ),
            ck_admin.ConfigEntry(
                "retention.ms", None, incremental_operation=ck_admin.AlterConfigOpType.DELETE
            ),
        ],
    )
    admin.incremental_alter_configs([change])[change].result(30)
    entries = admin.describe_configs([resource])[resource].result(30)
    assert entries["max.message.bytes"].value == "2048"
    assert entries["retention.ms"].source == ck_admin.ConfigSource.DEFAULT_CONFIG.value

    bad = ck_admin.ConfigResource(
        ck_admin.ResourceType.TOPIC,
        "ck-configs",
        incremental_configs=[
            ck_admin.ConfigEntry("retention.ms", "soon", incremental_operation=ck_admin.AlterConfigOpType.SET)
        ],
    )
    with pytest.raises(ck.KafkaException) as refused:
        admin.incremental_alter_configs([bad])[bad].result(30)
    assert refused.value.args[0].code() == ck.KafkaError.INVALID_CONFIG

    broker_resource = ck_admin.ConfigResource(ck_admin.ResourceType.BROKER, "0")
    broker_entries = admin.describe_configs([broker_resource])[broker_resource].result(30)
    assert broker_entries["log.dirs"].is_read_only
    assert not broker_entries["log.retention.ms"].is_read_only


def test_kafka_python_admin_configs(broker: BrokerProcess) -> None:
    admin = kafka_admin.KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics(
            [kafka_admin.NewTopic("kp-configs", 1, 1, topic_configs={"retention.bytes": "1000000"})]
        )
        resource = kafka_admin.ConfigResource(kafka_admin.ConfigResourceType.TOPIC, "kp-configs")
        configs = admin.describe_configs([resource])["topic"]["kp-configs"]
        assert configs["retention.bytes"]["value"] == "1000000"
        assert configs["retention.bytes"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"
        assert configs["retention.bytes"]["config_type"] == "LONG"
        admin.alter_configs(
            [
                kafka_admin.ConfigResource(
                    kafka_admin.ConfigResourceType.TOPIC, "kp-configs", configs={"segment.ms": "60000"}
                )
            ]
        )
        configs = admin.describe_configs([resource])["topic"]["kp-configs"]
        assert configs["segment.ms"]["value"] == "60000"
    finally:
        admin.close()
