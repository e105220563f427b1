"""Three brokers on ZooKeeper: registration in Kafka's format, one controller, its failover."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster import Cluster, three_brokers
from zookeeper import ZooKeeperProcess


@pytest.fixture
def cluster(zookeeper: ZooKeeperProcess, tmp_path: Path) -> Iterator[Cluster]:
    yield from three_brokers(zookeeper.connect, tmp_path)


def test_brokers_register_in_kafkas_format(cluster: Cluster) -> None:
    assert sorted(cluster.zk.get_children("/brokers/ids")) == ["0", "1", "2"]
    for i, b in cluster.brokers.items():
        reg = cluster.json(f"/brokers/ids/{i}")
        assert reg["version"] == 5
        assert reg["endpoints"] == [f"PLAINTEXT://127.0.0.1:{b.port}"]
        assert reg["host"] == "127.0.0.1" and reg["port"] == b.port
        assert reg["jmx_port"] == -1
        assert reg["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT"}
        _, stat = cluster.zk.get(f"/brokers/ids/{i}")
        assert stat.ephemeralOwner != 0
    cluster_id = cluster.json("/cluster/id")["id"]
    for b in cluster.brokers.values():  # every broker adopted the id the first one wrote
        assert f"cluster.id={cluster_id}" in (b.data_dir / "meta.properties").read_text()


def test_one_controller_and_failover_with_a_bumped_epoch(cluster: Cluster) -> None:
    controller = cluster.json("/controller")
    assert controller["version"] == 2
    first = controller["brokerid"]
    assert first in cluster.brokers
    epoch = int(cluster.zk.get("/controller_epoch")[0])
    assert epoch >= 1
    killed_at = time.monotonic()
    cluster.brokers[first].kill()

    def new_controller() -> int | None:
        got = cluster.json_if_any("/controller")
        return got["brokerid"] if got is not None and got["brokerid"] != first else None

    successor = cluster.wait(new_controller, timeout=30, what="a new controller")
    took = time.monotonic() - killed_at
    assert successor in cluster.brokers and successor != first
    # the successor creates /controller, then bumps the epoch: wait for that second write
    cluster.wait(
        lambda: int(cluster.zk.get("/controller_epoch")[0]) > epoch, timeout=10, what="the bumped epoch"
    )
    assert int(cluster.zk.get("/controller_epoch")[0]) == epoch + 1
    assert sorted(cluster.zk.get_children("/brokers/ids")) == sorted(
        str(i) for i in cluster.brokers if i != first
    )
    print(f"controller failover took {took:.2f} s (session timeout 2 s)")
