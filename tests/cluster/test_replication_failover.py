"""A leader killed with kill -9 under an idempotent acks=all producer: the controller elects
a follower from the ISR, the producer goes on, no acknowledged record is lost or doubled,
and the killed broker comes back, truncates, catches up and rejoins the ISR."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from cluster import Cluster, three_brokers
from replicas import LAG_MS, create, everyone_sees_everyone, identical, isr, no_tracebacks, state
from zookeeper import ZooKeeperProcess

ck = pytest.importorskip("confluent_kafka")

RECORDS = 3000
KILL_AFTER = 1000  # acknowledged records before the leader is killed


@pytest.fixture(scope="module")
def cluster(zookeeper: ZooKeeperProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    for c in three_brokers(
        zookeeper.connect, tmp_path_factory.mktemp("failover"), f"replica.lag.time.max.ms={LAG_MS}"
    ):
        everyone_sees_everyone(c)
        yield c


def read_all(bootstrap: str, topic: str, until: int) -> list[bytes]:
    consumer = ck.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "verify", "enable.auto.commit": False}
    )
    consumer.assign([ck.TopicPartition(topic, 0, 0)])
    values: list[bytes] = []
    deadline = time.monotonic() + 60
    while len(values) < until and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and not msg.error():
            values.append(msg.value())
    consumer.close()
    return values


def test_leader_kill_loses_no_acknowledged_record(cluster: Cluster) -> None:
    create(cluster, "failover", 1, **{"min.insync.replicas": "2"})
    leader = state(cluster, "failover", 0)["leader"]
    producer = ck.Producer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 2,
            "message.timeout.ms": 60000,
        }
    )
    acked: list[tuple[float, bytes]] = []
    failed: list[Any] = []

    def report(err: Any, msg: Any) -> None:
        if err is None:
            acked.append((time.monotonic(), msg.value()))
        else:
            failed.append(err)

    killed_at = None
    for i in range(RECORDS):
        producer.produce("failover", value=b"r%06d" % i, on_delivery=report)
        producer.poll(0)
        if killed_at is None and i >= KILL_AFTER:
            cluster.wait(lambda: len(acked) >= KILL_AFTER or producer.poll(0.05) < 0, what="records acked")
            cluster.brokers[leader].kill()
            killed_at = time.monotonic()
        if i % 100 == 0:
            producer.poll(0.01)  # a steady stream, not one burst
    assert producer.flush(90) == 0
    assert killed_at is not None and not failed, failed[:3]
    new_leader = state(cluster, "failover", 0)["leader"]
    assert new_leader != leader and new_leader in cluster.brokers
    failover_s = min(t for t, _ in acked if t > killed_at) - killed_at
    print(f"failover: first acknowledged write {failover_s:.2f} s after kill -9 of the leader")
    values = [v for _, v in acked]
    assert sorted(values) == [b"r%06d" % i for i in range(RECORDS)]
    cluster.brokers[leader].restart()
    cluster.wait(
        lambda: isr(cluster, "failover") == [0, 1, 2], timeout=60, what="the old leader back in sync"
    )
    cluster.wait(lambda: identical(cluster, "failover", 0, [0, 1, 2]), what="failover-0 identical")
    read = read_all(cluster.brokers[new_leader].bootstrap, "failover", RECORDS)
    assert read == [b"r%06d" % i for i in range(RECORDS)], "every acknowledged record once, in order"
    no_tracebacks(cluster)


def test_a_short_leader_kill_loop(cluster: Cluster) -> None:
    """Three kills of whichever broker leads (bench/replica_kills.py runs thirty)."""
    from bench.replica_kills import kill_loop

    create(cluster, "loop", 1, **{"min.insync.replicas": "2"})
    outcome = kill_loop(cluster, "loop", kills=3, per_kill=600)
    print(f"kill loop: failover after each kill {outcome.failover_s} s")
    assert outcome.failed == 0 and outcome.acknowledged == outcome.records == 1800
    assert (outcome.lost, outcome.duplicates) == (0, 0)
    assert outcome.in_order and outcome.read_back == 1800
    assert outcome.replicas_identical
    assert len(outcome.failover_s) == 3
    no_tracebacks(cluster)
