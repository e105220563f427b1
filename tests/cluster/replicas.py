"""What the replication tests share: a cluster whose views agree, RF=3 topics, the state
znode's ISR, byte comparison of the replicas' segment files, and an idempotent acks=all
producer whose acknowledged records are checked against the log."""

from __future__ import annotations

from typing import Any

import pytest
from cluster import Cluster

from bench.replica_kills import read_partition

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

LAG_MS = 2000  # replica.lag.time.max.ms: a dead follower leaves the ISR within seconds


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


def isr(cluster: Cluster, topic: str) -> list[int]:
    got = state(cluster, topic, 0)
    return sorted(got["isr"]) if got else []


def no_tracebacks(cluster: Cluster) -> None:
    """No broker logged an unexpected exception (a fetcher or handler fault is logged, not fatal)."""
    for i, b in cluster.brokers.items():
        text = b.log_text()
        assert "Traceback" not in text, f"broker {i}: {text[text.index('Traceback') - 300 :][:3000]}"


class Producing:
    """An idempotent acks=all librdkafka producer and what it saw acknowledged."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.topic = topic
        self.producer = ck.Producer(
            {
                "bootstrap.servers": bootstrap,
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 2,
                "message.timeout.ms": 60000,
            }
        )
        self.acked: list[bytes] = []
        self.failed: list[Any] = []
        self.sent = 0

    def _report(self, err: Any, msg: Any) -> None:
        if err is None:
            self.acked.append(msg.value())
        else:
            self.failed.append(err)

    def produce(self, count: int, size: int = 0) -> None:
        for _ in range(count):
            value = b"r%06d" % self.sent + b"x" * size
            self.producer.produce(self.topic, value=value, partition=0, on_delivery=self._report)
            self.sent += 1
            self.producer.poll(0.001)  # a steady stream, not one burst

    def finish(self) -> None:
        assert self.producer.flush(90) == 0
        assert not self.failed, self.failed[:3]
        assert len(self.acked) == self.sent


def assert_all_read_back_once(bootstrap: str, topic: str, acked: list[bytes]) -> None:
    values = read_partition(bootstrap, topic, len(acked))
    assert len(values) == len(set(values)), "no record twice"
    assert values == sorted(values), "in order"
    assert set(acked) <= set(values), "every acknowledged record"
