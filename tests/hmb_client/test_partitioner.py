"""Keys land where every Kafka client puts them.

murmur2 is checked against the vectors of Kafka's own UtilsTest, the key ->
partition mapping against kafka-python's DefaultPartitioner, and against
librdkafka's ``murmur2_random`` by letting confluent-kafka produce keyed
records to a 7-partition topic on the real broker and reading back where
each key went.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hmb_client.producer.partitioner import (
    DefaultPartitioner,
    RoundRobinPartitioner,
    murmur2,
    partition_for_key,
)

# org.apache.kafka.common.utils.UtilsTest#testMurmur2
KAFKA_VECTORS = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}


@pytest.mark.parametrize(("key", "expected"), KAFKA_VECTORS.items())
def test_murmur2_matches_kafka(key: bytes, expected: int) -> None:
    assert murmur2(key) == expected & 0xFFFFFFFF


@given(st.binary(max_size=64), st.integers(1, 1000))
def test_same_partition_as_kafka_python(key: bytes, partitions: int) -> None:
    from kafka.partitioner.default import DefaultPartitioner as KafkaPythonPartitioner

    class Cluster:  # the two calls kafka-python's partitioner makes of its cluster
        def topics(self) -> set[str]:
            return {"t"}

        def partitions_for_topic(self, topic: str) -> set[int]:
            return set(range(partitions))

        available_partitions_for_topic = partitions_for_topic

    expected = KafkaPythonPartitioner().partition("t", b"k", key, b"v", b"v", Cluster())
    assert partition_for_key(key, partitions) == expected


def test_same_partition_as_librdkafka_murmur2_random(make_broker) -> None:  # type: ignore[no-untyped-def]
    ck = pytest.importorskip("confluent_kafka")
    broker = make_broker("num.partitions=7")
    keys = [b"user-%d" % i for i in range(300)] + [b"", b"\x00\xff", "clé-ü".encode()]
    where: dict[bytes, int] = {}
    p = ck.Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "api.version.request": False,
            "broker.version.fallback": "0.8.2",
            "partitioner": "murmur2_random",
            "log_level": 3,
        }
    )

    def record(err: object, msg: object) -> None:
        assert err is None, err
        where[msg.key()] = msg.partition()  # type: ignore[attr-defined]

    for k in keys:
        p.produce("keyed", b"v", key=k, on_delivery=record)
    assert p.flush(30) == 0
    assert len(where) == len(keys)
    assert len(set(where.values())) == 7, "the keys should spread over all partitions"
    mismatches = {k: (v, partition_for_key(k, 7)) for k, v in where.items() if v != partition_for_key(k, 7)}
    assert not mismatches


def test_null_keys_stick_until_a_batch_is_sent() -> None:
    part = DefaultPartitioner()
    first = part("t", None, 8)
    assert all(part("t", None, 8) == first for _ in range(100))
    part.batch_sent("t", first, 8)
    assert part("t", None, 8) != first
    assert part("t", b"k", 8) == partition_for_key(b"k", 8)


def test_round_robin_cycles() -> None:
    rr = RoundRobinPartitioner()
    assert [rr("t", b"same", 3) for _ in range(7)] == [0, 1, 2, 0, 1, 2, 0]
