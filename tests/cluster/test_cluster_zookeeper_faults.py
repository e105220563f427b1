"""The cluster when ZooKeeper misbehaves: a broker whose session expires registers again,
and a ZooKeeper restart leaves the cluster working.

Its own module: it restarts the module's ZooKeeper.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster import Cluster, three_brokers
from zookeeper import ZooKeeperProcess

from hmb_client import Admin, NewTopic


@pytest.fixture
def cluster(zookeeper: ZooKeeperProcess, tmp_path: Path) -> Iterator[Cluster]:
    yield from three_brokers(zookeeper.connect, tmp_path)


def _registered(cluster: Cluster) -> list[int]:
    return sorted(int(i) for i in cluster.zk.get_children("/brokers/ids"))


def test_a_broker_whose_session_expired_registers_again(cluster: Cluster) -> None:
    controller = cluster.json("/controller")["brokerid"]
    frozen = next(i for i in cluster.brokers if i != controller)
    proc = cluster.brokers[frozen].proc
    assert proc is not None
    _, stat = cluster.zk.get(f"/brokers/ids/{frozen}")
    old_session = stat.ephemeralOwner
    proc.send_signal(signal.SIGSTOP)  # cut off: ZooKeeper stops hearing from it
    try:
        cluster.wait(lambda: frozen not in _registered(cluster), what="the session to expire")
    finally:
        proc.send_signal(signal.SIGCONT)
    cluster.wait(lambda: frozen in _registered(cluster), what="registered again")
    _, stat = cluster.zk.get(f"/brokers/ids/{frozen}")
    assert stat.ephemeralOwner != old_session  # a new session's node
    assert cluster.json("/controller")["brokerid"] == controller  # the controller kept its role


def test_the_cluster_works_on_after_a_zookeeper_restart(
    zookeeper: ZooKeeperProcess, cluster: Cluster
) -> None:
    zookeeper.stop()
    zookeeper.start()
    cluster.zk.restart()
    # kept sessions, or new ones after an expiry: either way all three are registered
    cluster.wait(lambda: _registered(cluster) == [0, 1, 2], what="three registered brokers")
    cluster.wait(lambda: cluster.zk.exists("/controller"), what="a controller")
    with Admin(bootstrap_servers=cluster.brokers[1].bootstrap) as admin:  # the watches fire again
        created = admin.create_topics([NewTopic("after-restart", 3, 1)])
    assert created["after-restart"].num_partitions == 3
    # CreateTopics answers once the controller has placed every partition
    for p in range(3):
        assert cluster.json(f"/brokers/topics/after-restart/partitions/{p}/state")["leader"] in (0, 1, 2)


def test_acknowledged_records_survive_a_zookeeper_restart_under_produce(
    zookeeper: ZooKeeperProcess, cluster: Cluster
) -> None:
    """Leaders refuse writes while ZooKeeper is away (they cannot know they still lead); the
    idempotent producer retries, and once the brokers are back every acknowledged record is
    in the log once, in order."""
    from replicas import Producing, assert_all_read_back_once, create, everyone_sees_everyone, isr

    everyone_sees_everyone(cluster)
    create(cluster, "zk-restart", 1, **{"min.insync.replicas": "2"})
    writer = Producing(cluster.bootstrap, "zk-restart")
    writer.produce(300)
    zookeeper.stop()
    writer.produce(300)  # queued and retried while ZooKeeper is away
    zookeeper.start()
    writer.produce(300)
    writer.finish()
    cluster.zk.restart()
    cluster.wait(lambda: isr(cluster, "zk-restart") == [0, 1, 2], timeout=60, what="a whole ISR")
    assert_all_read_back_once(cluster.bootstrap, "zk-restart", writer.acked)
