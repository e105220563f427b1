"""Real consumers use incremental fetch sessions (KIP-227) against hmb and still read everything.

A consumer opens a session with its first full fetch (epoch 0) when the
broker offers one, then sends incremental fetches naming only what changed.
The broker's session cache counts both; here each client consumes several
partitions to the end, and every record must come back once, in order,
whatever the session left out of an answer.  kafka-python uses sessions;
librdkafka 2.16 asks for none (session epoch -1, full fetches) and must be
served as before.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from broker_process import InProcessBroker

pytestmark = pytest.mark.interop

kafka = pytest.importorskip("kafka")
confluent_kafka = pytest.importorskip("confluent_kafka")

PARTITIONS = 3
PER_PARTITION = 300


def _fill(bootstrap: str, topic: str) -> None:
    producer = kafka.KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    for i in range(PER_PARTITION):
        for p in range(PARTITIONS):
            producer.send(topic, b"%d-%d" % (p, i), partition=p)
    producer.flush(60)
    producer.close()


def _expected() -> dict[int, list[bytes]]:
    return {p: [b"%d-%d" % (p, i) for i in range(PER_PARTITION)] for p in range(PARTITIONS)}


def _sessions(b: InProcessBroker) -> Any:
    return b.control.broker.services.fetch_sessions


def test_kafka_python_consumes_through_a_fetch_session(in_process_broker: InProcessBroker) -> None:
    b = in_process_broker
    b.create_topic("sess-kp", PARTITIONS)
    _fill(b.bootstrap, "sess-kp")
    consumer = kafka.KafkaConsumer(
        bootstrap_servers=b.bootstrap,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        fetch_max_bytes=4096,
    )
    consumer.assign([kafka.TopicPartition("sess-kp", p) for p in range(PARTITIONS)])
    got: dict[int, list[bytes]] = {p: [] for p in range(PARTITIONS)}
    deadline = time.monotonic() + 60
    while sum(map(len, got.values())) < PARTITIONS * PER_PARTITION and time.monotonic() < deadline:
        for tp, records in consumer.poll(timeout_ms=200).items():
            got[tp.partition].extend(r.value for r in records)
    consumer.close()
    assert got == _expected()
    sessions = _sessions(b)
    assert sessions is not None and sessions.created >= 1
    assert sessions.incremental_fetches >= 1  # the later fetches name only what changed


def test_librdkafka_consumes_correctly_with_sessions_offered(in_process_broker: InProcessBroker) -> None:
    b = in_process_broker
    b.create_topic("sess-rd", PARTITIONS)
    _fill(b.bootstrap, "sess-rd")
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": b.bootstrap,
            "group.id": "sess-rd",
            "enable.auto.commit": False,
            "fetch.max.bytes": 4096,
            "message.max.bytes": 4096,
            "log_level": 3,
        }
    )
    consumer.assign([confluent_kafka.TopicPartition("sess-rd", p, 0) for p in range(PARTITIONS)])
    got: dict[int, list[bytes]] = {p: [] for p in range(PARTITIONS)}
    deadline = time.monotonic() + 60
    while sum(map(len, got.values())) < PARTITIONS * PER_PARTITION and time.monotonic() < deadline:
        for m in consumer.consume(500, 0.2):
            assert not m.error(), m.error()
            got[m.partition()].append(m.value())
    consumer.close()
    assert got == _expected()
