"""Replication's data path on three brokers: RF=3 topics copied byte for byte, consumers
bounded by the high watermark, acks=all with followers gone (NOT_ENOUGH_REPLICAS)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from cluster import Cluster, three_brokers
from replicas import LAG_MS, create, everyone_sees_everyone, identical, isr, no_tracebacks, state
from wire import WireClient, fetch_body, produce_body
from zookeeper import ZooKeeperProcess

from kproto import ApiKey, ErrorCode
from kproto.records import RecordBatchBuilder, RecordBatchReader

ck = pytest.importorskip("confluent_kafka")


@pytest.fixture(scope="module")
def cluster(zookeeper: ZooKeeperProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    for c in three_brokers(
        zookeeper.connect, tmp_path_factory.mktemp("replication"), f"replica.lag.time.max.ms={LAG_MS}"
    ):
        everyone_sees_everyone(c)
        yield c


def produce_all(bootstrap: str, topic: str, count: int, **extra: Any) -> list[Any]:
    """Produce ``count`` records with acks=all; the delivery reports (message or error)."""
    producer = ck.Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, **extra})
    reports: list[Any] = []
    for i in range(count):
        producer.produce(
            topic, value=b"v%06d" % i, key=b"k%d" % (i % 7), on_delivery=lambda e, m: reports.append(e or m)
        )
        producer.poll(0)
    assert producer.flush(60) == 0
    return reports


def test_rf3_acks_all_copies_every_byte_to_every_replica(cluster: Cluster) -> None:
    create(cluster, "copied", 3, **{"min.insync.replicas": "2"})
    reports = produce_all(cluster.bootstrap, "copied", 3000)
    assert all(not isinstance(r, ck.KafkaError) for r in reports), reports[:3]
    for p in range(3):
        assert sorted(state(cluster, "copied", p)["isr"]) == [0, 1, 2]
        cluster.wait(lambda p=p: identical(cluster, "copied", p, [0, 1, 2]), what=f"copied-{p} identical")
    consumer = ck.Consumer(
        {"bootstrap.servers": cluster.bootstrap, "group.id": "g-copied", "auto.offset.reset": "earliest"}
    )
    consumer.subscribe(["copied"])
    seen: list[bytes] = []
    deadline = time.monotonic() + 60
    while len(seen) < 3000 and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and not msg.error():
            seen.append(msg.value())
    consumer.close()
    assert sorted(seen) == [b"v%06d" % i for i in range(3000)]


def one_batch(value: bytes) -> bytes:
    b = RecordBatchBuilder()
    b.append(None, value, int(time.time() * 1000))
    return b.build()


def produce_wire(
    cluster: Cluster, broker: int, topic: str, value: bytes, acks: int, timeout_ms: int = 15000
) -> Any:
    body = produce_body(topic, 0, one_batch(value), acks=acks)
    body.update(timeout_ms=timeout_ms, transactional_id=None)
    with WireClient(cluster.brokers[broker].bootstrap, timeout=30) as c:
        return c.request(ApiKey.PRODUCE, 7, body).responses[0].partition_responses[0]


def consume_wire(cluster: Cluster, broker: int, topic: str, offset: int) -> tuple[int, list[bytes | None]]:
    """(high watermark, values) a consumer's Fetch v4 gets from ``offset`` at ``broker``."""
    body = fetch_body(topic, 0, offset)
    body.update(max_bytes=1 << 20, isolation_level=0)
    with WireClient(cluster.brokers[broker].bootstrap) as c:
        part = c.request(ApiKey.FETCH, 4, body).responses[0].partitions[0]
    assert part.error_code == ErrorCode.NONE
    values = [r.value for b in RecordBatchReader(part.records or b"") for r in b.records()]
    return part.high_watermark, values


