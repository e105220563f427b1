"""aiokafka's admin client against the broker process: configs, partitions, records, groups.

Create a topic with settings and read them back with their sources and
synonyms; alter them (AlterConfigs replaces a topic's whole set, as Kafka's
does; a bad value is INVALID_CONFIG and changes nothing); describe the
broker's settings; grow a topic (validate-only first; fewer partitions is
refused); delete records (the consumer then starts at the new log start;
beyond the high watermark is refused); list, describe and read the offsets
of a group a real aiokafka consumer committed in.
aiokafka 0.14's admin client has no call to delete groups.
"""

from __future__ import annotations

import asyncio

import pytest
from broker_process import BrokerProcess

pytestmark = pytest.mark.interop

aiokafka = pytest.importorskip("aiokafka")
aiokafka_admin = pytest.importorskip("aiokafka.admin")
aiokafka_errors = pytest.importorskip("aiokafka.errors")
config_resource = pytest.importorskip("aiokafka.admin.config_resource")

TOPIC_SOURCE, DEFAULT_SOURCE, STATIC_SOURCE = 1, 5, 4


def entries_of(response: object) -> dict[str, dict[str, object]]:
    [resource] = response.to_object()["resources"]  # type: ignore[attr-defined]
    assert resource["error_code"] == 0, resource
    return {e["config_names"]: e for e in resource["config_entries"]}


def test_aiokafka_admin_configs_partitions_records_groups(broker: BrokerProcess) -> None:
    ConfigResource, Kind = config_resource.ConfigResource, config_resource.ConfigResourceType  # noqa: N806
    tp0 = aiokafka.TopicPartition("aio-admin", 0)

    async def main() -> None:
        admin = aiokafka_admin.AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
        await admin.start()
        try:
            settings = {"retention.ms": "3600000", "compression.type": "zstd"}
            created = await admin.create_topics(
                [aiokafka_admin.NewTopic("aio-admin", 2, 1, topic_configs=settings)]
            )
            assert [e[1] for e in created.topic_errors] == [0]
            topic = ConfigResource(Kind.TOPIC, "aio-admin")
            [described] = await admin.describe_configs([topic], include_synonyms=True)
            entries = entries_of(described)
            assert (entries["retention.ms"]["config_value"], entries["retention.ms"]["config_source"]) == (
                "3600000",
                TOPIC_SOURCE,
            )
            assert [s["config_name"] for s in entries["retention.ms"]["config_synonyms"]] == [
                "retention.ms",
                "log.retention.ms",
            ]
            assert entries["cleanup.policy"]["config_source"] == DEFAULT_SOURCE

            [altered] = await admin.alter_configs(
                [ConfigResource(Kind.TOPIC, "aio-admin", {"retention.ms": "7200000"})]
            )
            assert altered.resources[0][0] == 0
            [bad] = await admin.alter_configs(
                [ConfigResource(Kind.TOPIC, "aio-admin", {"retention.ms": "soon"})]
            )
            assert bad.resources[0][0] == aiokafka_errors.InvalidConfigurationError.errno
            entries = entries_of((await admin.describe_configs([topic]))[0])
            assert entries["retention.ms"]["config_value"] == "7200000"  # the bad value changed nothing
            # AlterConfigs replaces the whole set, as Kafka's does: compression.type is the default again
            assert (
                entries["compression.type"]["config_value"],
                entries["compression.type"]["config_source"],
            ) == (
                "producer",
                DEFAULT_SOURCE,
            )

            [brokers] = await admin.describe_configs([ConfigResource(Kind.BROKER, "0")])
            broker_entries = entries_of(brokers)
            assert broker_entries["log.retention.ms"]["config_value"] == "604800000"
            assert broker_entries["listeners"]["read_only"] is True

            dry = await admin.create_partitions(
                {"aio-admin": aiokafka_admin.NewPartitions(4)}, validate_only=True
            )
            assert [e[1] for e in dry.topic_errors] == [0]
            assert len((await admin.describe_topics(["aio-admin"]))[0]["partitions"]) == 2
            with pytest.raises(aiokafka_errors.InvalidPartitionsError):
                await admin.create_partitions({"aio-admin": aiokafka_admin.NewPartitions(1)})
            await admin.create_partitions({"aio-admin": aiokafka_admin.NewPartitions(3)})
            assert len((await admin.describe_topics(["aio-admin"]))[0]["partitions"]) == 3

            producer = aiokafka.AIOKafkaProducer(bootstrap_servers=broker.bootstrap, compression_type="gzip")
            await producer.start()
            try:
                for i in range(10):
                    await producer.send_and_wait("aio-admin", b"v%d" % i, partition=0)
            finally:
                await producer.stop()
            deleted = await admin.delete_records({tp0: aiokafka_admin.RecordsToDelete(4)})
            assert deleted == {tp0: 4}
            with pytest.raises(aiokafka_errors.OffsetOutOfRangeError):
                await admin.delete_records({tp0: aiokafka_admin.RecordsToDelete(40)})

            consumer = aiokafka.AIOKafkaConsumer(
                "aio-admin",
                bootstrap_servers=broker.bootstrap,
                group_id="aio-admin-group",
                auto_offset_reset="earliest",
                enable_auto_commit=False,
            )
            await consumer.start()
            try:
                got: list[tuple[int, bytes]] = []
                async with asyncio.timeout(30):
                    while len(got) < 6:
                        for messages in (await consumer.getmany(timeout_ms=500)).values():
                            got += [(m.offset, m.value) for m in messages]
                assert got == [(i, b"v%d" % i) for i in range(4, 10)]  # from the new log start
                await consumer.commit()
                assert ("aio-admin-group", "consumer") in await admin.list_consumer_groups()
                [group] = (await admin.describe_consumer_groups(["aio-admin-group"]))[0].groups
                assert (group[0], group[1], group[2], len(group[5])) == (0, "aio-admin-group", "Stable", 1)
                offsets = await admin.list_consumer_group_offsets("aio-admin-group")
                assert offsets[tp0].offset == 10
            finally:
                await consumer.stop()
            [group] = (await admin.describe_consumer_groups(["aio-admin-group"]))[0].groups
            assert (group[2], list(group[5])) == ("Empty", [])
        finally:
            await admin.close()

    asyncio.run(main())
