"""Replication under faults: the controller killed under produce, and a follower whose disk
fills up. (A leader cut off from ZooKeeper: test_replication_partition.py; ZooKeeper
restarted under produce: test_cluster_zookeeper_faults.py, which owns its ZooKeeper.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster import Cluster, three_brokers
from replicas import (
    LAG_MS,
    Producing,
    assert_all_read_back_once,
    everyone_sees_everyone,
    isr,
    no_tracebacks,
    state,
)
from zookeeper import ZooKeeperProcess

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402


def create_led_by(cluster: Cluster, topic: str, replicas: list[int]) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    new = NewTopic(
        topic, num_partitions=1, replica_assignment=[replicas], config={"min.insync.replicas": "2"}
    )
    admin.create_topics([new])[topic].result(30)
    cluster.wait(
        lambda: isr(cluster, topic) == sorted(replicas) and state(cluster, topic, 0)["leader"] == replicas[0]
    )


@pytest.fixture
def cluster(zookeeper: ZooKeeperProcess, tmp_path: Path) -> Iterator[Cluster]:
    for c in three_brokers(zookeeper.connect, tmp_path, f"replica.lag.time.max.ms={LAG_MS}"):
        everyone_sees_everyone(c)
        yield c


def test_controller_killed_under_produce(cluster: Cluster) -> None:
    """The controller also leads the partition: the next controller must elect its successor."""
    controller = cluster.json("/controller")["brokerid"]
    others = [b for b in cluster.brokers if b != controller]
    create_led_by(cluster, "ctl", [controller, *others])
    writer = Producing(cluster.bootstrap, "ctl")
    writer.produce(500)
    cluster.wait(lambda: writer.producer.poll(0.05) >= 0 and len(writer.acked) >= 250, what="acks")
    cluster.brokers[controller].kill()
    writer.produce(500)
    writer.finish()
    new_controller = cluster.json("/controller")["brokerid"]
    assert new_controller in others
    assert state(cluster, "ctl", 0)["leader"] in others
    assert cluster.json("/controller_epoch") >= 2
    assert_all_read_back_once(cluster.bootstrap, "ctl", writer.acked)
    cluster.brokers[controller].restart()
    cluster.wait(lambda: isr(cluster, "ctl") == [0, 1, 2], timeout=60, what="the old controller back in sync")
    no_tracebacks(cluster)


def _mount_tmpfs(directory: Path, size: str) -> str | None:
    """Mount a tmpfs of ``size`` on ``directory``; why not, when it cannot be done."""
    if os.geteuid() != 0:
        return "mounting a small tmpfs as a full disk needs root"
    if shutil.which("mount") is None:
        return "no mount command"
    directory.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)], capture_output=True
    )
    return None if done.returncode == 0 else f"cannot mount a tmpfs: {done.stderr.decode().strip()}"


@pytest.fixture
def small_disk_follower(zookeeper: ZooKeeperProcess, tmp_path: Path) -> Iterator[Cluster]:
    """Three brokers; broker 2's data dir is a 3 MiB tmpfs."""
    cluster = Cluster(zookeeper.connect, tmp_path, extra=(f"replica.lag.time.max.ms={LAG_MS}",))
    small = cluster.brokers[2].data_dir
    if (why := _mount_tmpfs(small, "3m")) is not None:
        pytest.skip(why)
    try:
        cluster.start()
        everyone_sees_everyone(cluster)
        yield cluster
    finally:
        cluster.close()
        subprocess.run(["umount", "-l", str(small)], check=False)


def test_a_follower_whose_disk_is_full_leaves_the_isr(small_disk_follower: Cluster) -> None:
    cluster = small_disk_follower
    create_led_by(cluster, "full", [0, 1, 2])
    writer = Producing(cluster.bootstrap, "full")
    writer.produce(600, size=10_000)  # 6 MB: twice what broker 2's disk holds
    writer.finish()  # min.insync.replicas=2 of 3: the leader goes on without it
    cluster.wait(lambda: isr(cluster, "full") == [0, 1], what="broker 2 out of the ISR")
    assert state(cluster, "full", 0)["leader"] == 0
    more = time.monotonic()
    writer.produce(100, size=100)
    writer.finish()
    assert time.monotonic() - more < 30
    assert_all_read_back_once(cluster.brokers[0].bootstrap, "full", writer.acked)
    copied = sum(f.stat().st_size for f in (cluster.brokers[2].data_dir / "full-0").glob("*.log"))
    assert copied < 3 * 1024 * 1024  # it stopped where its disk ended