def test_followers_gone_shrink_the_isr_then_acks_all_is_refused(cluster: Cluster) -> None:
    create(cluster, "guarded", 1, **{"min.insync.replicas": "2"})
    leader = state(cluster, "guarded", 0)["leader"]
    first, second = (b for b in sorted(cluster.brokers) if b != leader)
    assert produce_wire(cluster, leader, "guarded", b"all-three", -1).error_code == ErrorCode.NONE
    cluster.brokers[first].kill()
    # acks=all goes on once the dead follower has left the ISR (replica.lag.time.max.ms)
    answer = produce_wire(cluster, leader, "guarded", b"two-of-three", -1)
    assert answer.error_code == ErrorCode.NONE
    assert isr(cluster, "guarded") == sorted([leader, second])
    # the last follower is dead but still in sync: acks=all waits for it (here in vain), and
    # what the leader alone holds stays invisible to consumers.  That holds only until the dead
    # follower leaves the ISR (replica.lag.time.max.ms after its death); on a machine too busy
    # to make these calls within that time the ISR shows it, and the round is tried again.
    for attempt in range(3):
        leader_only = b"leader-only-%d" % attempt
        cluster.brokers[second].kill()
        hw, _ = consume_wire(cluster, leader, "guarded", 0)
        waited = produce_wire(cluster, leader, "guarded", b"unreplicated", -1, timeout_ms=300)
        appended = produce_wire(cluster, leader, "guarded", leader_only, 1)
        hw_now, values = consume_wire(cluster, leader, "guarded", 0)
        if isr(cluster, "guarded") == sorted([leader, second]):
            break
        cluster.brokers[second].restart()
        cluster.wait(lambda: isr(cluster, "guarded") == sorted([leader, second]), timeout=60, what="rejoined")
    else:
        pytest.fail("in three rounds the dead follower left the ISR before the checks ended")
    assert waited.error_code == ErrorCode.REQUEST_TIMED_OUT and waited.base_offset == hw
    assert appended.error_code == ErrorCode.NONE and appended.base_offset == hw + 1
    assert hw_now == hw and leader_only not in values, "a consumer saw past the high watermark"
    cluster.wait(lambda: isr(cluster, "guarded") == [leader], what="the ISR down to the leader")
    # the controller may write that ISR (the follower's registration expired) a moment before
    # the leader reads it: the high watermark moves when it does
    cluster.wait(
        lambda: leader_only in consume_wire(cluster, leader, "guarded", 0)[1],
        timeout=10,
        what="the leader's records visible once it alone is in sync",
    )
    refused = produce_wire(cluster, leader, "guarded", b"refused", -1)
    assert refused.error_code == ErrorCode.NOT_ENOUGH_REPLICAS
    assert b"refused" not in consume_wire(cluster, leader, "guarded", 0)[1]
    for b in (first, second):  # they come back, catch up and rejoin the ISR
        cluster.brokers[b].restart()
    cluster.wait(lambda: isr(cluster, "guarded") == [0, 1, 2], timeout=60, what="the ISR whole again")
    assert produce_wire(cluster, leader, "guarded", b"all-again", -1).error_code == ErrorCode.NONE
    cluster.wait(lambda: identical(cluster, "guarded", 0, [0, 1, 2]), what="guarded-0 identical")
    no_tracebacks(cluster)


def test_kafka_python_and_aiokafka_with_acks_all_on_rf3(cluster: Cluster) -> None:
    """Two more clients, acks=all into an RF=3 topic with min.insync.replicas=2, read back."""
    kafka = pytest.importorskip("kafka")
    aiokafka = pytest.importorskip("aiokafka")
    import asyncio

    create(cluster, "clients", 2, **{"min.insync.replicas": "2"})
    producer = kafka.KafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all")
    futures = [producer.send("clients", b"kp-%d" % i, partition=i % 2) for i in range(400)]
    producer.flush()
    assert all(f.get(30).offset >= 0 for f in futures)
    producer.close()

    async def aio() -> list[bytes]:
        p = aiokafka.AIOKafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all")
        await p.start()
        try:
            for i in range(400):
                await p.send_and_wait("clients", b"aio-%d" % i, partition=i % 2)
        finally:
            await p.stop()
        c = aiokafka.AIOKafkaConsumer(
            "clients",
            bootstrap_servers=cluster.bootstrap,
            group_id="aio-clients",
            auto_offset_reset="earliest",
        )
        await c.start()
        got: list[bytes] = []
        try:
            async with asyncio.timeout(60):
                while len(got) < 800:
                    batch = await c.getmany(timeout_ms=500)
                    got += [m.value for msgs in batch.values() for m in msgs]
        finally:
            await c.stop()
        return got

    got = asyncio.run(aio())
    assert sorted(got) == sorted([b"kp-%d" % i for i in range(400)] + [b"aio-%d" % i for i in range(400)])
    for p in range(2):
        cluster.wait(lambda p=p: identical(cluster, "clients", p, [0, 1, 2]), what=f"clients-{p} identical")
