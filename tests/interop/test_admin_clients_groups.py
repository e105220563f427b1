"""Partitions, groups, the cluster and the log dirs through real admin clients.

confluent-kafka (librdkafka), kafka-python and aiokafka against the broker
process: topics grow and keyed records reach the new partitions, group
offsets are altered, listed and deleted, groups described and deleted, the
cluster and the log dirs described; refusals come back as the clients' own
errors.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from broker_process import BrokerProcess

pytestmark = pytest.mark.interop

ck_admin = pytest.importorskip("confluent_kafka.admin")
ck = pytest.importorskip("confluent_kafka")
kafka_admin = pytest.importorskip("kafka.admin")
kafka_errors = pytest.importorskip("kafka.errors")
kafka_structs = pytest.importorskip("kafka.structs")
aiokafka_admin = pytest.importorskip("aiokafka.admin")


def watermarks(bootstrap: str, topic: str, partitions: int) -> list[int]:
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "watermarks", "log_level": 3})
    try:
        return [
            c.get_watermark_offsets(ck.TopicPartition(topic, p), timeout=10)[1] for p in range(partitions)
        ]
    finally:
        c.close()


def test_confluent_kafka_partitions_groups_cluster(broker: BrokerProcess) -> None:
    admin = ck_admin.AdminClient({"bootstrap.servers": broker.bootstrap, "log_level": 3})
    admin.create_topics([ck_admin.NewTopic("ck-grow", 1, 1)])["ck-grow"].result(30)
    admin.create_partitions([ck_admin.NewPartitions("ck-grow", 3)])["ck-grow"].result(30)
    assert len(admin.list_topics("ck-grow", timeout=10).topics["ck-grow"].partitions) == 3
    with pytest.raises(ck.KafkaException) as refused:
        admin.create_partitions([ck_admin.NewPartitions("ck-grow", 2)])["ck-grow"].result(30)
    assert refused.value.args[0].code() == ck.KafkaError.INVALID_PARTITIONS
    assert len(admin.list_topics("ck-grow", timeout=10).topics["ck-grow"].partitions) == 3

    # a keyed producer spreads over the new partitions (its metadata refreshed)
    producer = ck.Producer({"bootstrap.servers": broker.bootstrap, "log_level": 3})
    for i in range(90):
        producer.produce("ck-grow", key=f"key-{i}".encode(), value=b"v")
    assert producer.flush(30) == 0
    marks = watermarks(broker.bootstrap, "ck-grow", 3)
    assert sum(marks) == 90 and all(m > 0 for m in marks), marks

    tp = ck.TopicPartition("ck-grow", 1, 7)
    group = ck.ConsumerGroupTopicPartitions("ck-group", [tp])
    admin.alter_consumer_group_offsets([group])["ck-group"].result(30)
    listed = admin.list_consumer_group_offsets([ck.ConsumerGroupTopicPartitions("ck-group")])
    assert [(p.topic, p.partition, p.offset) for p in listed["ck-group"].result(30).topic_partitions] == [
        ("ck-grow", 1, 7)
    ]
    groups = admin.list_consumer_groups().result(30)
    assert "ck-group" in {g.group_id for g in groups.valid}
    described = admin.describe_consumer_groups(["ck-group"])["ck-group"].result(30)
    assert (described.group_id, list(described.members)) == ("ck-group", [])

    # librdkafka describes the cluster with a Metadata request, not DescribeCluster
    cluster = admin.describe_cluster().result(30)
    assert cluster.controller.id == 0 and [n.id for n in cluster.nodes] == [0]
    assert cluster.cluster_id

    admin.delete_consumer_groups(["ck-group"])["ck-group"].result(30)
    with pytest.raises(ck.KafkaException) as unknown:
        admin.delete_consumer_groups(["ck-group"])["ck-group"].result(30)
    assert unknown.value.args[0].code() == ck.KafkaError.GROUP_ID_NOT_FOUND
    asked = [ck.ConsumerGroupTopicPartitions("ck-group", [ck.TopicPartition("ck-grow", 1)])]
    after = admin.list_consumer_group_offsets(asked)
    assert [p.offset for p in after["ck-group"].result(30).topic_partitions] == [ck.OFFSET_INVALID]


def test_kafka_python_partitions_groups_log_dirs(broker: BrokerProcess) -> None:
    admin = kafka_admin.KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics([kafka_admin.NewTopic("kp-grow", 1, 1)])
        admin.create_partitions({"kp-grow": kafka_admin.NewPartitions(4)})
        with pytest.raises(kafka_errors.InvalidPartitionsError):
            admin.create_partitions({"kp-grow": kafka_admin.NewPartitions(4)})
        tp = kafka_structs.TopicPartition("kp-grow", 3)
        admin.alter_group_offsets("kp-group", {tp: kafka_structs.OffsetAndMetadata(11, "", -1)})
        offsets = admin.list_group_offsets({"kp-group": [tp]})["kp-group"]
        assert offsets[tp].offset == 11
        cluster = admin.describe_cluster()
        assert cluster["controller_id"] == 0 and [b["broker_id"] for b in cluster["brokers"]] == [0], cluster
        dirs: Any = admin.describe_log_dirs()
        text = repr(dirs)
        assert "kp-grow" in text, text
        assert dict(admin.delete_groups(["kp-group", "kp-unknown"])) == {
            "kp-group": "OK",
            "kp-unknown": "GroupIdNotFoundError",
        }
        offsets = admin.list_group_offsets({"kp-group": [tp]})["kp-group"]
        assert offsets[tp].offset == -1
    finally:
        admin.close()


def test_aiokafka_admin(broker: BrokerProcess) -> None:
    async def main() -> None:
        admin = aiokafka_admin.AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
        await admin.start()
        try:
            await admin.create_topics([aiokafka_admin.NewTopic("aio-grow", 1, 1)])
            await admin.create_partitions({"aio-grow": aiokafka_admin.NewPartitions(2)})
            described = await admin.describe_topics(["aio-grow"])
            assert len(described[0]["partitions"]) == 2
            cluster = await admin.describe_cluster()
            assert cluster["controller_id"] == 0 and cluster["cluster_id"]
        finally:
            await admin.close()

    asyncio.run(main())
