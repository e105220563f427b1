"""Real clients read a compacted topic from offset 0: librdkafka (confluent-kafka),
kafka-python (modern and 0.10 message format, down-converted) and aiokafka all get through
the holes cleaning leaves, the emptied batch kept for an idempotent producer, and
recompressed batches, with no error, and see exactly the latest value of every key
(tombstones included, within delete.retention.ms), each at the offset it was written at.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from broker_process import InProcessBroker

from hmb.log.cleaner.rewrite import Throttle, read_entries
from kproto.records.compact import entry_info, entry_records

pytestmark = pytest.mark.interop

confluent_kafka = pytest.importorskip("confluent_kafka")
ck_admin = pytest.importorskip("confluent_kafka.admin")
kafka = pytest.importorskip("kafka")

QUIET = {"log_level": 3}
TOPIC = "changelog"
KEYS = 40
UPDATES = 1_500
DELETED = {3, 17, 29}  # keys whose last update is a tombstone


def _value(i: int) -> bytes:
    return b"update-%06d|" % i + bytes((i * 7 + k) % 251 for k in range(80))


def _updates() -> list[tuple[bytes, bytes | None]]:
    out: list[tuple[bytes, bytes | None]] = [(b"key-%02d" % (i % KEYS), _value(i)) for i in range(UPDATES)]
    out += [(b"key-%02d" % k, None) for k in sorted(DELETED)]
    return out


@pytest.fixture(scope="module")
def compacted() -> Any:
    """A broker whose compacted topic has been written by an idempotent lz4 producer and cleaned."""
    with InProcessBroker({"log.cleaner.enable": "false"}) as broker:
        admin = ck_admin.AdminClient({"bootstrap.servers": broker.bootstrap, **QUIET})
        config = {"cleanup.policy": "compact", "segment.bytes": "16384"}
        futures = admin.create_topics([ck_admin.NewTopic(TOPIC, 1, 1, config=config)])
        futures[TOPIC].result(30)
        producer = confluent_kafka.Producer(
            {
                "bootstrap.servers": broker.bootstrap,
                "enable.idempotence": True,
                "compression.type": "lz4",
                "linger.ms": 5,
                "batch.size": 4096,  # several batches per 16 KiB segment
                **QUIET,
            }
        )
        offsets: dict[int, tuple[bytes, bytes | None]] = {}

        def delivered(err: Any, msg: Any) -> None:
            assert err is None, err
            offsets[msg.offset()] = (msg.key(), msg.value())

        for key, value in _updates():
            producer.produce(TOPIC, value, key, partition=0, on_delivery=delivered)
            producer.poll(0)
        assert producer.flush(60) == 0
        # a plain producer then overwrites every live key: the idempotent producer's last
        # batch, now in a closed segment, is emptied by the cleaning and stays as an empty batch
        plain = confluent_kafka.Producer(
            {"bootstrap.servers": broker.bootstrap, "linger.ms": 5, "batch.size": 4096, **QUIET}
        )
        for i in range(UPDATES, UPDATES + 700):
            key = b"key-%02d" % (i % KEYS)
            value = None if i % KEYS in DELETED else _value(i)
            plain.produce(TOPIC, value, key, partition=0, on_delivery=delivered)
            plain.poll(0)
        assert plain.flush(60) == 0
        assert broker.clean_logs() == 1
        [state] = [s for s in broker.cleaner() if s["topic"] == TOPIC]
        assert state["cleanings"] == 1 and state["bytes_removed"] > 0
        assert _empty_batches(broker) >= 1
        hw = broker.watermarks(TOPIC)["high_watermark"]
        yield broker, offsets, hw


def _empty_batches(broker: InProcessBroker) -> int:
    """RecordBatches the cleaning left with no record (kept for their producer's state)."""
    assert broker.core is not None
    plog = broker.core.logs.get(TOPIC, 0)
    assert plog is not None
    throttle = Throttle(1e308)
    return sum(
        1
        for seg in plog.segments.values()
        for entry in read_entries(seg, throttle)
        if entry_info(entry).producer_id >= 0 and not entry_records(entry)
    )


def _latest(offsets: dict[int, tuple[bytes, bytes | None]]) -> dict[bytes, bytes | None]:
    return {key: value for _o, (key, value) in sorted(offsets.items())}


def _check(
    got: list[tuple[int, bytes, bytes | None]], offsets: dict[int, tuple[bytes, bytes | None]]
) -> None:
    positions = [o for o, _k, _v in got]
    assert positions == sorted(set(positions)), "offsets must only increase"
    assert len(got) < len(offsets) / 2, "the topic was not compacted"  # a third is the active segment
    for offset, key, value in got:
        assert offsets[offset] == (key, value), f"offset {offset} holds another record"
    state = {key: value for _o, key, value in got}
    assert state == _latest(offsets)
    assert all(state[b"key-%02d" % k] is None for k in DELETED)


def test_librdkafka_reads_the_compacted_topic(compacted: Any) -> None:
    broker, offsets, hw = compacted
    c = confluent_kafka.Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "restore-rd",
            "enable.auto.commit": False,
            **QUIET,
        }
    )
    try:
        c.assign([confluent_kafka.TopicPartition(TOPIC, 0, 0)])
        got: list[tuple[int, bytes, bytes | None]] = []
        deadline = time.monotonic() + 60
        while (not got or got[-1][0] < hw - 1) and time.monotonic() < deadline:
            for m in c.consume(1000, 0.2):
                assert not m.error(), m.error()
                got.append((m.offset(), m.key(), m.value()))
    finally:
        c.close()
    _check(got, offsets)


@pytest.mark.parametrize("api_version", [None, (0, 10, 1)], ids=["modern", "message-format-v1"])
def test_kafka_python_reads_the_compacted_topic(compacted: Any, api_version: Any) -> None:
    broker, offsets, hw = compacted
    extra = {"api_version": api_version} if api_version else {}
    consumer = kafka.KafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False, **extra)
    try:
        tp = kafka.TopicPartition(TOPIC, 0)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        got: list[tuple[int, bytes, bytes | None]] = []
        deadline = time.monotonic() + 60
        while consumer.position(tp) < hw and time.monotonic() < deadline:
            for records in consumer.poll(500).values():
                got += [(r.offset, r.key, r.value) for r in records]
    finally:
        consumer.close()
    _check(got, offsets)


def test_aiokafka_reads_the_compacted_topic(compacted: Any) -> None:
    aiokafka = pytest.importorskip("aiokafka")
    broker, offsets, hw = compacted

    async def main() -> list[tuple[int, bytes, bytes | None]]:
        consumer = aiokafka.AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False)
        await consumer.start()
        try:
            tp = aiokafka.TopicPartition(TOPIC, 0)
            consumer.assign([tp])
            consumer.seek(tp, 0)
            got: list[tuple[int, bytes, bytes | None]] = []
            deadline = time.monotonic() + 60
            while await consumer.position(tp) < hw and time.monotonic() < deadline:
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    got += [(r.offset, r.key, r.value) for r in records]
            return got
        finally:
            await consumer.stop()

    _check(asyncio.run(main()), offsets)
