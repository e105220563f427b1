"""The high watermark survives a restart: Kafka's ``replication-offset-checkpoint``, written
periodically and at a clean stop, read at start, so a restarted leader starts at its
checkpointed high watermark instead of its log start."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster import Cluster, three_brokers
from replicas import create, everyone_sees_everyone
from zookeeper import ZooKeeperProcess

ck = pytest.importorskip("confluent_kafka")

RECORDS = 200


@pytest.fixture
def cluster(zookeeper: ZooKeeperProcess, tmp_path: Path) -> Iterator[Cluster]:
    for c in three_brokers(
        zookeeper.connect,
        tmp_path,
        "replica.high.watermark.checkpoint.interval.ms=200",
        "replica.lag.time.max.ms=60000",  # no ISR shrink moves a high watermark during the test
    ):
        everyone_sees_everyone(c)
        yield c


def checkpoint(cluster: Cluster, broker: int) -> dict[tuple[str, int], int]:
    path = cluster.brokers[broker].data_dir / "replication-offset-checkpoint"
    if not path.exists():
        return {}
    lines = path.read_text().splitlines()
    assert lines[0] == "0"  # Kafka's format: version, count, then `topic partition offset`
    assert int(lines[1]) == len(lines) - 2
    return {(t, int(p)): int(o) for t, p, o in (line.split(" ") for line in lines[2:])}


def test_high_watermarks_are_checkpointed_and_restored(cluster: Cluster) -> None:
    create(cluster, "hw", 1, **{"min.insync.replicas": "2"})
    producer = ck.Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 1})
    for i in range(RECORDS):
        producer.produce("hw", str(i).encode(), partition=0)
    assert producer.flush(30) == 0
    for b in cluster.brokers:  # written periodically by every replica, follower or leader
        cluster.wait(
            lambda b=b: checkpoint(cluster, b).get(("hw", 0)) == RECORDS, what=f"broker {b}'s checkpoint"
        )
    for b in cluster.brokers.values():  # a clean stop writes it last
        b.stop()
    for b in cluster.brokers:
        assert checkpoint(cluster, b)[("hw", 0)] == RECORDS
    marks = {i: len(b.lines) for i, b in cluster.brokers.items()}
    for b in cluster.brokers.values():
        b.start(timeout=60)
    pattern = re.compile(r"hw-0: leader in epoch \d+, ISR .*, high watermark (\d+)")

    def leading() -> list[int]:
        return [
            int(m.group(1))
            for i, b in cluster.brokers.items()
            for line in b.lines[marks[i] :]
            if (m := pattern.search(line))
        ]

    # the new leader starts from the checkpointed high watermark, before any follower is heard from
    assert cluster.wait(leading, timeout=60, what="a leader of hw-0")[0] == RECORDS
    assert set(leading()) == {RECORDS}
