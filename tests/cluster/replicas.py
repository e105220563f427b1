"""What the replication tests share: a cluster whose views agree, RF=3 topics, the state
znode's ISR, and byte comparison of the replicas' segment files."""

from __future__ import annotations

from typing import Any

import pytest
from cluster import Cluster

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
