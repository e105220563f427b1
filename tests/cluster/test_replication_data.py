"""Replication's data path on three brokers: RF=3 topics copied byte for byte, consumers
bounded by the high watermark, acks=all with followers gone (NOT_ENOUGH_REPLICAS)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from cluster import Cluster, three_brokers
from zookeeper import ZooKeeperProcess

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

LAG_MS = 2000  # replica.lag.time.max.ms: a dead follower leaves the ISR within seconds


@pytest.fixture(scope="module")
def cluster(zookeeper: ZooKeeperProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    for c in three_brokers(
        zookeeper.connect, tmp_path_factory.mktemp("replication"), f"replica.lag.time.max.ms={LAG_MS}"
    ):
        everyone_sees_everyone(c)
        yield c


def everyone_sees_everyone(cluster: Cluster) -> None:
    """Wait until every live broker's Metadata lists every live broker (their views agree)."""
    live = sorted(i for i, b in cluster.brokers.items() if b.alive())

    def agreed() -> bool:
        for i in live:
            md = AdminClient({"bootstrap.servers": cluster.brokers[i].bootstrap}).list_topics(timeout=10)
            if sorted(md.brokers) != live:
                return False
        return True

    cluster.wait(agreed, what="every broker's view of the others")


def create(cluster: Cluster, name: str, partitions: int, **config: str) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic(name, partitions, 3, config=config)])[name].result(30)


def state(cluster: Cluster, topic: str, p: int) -> Any:
    return cluster.json_if_any(f"/brokers/topics/{topic}/partitions/{p}/state")


def segment_bytes(cluster: Cluster, broker: int, topic: str, p: int) -> bytes:
    directory = cluster.brokers[broker].data_dir / f"{topic}-{p}"
    return b"".join(f.read_bytes() for f in sorted(directory.glob("*.log")))


def identical(cluster: Cluster, topic: str, p: int, brokers: list[int]) -> bool:
    copies = {segment_bytes(cluster, b, topic, p) for b in brokers}
    return len(copies) == 1 and bool(next(iter(copies)))


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
