"""The pytest plugin's fixtures with real clients: librdkafka, kafka-python and aiokafka, groups included."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

import pytest

pytestmark = pytest.mark.interop


def test_confluent_kafka_group_round_trip(hmb_bootstrap: str, hmb_topic: Callable[..., str]) -> None:
    from confluent_kafka import Consumer, Producer

    topic = hmb_topic(partitions=2)
    producer = Producer({"bootstrap.servers": hmb_bootstrap, "enable.idempotence": True})
    for i in range(10):
        producer.produce(topic, key=b"k%d" % i, value=b"v%d" % i)
    assert producer.flush(10) == 0
    consumer = Consumer(
        {"bootstrap.servers": hmb_bootstrap, "group.id": f"g-{uuid.uuid4()}", "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    got: list[bytes] = []
    for _ in range(100):
        if len(got) >= 10:
            break
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            got.append(msg.value())
    consumer.close()
    assert sorted(got) == sorted(b"v%d" % i for i in range(10))


def test_kafka_python_group_commits(hmb_broker, hmb_bootstrap_servers: str) -> None:  # type: ignore[no-untyped-def]
    from kafka import KafkaConsumer, KafkaProducer

    topic = hmb_broker.create_topic(f"kp-{uuid.uuid4().hex[:8]}")
    producer = KafkaProducer(bootstrap_servers=hmb_bootstrap_servers)
    for i in range(5):
        producer.send(topic, b"m%d" % i)
    producer.flush()
    producer.close()
    group = f"kp-{uuid.uuid4().hex[:8]}"
    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=hmb_bootstrap_servers,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        consumer_timeout_ms=10_000,
    )
    got = []
    for msg in consumer:
        got.append(msg.value)
        if len(got) == 5:
            break
    consumer.commit()
    consumer.close()
    assert got == [b"m%d" % i for i in range(5)]
    assert hmb_broker.committed(group) == {(topic, 0): 5}


def test_aiokafka_on_a_fresh_broker(hmb_fresh_broker) -> None:  # type: ignore[no-untyped-def]
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    topic = hmb_fresh_broker.create_topic("aio")

    async def main() -> list[bytes]:
        producer = AIOKafkaProducer(bootstrap_servers=hmb_fresh_broker.bootstrap_servers)
        await producer.start()
        for i in range(3):
            await producer.send_and_wait(topic, b"a%d" % i)
        await producer.stop()
        consumer = AIOKafkaConsumer(
            topic,
            bootstrap_servers=hmb_fresh_broker.bootstrap_servers,
            group_id="aio-group",
            auto_offset_reset="earliest",
        )
        await consumer.start()
        try:
            got = []
            while len(got) < 3:
                batch = await asyncio.wait_for(consumer.getmany(timeout_ms=500), 20)
                got += [m.value for msgs in batch.values() for m in msgs]
            await consumer.commit()
            return got
        finally:
            await consumer.stop()

    assert asyncio.run(main()) == [b"a0", b"a1", b"a2"]
    assert hmb_fresh_broker.committed("aio-group") == {(topic, 0): 3}
    assert hmb_fresh_broker.topics().keys() >= {topic}
