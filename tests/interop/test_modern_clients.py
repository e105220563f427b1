"""Today's clients with their DEFAULT settings (no legacy flags) against the real broker.

librdkafka (confluent-kafka) negotiates with ApiVersions and produces RecordBatch v2
through Produce v7+ and reads with Fetch v11 in read_committed; kafka-python guesses
the broker release from the advertised table and is then an idempotent producer
(InitProducerId); aiokafka and kcat (librdkafka 2.0.2) likewise.  What they write must
come back byte-identical, in order, at the right offsets -- also to legacy-mode clients,
which the broker serves by down-converting (Fetch v0-v3).
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from typing import Any

import pytest
from broker_process import LEGACY_RDKAFKA, BrokerProcess, rdkafka_read_back

pytestmark = pytest.mark.interop

confluent_kafka = pytest.importorskip("confluent_kafka")
kafka = pytest.importorskip("kafka")

KCAT = shutil.which("kcat") or shutil.which("kafkacat")
QUIET = {"log_level": 3}


def _value(i: int) -> bytes:
    return b"%07d|" % i + bytes((i * 13 + k) % 256 for k in range(60 + i % 50))


def _expected(n: int) -> list[tuple[int, bytes | None, bytes]]:
    return [(i, None if i % 7 == 0 else b"key-%d" % i, _value(i)) for i in range(n)]


def _ck_produce(bootstrap: str, topic: str, n: int, **conf: Any) -> None:
    p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, **QUIET, **conf})
    errors: list[Any] = []

    def report(err: Any, _msg: Any) -> None:
        if err is not None:
            errors.append(err)

    for i, key, value in _expected(n):
        p.produce(
            topic, value, key, partition=0, headers=[("n", b"%d" % i), ("empty", None)], on_delivery=report
        )
        p.poll(0)
    assert p.flush(60) == 0
    assert errors == []


def _ck_consume(bootstrap: str, topic: str, n: int, *, timeout: float = 60, **conf: Any) -> list[Any]:
    c = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "modern-read",
            "enable.auto.commit": False,
            **QUIET,
            **conf,
        }
    )
    try:
        c.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
        got: list[Any] = []
        deadline = time.monotonic() + timeout
        while len(got) < n and time.monotonic() < deadline:
            for m in c.consume(1000, 0.2):
                assert not m.error(), m.error()
                got.append(m)
        return got
    finally:
        c.close()


def _triples(msgs: list[Any]) -> list[tuple[int, bytes | None, bytes]]:
    return [(m.offset(), m.key(), m.value()) for m in msgs]


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_confluent_default_produce_and_assign_consume(broker: BrokerProcess, codec: str) -> None:
    n = 3000
    topic = f"ck-modern-{codec}"
    _ck_produce(broker.bootstrap, topic, n, **{"compression.codec": codec, "linger.ms": 5})
    got = _ck_consume(broker.bootstrap, topic, n)
    assert _triples(got) == _expected(n)
    assert [m.headers() for m in got[:2]] == [[("n", b"0"), ("empty", None)], [("n", b"1"), ("empty", None)]]
    assert all(m.timestamp()[0] == confluent_kafka.TIMESTAMP_CREATE_TIME for m in got)


def test_confluent_idempotent_producer(broker: BrokerProcess) -> None:
    n = 2000
    _ck_produce(broker.bootstrap, "ck-idem", n, **{"enable.idempotence": True, "linger.ms": 2})
    assert _triples(_ck_consume(broker.bootstrap, "ck-idem", n)) == _expected(n)
    assert "reserved producer ids" in broker.log_text()


def test_kafka_python_default_producer_and_consumer(broker: BrokerProcess) -> None:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    n = 1500
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)  # idempotent, RecordBatch v2
    futures = [producer.send("kp-modern", key=k, value=v, partition=0) for _i, k, v in _expected(n)]
    producer.flush()
    assert [f.get(timeout=30).offset for f in futures] == list(range(n))
    producer.close()
    assert "reserved producer ids" in broker.log_text()  # it did call InitProducerId

    consumer = KafkaConsumer(
        bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=5000
    )
    consumer.assign([TopicPartition("kp-modern", 0)])
    seen = [(m.offset, m.key, m.value) for m in consumer]
    consumer.close()
    assert seen == _expected(n)
    # an independent reader agrees
    assert _triples(_ck_consume(broker.bootstrap, "kp-modern", n)) == _expected(n)


def test_aiokafka_default_producer(broker: BrokerProcess) -> None:
    aiokafka = pytest.importorskip("aiokafka")
    n = 1000

    async def produce() -> list[int]:
        producer = aiokafka.AIOKafkaProducer(bootstrap_servers=broker.bootstrap)
        await producer.start()
        try:
            futures = [
                await producer.send("aio-modern", key=k, value=v, partition=0) for _i, k, v in _expected(n)
            ]
            return [(await f).offset for f in futures]
        finally:
            await producer.stop()

    assert asyncio.run(produce()) == list(range(n))

    async def consume() -> list[tuple[int, bytes | None, bytes]]:
        consumer = aiokafka.AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest")
        await consumer.start()
        try:
            consumer.assign([aiokafka.TopicPartition("aio-modern", 0)])
            out: list[tuple[int, bytes | None, bytes]] = []
            deadline = time.monotonic() + 60
            while len(out) < n and time.monotonic() < deadline:
                batches = await consumer.getmany(timeout_ms=500)
                for msgs in batches.values():
                    out += [(m.offset, m.key, m.value) for m in msgs]
            return out
        finally:
            await consumer.stop()

    assert asyncio.run(consume()) == _expected(n)


@pytest.mark.skipif(KCAT is None, reason="kcat is not installed (Debian package 'kcat')")
def test_kcat_default_produce_and_consume(broker: BrokerProcess) -> None:
    assert KCAT is not None
    lines = "".join(f"key{i}:line {i}\n" for i in range(300))
    subprocess.run(
        [KCAT, "-P", "-b", broker.bootstrap, "-t", "kc-modern", "-p", "0", "-K:"],
        input=lines,
        text=True,
        check=True,
        timeout=60,
        capture_output=True,
    )
    out = subprocess.run(
        [KCAT, "-C", "-b", broker.bootstrap, "-t", "kc-modern", "-p", "0", "-o", "beginning", "-e",
         "-f", "%o %k %s\n"],
        text=True,
        check=True,
        timeout=60,
        capture_output=True,
    )  # fmt: skip
    assert out.stdout.splitlines() == [f"{i} key{i} line {i}" for i in range(300)]


# ---------------------------------------------------------------- across the formats


@pytest.mark.parametrize("codec", ["none", "gzip", "lz4"])
def test_modern_data_read_by_legacy_clients(broker: BrokerProcess, codec: str) -> None:
    """RecordBatches read back by clients that only know MessageSets: Fetch v0 (magic 0) and v2 (magic 1)."""
    from kafka import KafkaConsumer, TopicPartition

    n = 1200
    topic = f"downconv-{codec}"
    _ck_produce(broker.bootstrap, topic, n, **{"compression.codec": codec, "linger.ms": 5})
    legacy_rd = rdkafka_read_back(broker.bootstrap, topic, 0, n)
    assert _triples(legacy_rd) == _expected(n)
    for api_version in ((0, 8, 2), (0, 10)):
        consumer = KafkaConsumer(
            bootstrap_servers=broker.bootstrap,
            api_version=api_version,
            auto_offset_reset="earliest",
            consumer_timeout_ms=5000,
        )
        consumer.assign([TopicPartition(topic, 0)])
        seen = [(m.offset, m.key, m.value, m.timestamp) for m in consumer]
        consumer.close()
        assert [s[:3] for s in seen] == _expected(n), api_version
        if api_version == (0, 10):  # magic 1 keeps the producer's timestamps
            assert all(s[3] > 1_600_000_000_000 for s in seen)


def test_legacy_data_read_by_default_clients(broker: BrokerProcess) -> None:
    """MessageSets written by a 0.8.2-mode producer, read by today's clients (no up-conversion needed)."""
    from kafka import KafkaConsumer, TopicPartition

    n = 800
    p = confluent_kafka.Producer(
        {"bootstrap.servers": broker.bootstrap, **LEGACY_RDKAFKA, "compression.codec": "gzip"}
    )
    for _i, key, value in _expected(n):
        p.produce("legacy-to-modern", value, key, partition=0)
    assert p.flush(60) == 0
    assert _triples(_ck_consume(broker.bootstrap, "legacy-to-modern", n)) == _expected(n)
    consumer = KafkaConsumer(
        bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=5000
    )
    consumer.assign([TopicPartition("legacy-to-modern", 0)])
    assert [(m.offset, m.key, m.value) for m in consumer] == _expected(n)
    consumer.close()


def test_default_consumer_gets_large_message_over_fetch_limits(broker: BrokerProcess) -> None:
    """A record larger than the consumer's fetch limits still arrives (the first-batch rule)."""
    big = bytes(range(256)) * 3000  # 768 kB
    _p = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap, **QUIET})
    _p.produce("big-msg", big, b"k", partition=0)
    assert _p.flush(30) == 0
    got = _ck_consume(
        broker.bootstrap,
        "big-msg",
        1,
        **{
            "fetch.max.bytes": 100_000,
            "message.max.bytes": 100_000,
            "max.partition.fetch.bytes": 10_000,
            "receive.message.max.bytes": 2_000_000,
        },
    )
    assert [m.value() for m in got] == [big]
