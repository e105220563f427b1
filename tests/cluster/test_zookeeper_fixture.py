"""The ZooKeeper fixture itself: a standalone server that kazoo can use, and says so."""

from __future__ import annotations

from kazoo.client import KazooClient
from zookeeper import ZooKeeperProcess, four_letter_word


def test_zookeeper_is_standalone_and_serves_znodes(zookeeper: ZooKeeperProcess) -> None:
    assert "Mode: standalone" in four_letter_word(zookeeper.host, zookeeper.port, "srvr")
    assert zookeeper.start_seconds > 0
    zk = KazooClient(hosts=zookeeper.connect, timeout=10)
    zk.start(timeout=10)
    try:
        zk.create("/fixture-check/a", b"hello", makepath=True)
        data, stat = zk.get("/fixture-check/a")
        assert data == b"hello"
        assert stat.version == 0
    finally:
        zk.stop()
        zk.close()
