"""What the log does with records, seen by real clients: leader epochs, recompression,
timestamp bounds and lookups by time.

* librdkafka validates a position that carries a leader epoch with
  OffsetForLeaderEpoch, then consumes from it (and sees epoch 0 on records);
* a topic with ``compression.type=zstd`` stores what confluent-kafka (lz4) and
  kafka-python (gzip) produced as zstd batches, and both clients read back the
  same values, keys and timestamps;
* a record stamped two hours ahead of the broker's clock is refused with
  INVALID_TIMESTAMP to confluent-kafka's producer, the others are delivered;
* confluent-kafka's ``offsets_for_times`` finds offsets across many segments
  (the time index).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from broker_process import InProcessBroker

pytestmark = pytest.mark.interop

ck = pytest.importorskip("confluent_kafka")
ck_admin = pytest.importorskip("confluent_kafka.admin")
kafka = pytest.importorskip("kafka")
kafka_records = pytest.importorskip("kafka.record")

QUIET = {"log_level": 3}


@pytest.fixture
def in_process_broker() -> Iterator[InProcessBroker]:
    """The broker in this process: its request log shows what the clients asked."""
    with InProcessBroker() as b:
        yield b


def poll_values(consumer: Any, count: int, timeout: float = 30) -> list[Any]:
    got: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        m = consumer.poll(0.5)
        if m is not None:
            assert not m.error(), m.error()
            got.append(m)
    return got


def produce(bootstrap: str, topic: str, values: list[bytes], **config: Any) -> None:
    p = ck.Producer({"bootstrap.servers": bootstrap, **QUIET, **config})
    for v in values:
        p.produce(topic, v, partition=0)
    assert p.flush(30) == 0


def test_librdkafka_validates_positions_with_offset_for_leader_epoch(
    in_process_broker: InProcessBroker,
) -> None:
    bootstrap = in_process_broker.bootstrap
    produce(bootstrap, "epochs", [b"v%d" % i for i in range(10)])
    c = ck.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "epochs", "enable.auto.commit": False, **QUIET}
    )
    try:
        c.assign([ck.TopicPartition("epochs", 0, 7, leader_epoch=0)])
        got = poll_values(c, 3)
        assert [m.value() for m in got] == [b"v7", b"v8", b"v9"]
        assert {m.leader_epoch() for m in got} == {0}  # the stored batches carry the leader's epoch
        c.seek(ck.TopicPartition("epochs", 0, 2, leader_epoch=0))
        assert [m.value() for m in poll_values(c, 2)] == [b"v2", b"v3"]
    finally:
        c.close()
    asked = [r for r in in_process_broker.requests() if r["api_name"] == "OFFSET_FOR_LEADER_EPOCH"]
    assert asked, "librdkafka did not validate the position"


def test_a_zstd_topic_recompresses_what_clients_produce(in_process_broker: InProcessBroker) -> None:
    bootstrap = in_process_broker.bootstrap
    admin = ck_admin.AdminClient({"bootstrap.servers": bootstrap, **QUIET})
    topic = ck_admin.NewTopic("zstd-topic", 1, 1, config={"compression.type": "zstd"})
    admin.create_topics([topic])["zstd-topic"].result(30)
    produce(bootstrap, "zstd-topic", [b"ck-%d" % i * 10 for i in range(50)], **{"compression.type": "lz4"})
    kp = kafka.KafkaProducer(bootstrap_servers=bootstrap, compression_type="gzip")
    for i in range(50):
        kp.send(
            "zstd-topic", b"kp-%d" % i * 10, key=b"k%d" % i, partition=0, timestamp_ms=1_700_000_000_000 + i
        )
    kp.flush(30)
    kp.close()
    segment = next((in_process_broker.data_dir / "zstd-topic-0").glob("*.log")).read_bytes()
    assert {b.compression_type for b in kafka_records.MemoryRecords(segment)} == {4}  # zstd, every one
    expected = [b"ck-%d" % i * 10 for i in range(50)] + [b"kp-%d" % i * 10 for i in range(50)]
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "zstd", **QUIET})
    try:
        c.assign([ck.TopicPartition("zstd-topic", 0, 0)])
        got = poll_values(c, 100)
        assert [m.value() for m in got] == expected
        assert [m.timestamp()[1] for m in got[50:]] == [1_700_000_000_000 + i for i in range(50)]
        assert [m.key() for m in got[50:]] == [b"k%d" % i for i in range(50)]
    finally:
        c.close()
    kc = kafka.KafkaConsumer(bootstrap_servers=bootstrap, consumer_timeout_ms=10_000)
    try:
        part = kafka.TopicPartition("zstd-topic", 0)
        kc.assign([part])
        kc.seek(part, 0)
        read = []
        for message in kc:
            read.append(message.value)
            if len(read) == 100:
                break
        assert read == expected
    finally:
        kc.close()


def test_a_record_from_the_future_is_refused_to_a_real_producer(in_process_broker: InProcessBroker) -> None:
    bootstrap = in_process_broker.bootstrap
    results: list[Any] = []
    p = ck.Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "retries": 0, **QUIET})
    now = int(time.time() * 1000)
    for ts in (now, now + 2 * 3_600_000, now - 86_400_000):
        p.produce(
            "bounded", b"x", partition=0, timestamp=ts, on_delivery=lambda err, msg: results.append(err)
        )
        p.flush(30)
    assert results[0] is None and results[2] is None
    assert results[1] is not None and results[1].code() == ck.KafkaError.INVALID_TIMESTAMP
    assert in_process_broker.watermarks("bounded")["high_watermark"] == 2


def test_offsets_for_times_across_segments(in_process_broker: InProcessBroker) -> None:
    bootstrap = in_process_broker.bootstrap
    admin = ck_admin.AdminClient({"bootstrap.servers": bootstrap, **QUIET})
    topic = ck_admin.NewTopic("timed", 1, 1, config={"segment.bytes": "4096", "index.interval.bytes": "256"})
    admin.create_topics([topic])["timed"].result(30)
    base = 1_700_000_000_000
    p = ck.Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, **QUIET})
    for i in range(200):
        p.produce("timed", b"x" * 100, partition=0, timestamp=base + i * 1000)
        if i % 10 == 9:
            p.flush(30)  # several batches per segment
    p.flush(30)
    assert len(list((in_process_broker.data_dir / "timed-0").glob("*.timeindex"))) > 3
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "timed", **QUIET})
    try:
        for i in (0, 37, 122, 199):
            [found] = c.offsets_for_times([ck.TopicPartition("timed", 0, base + i * 1000 - 500)], timeout=10)
            assert found.offset == i, i
        [past_end] = c.offsets_for_times([ck.TopicPartition("timed", 0, base + 10**9)], timeout=10)
        assert past_end.offset == -1
    finally:
        c.close()
