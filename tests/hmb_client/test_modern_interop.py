"""hmb_client speaking modern Kafka: Tansu (a Kafka-compatible broker) first, then hmb.

Every test runs against both brokers (``server`` is the ``tansu`` or the
``broker`` fixture).  What hmb_client writes -- RecordBatch v2 with headers,
timestamps, each codec, idempotent or not -- is read back by hmb_client
itself and by confluent-kafka and kafka-python in their *default* settings
(ApiVersions, modern versions), byte for byte; what those two write with
their defaults is read back by hmb_client.  Tansu accepts only RecordBatch
v2, so a client that fell back to magic 0/1 would fail there.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from test_modern_wire import negotiated

from hmb_client.consumer import Consumer
from hmb_client.producer import Producer
from hmb_client.structs import TopicPartition
from kproto import ApiKey

ck = pytest.importorskip("confluent_kafka")
kafka = pytest.importorskip("kafka")

CODECS = [None, "gzip", "snappy", "lz4", "zstd"]
N = 600


@pytest.fixture(params=["tansu", "broker"])
def server(request: pytest.FixtureRequest) -> Any:
    s = request.getfixturevalue(request.param)
    if negotiated(s.bootstrap).get(ApiKey.PRODUCE, (0, 0))[1] < 3:
        pytest.skip("this broker does not serve Produce v3+ (RecordBatch v2) yet")
    return s


def records(n: int = N) -> list[tuple[bytes | None, bytes | None, list[tuple[str, bytes]], int]]:
    """Keys (some null), values (binary, some empty, one null), headers (some), timestamps."""
    out = []
    base = 1_700_000_000_000
    for i in range(n):
        key = None if i % 5 == 0 else b"k\x00%d" % i
        value = None if i == 7 else bytes((i * 7 + j) % 256 for j in range(i % 97))
        headers = [(f"h{j}", bytes([i % 256, j])) for j in range(i % 3)]
        out.append((key, value, headers, base + i))
    return out


def hmb_consume(bootstrap: str, topic: str, n: int, timeout: float = 30) -> list[Any]:
    with Consumer(bootstrap, auto_offset_reset="earliest") as c:
        c.assign([TopicPartition(topic, 0)])
        got: list[Any] = []
        deadline = time.monotonic() + timeout
        while len(got) < n and time.monotonic() < deadline:
            got += c.poll(0.5)
        return got


def rdkafka_consume(bootstrap: str, topic: str, n: int, timeout: float = 30) -> list[Any]:
    c = ck.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "rd", "log_level": 3, "enable.auto.commit": False}
    )
    try:
        c.assign([ck.TopicPartition(topic, 0, 0)])
        got: list[Any] = []
        deadline = time.monotonic() + timeout
        while len(got) < n and time.monotonic() < deadline:
            for m in c.consume(1000, 0.2):
                assert not m.error(), m.error()
                got.append(m)
        return got
    finally:
        c.close()


def kafka_python_consume(bootstrap: str, topic: str, n: int, timeout: float = 30) -> list[Any]:
    c = kafka.KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        tp = kafka.TopicPartition(topic, 0)
        c.assign([tp])
        c.seek_to_beginning(tp)
        got: list[Any] = []
        deadline = time.monotonic() + timeout
        while len(got) < n and time.monotonic() < deadline:
            for batch in c.poll(500).values():
                got += batch
        return got
    finally:
        c.close()


@pytest.mark.parametrize("idempotent", [False, True])
@pytest.mark.parametrize("codec", CODECS)
def test_hmb_client_writes_what_others_read(server: Any, codec: str | None, idempotent: bool) -> None:
    topic = f"out-{codec}-{idempotent}"
    want = records()
    with Producer(
        server.bootstrap, compression_type=codec, enable_idempotence=idempotent, batch_size=4096
    ) as p:
        futures = [p.send(topic, v, key=k, headers=h, partition=0, timestamp_ms=ts) for k, v, h, ts in want]
        p.flush(30)
        metas = [f.get(0) for f in futures]
    assert [m.offset for m in metas] == list(range(N))
    assert [m.timestamp for m in metas] == [ts for *_, ts in want]

    mine = hmb_consume(server.bootstrap, topic, N)
    assert [(r.offset, r.key, r.value, list(r.headers), r.timestamp) for r in mine] == [
        (i, k, v, h, ts) for i, (k, v, h, ts) in enumerate(want)
    ]
    rd = rdkafka_consume(server.bootstrap, topic, N)
    assert [(m.offset(), m.key(), m.value(), m.headers() or [], m.timestamp()[1]) for m in rd] == [
        (i, k, v, h, ts) for i, (k, v, h, ts) in enumerate(want)
    ]
    kp = kafka_python_consume(server.bootstrap, topic, N)
    assert [(r.offset, r.key, r.value, list(r.headers), r.timestamp) for r in kp] == [
        (i, k, v, h, ts) for i, (k, v, h, ts) in enumerate(want)
    ]


@pytest.mark.parametrize("codec", CODECS)
def test_hmb_client_reads_what_others_write(server: Any, codec: str | None) -> None:
    want = records()
    rd_topic, kp_topic = f"rd-{codec}", f"kp-{codec}"
    rp = ck.Producer(
        {
            "bootstrap.servers": server.bootstrap,
            "compression.type": codec or "none",
            "linger.ms": 5,
            "log_level": 3,
        }
    )
    for k, v, h, ts in want:
        rp.produce(rd_topic, v, k, partition=0, headers=h or None, timestamp=ts)
    assert rp.flush(30) == 0
    kp = kafka.KafkaProducer(bootstrap_servers=server.bootstrap, compression_type=codec, linger_ms=5)
    for k, v, h, ts in want:
        kp.send(kp_topic, v, key=k, headers=h, partition=0, timestamp_ms=ts)
    kp.flush(30)
    kp.close()
    for topic in (rd_topic, kp_topic):
        got = hmb_consume(server.bootstrap, topic, N)
        assert [(r.offset, r.key, r.value, list(r.headers), r.timestamp) for r in got] == [
            (i, k, v, h, ts) for i, (k, v, h, ts) in enumerate(want)
        ], topic


def test_versions_in_use(server: Any) -> None:
    versions = negotiated(server.bootstrap)
    assert versions[ApiKey.PRODUCE][1] >= 3 and versions[ApiKey.FETCH][1] >= 4


def test_consumer_positions_and_fetch_limits(server: Any) -> None:
    """Small fetch limits cut batches mid-way (partial trailing batch) and seeks land mid-batch."""
    topic = "limits"
    with Producer(server.bootstrap, batch_size=2000, compression_type="lz4") as p:
        for i in range(2000):
            p.send(topic, b"value-%05d" % i, partition=0, headers=[("i", b"%d" % i)])
    with Consumer(
        server.bootstrap, auto_offset_reset="earliest", max_partition_fetch_bytes=3000, fetch_max_bytes=5000
    ) as c:
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        c.seek(tp, 1234)
        got: list[Any] = []
        deadline = time.monotonic() + 30
        while len(got) < 766 and time.monotonic() < deadline:
            got += c.poll(0.5)
        assert [r.offset for r in got] == list(range(1234, 2000))
        assert [r.headers for r in got] == [(("i", b"%d" % i),) for i in range(1234, 2000)]
        assert c.position(tp) == 2000
        assert c.beginning_offsets([tp]) == {tp: 0}
