"""rAck in a three-broker cluster: receipts are TTL sequential znodes, and a rAck
producer whose monitor watches them delivers every record.

The brokers run with ``rack.receipts.ttl.ms`` = 5 s and ZooKeeper removes
expired TTL znodes every second (tests/support/zookeeper.py), so the TTL is
seen to end.

What can fail here: a receipt missing, under another path or name, with other
data than ``origin;destination;id``, not sequential or without a TTL (it would
never go); the producer's records not all in the log after flush(), also when
requests are dropped with their connections (the brokers' control listener);
records resent although their receipts came; a topic with receipts that
cannot be deleted.
"""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator

import pytest
from cluster import Cluster
from wire import WireClient, produce_body
from zookeeper import ZooKeeperProcess

from bench.hmb_process import BrokerProcess, free_port
from hmb_client import Admin, Consumer, Producer, TopicPartition
from kproto import ApiKey
from kproto.records import RecordBatchBuilder

pytestmark = pytest.mark.interop

TTL_MS = 5000


@pytest.fixture(scope="module")
def cluster(zookeeper: ZooKeeperProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    c = Cluster(zookeeper.connect, tmp_path_factory.mktemp("rack-cluster"))
    for b in c.brokers.values():
        b.overrides += [f"rack.receipts.ttl.ms={TTL_MS}", f"control.listener=127.0.0.1:{free_port()}"]
    try:
        yield c.start()
    finally:
        c.close()


def _rack_body(topic: str, records: bytes) -> dict[str, object]:
    return {**produce_body(topic, 0, records, acks=-2), "transactional_id": None}


def _create(cluster: Cluster, topic: str, partitions: int) -> None:
    with Admin(cluster.bootstrap) as admin:
        admin.create_topic(topic, partitions, timeout_s=20)
    cluster.wait(
        lambda: all(
            cluster.json_if_any(f"/brokers/topics/{topic}/partitions/{p}/state") for p in range(partitions)
        ),
        what=f"{topic} placed",
    )


def _control(broker: BrokerProcess, op: str, **args: object) -> None:
    """An operation of the broker's control listener (hmb.control.wire)."""
    control = next(o for o in broker.overrides if o.startswith("control.listener="))
    host, port = control.split("=", 1)[1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(json.dumps({"op": op, "args": args}).encode() + b"\n")
        assert json.loads(s.makefile("rb").readline())["ok"]


def _values(cluster: Cluster, topic: str, partitions: int, expected: int) -> list[bytes]:
    consumer = Consumer(cluster.bootstrap, auto_offset_reset="earliest")
    try:
        consumer.assign([TopicPartition(topic, q) for q in range(partitions)])
        out: list[bytes] = []
        deadline = time.monotonic() + 60
        while len(out) < expected and time.monotonic() < deadline:
            out += [r.value or b"" for r in consumer.poll(timeout=1.0)]
        return out
    finally:
        consumer.close(autocommit=False)


def _receipts(cluster: Cluster, topic: str) -> dict[str, bytes]:
    names = [c for c in cluster.zk.get_children(f"/brokers/topics/{topic}") if c.startswith("produce - ")]
    out = {}
    for name in names:
        try:
            out[name] = cluster.zk.get(f"/brokers/topics/{topic}/{name}")[0]
        except Exception:  # expired between the listing and the read
            pass
    return out


def test_receipts_are_ttl_sequential_znodes_under_the_topic(cluster: Cluster) -> None:
    _create(cluster, "rack-znodes", 1)
    leader = cluster.json("/brokers/topics/rack-znodes/partitions/0/state")["leader"]
    builder = RecordBatchBuilder()
    builder.append(None, b"first", None, [("rack.id", b"a-1")])
    builder.append(b"the-key", b"second", None)  # no rack.id header: the key is the id
    with WireClient(cluster.brokers[leader].bootstrap) as c:
        c.send(ApiKey.PRODUCE, 8, _rack_body("rack-znodes", builder.build()), client_id="wire-rack")
        got = cluster.wait(lambda: len(r := _receipts(cluster, "rack-znodes")) == 2 and r, what="receipts")
        assert sorted(got.values()) == [b"wire-rack;rack-znodes;a-1", b"wire-rack;rack-znodes;the-key"]
        assert all(re.fullmatch(r"produce - \d{10}", name) for name in got)
        first, second = sorted(got)
        assert int(second[-10:]) == int(first[-10:]) + 1  # ZooKeeper's sequence numbers
        stat = cluster.zk.exists(f"/brokers/topics/rack-znodes/{first}")
        assert stat is not None and stat.numChildren == 0
    # the TTL: both go once older than rack.receipts.ttl.ms, the topic's znode stays
    cluster.wait(lambda: not _receipts(cluster, "rack-znodes"), timeout=TTL_MS / 1000 + 30, what="TTL")
    assert cluster.json("/brokers/topics/rack-znodes")["partitions"] == {"0": [leader]}


def test_rack_producer_in_the_cluster_delivers_every_record(cluster: Cluster) -> None:
    _create(cluster, "rack-cluster", 3)
    n = 3000
    with Producer(
        bootstrap_servers=cluster.bootstrap,
        acks="rack",
        rack_zookeeper_connect=cluster.connect,
        rack_receipt_wait_ms=20_000,
        rack_retry_interval_ms=500,
    ) as p:
        for i in range(n):
            p.send("rack-cluster", b"value-%d" % i)
        p.flush(timeout=120)
        stats = p.monitor.stats
    assert (stats.backups, stats.confirmed, stats.resent) == (n, n, 0)  # every receipt came through ZooKeeper
    consumer = Consumer(cluster.bootstrap, auto_offset_reset="earliest")
    try:
        tps = [TopicPartition("rack-cluster", q) for q in range(3)]
        assert sum(consumer.end_offsets(tps).values()) == n
    finally:
        consumer.close(autocommit=False)
    # the monitor deleted the receipts it read: the topic's children stay few
    assert len(_receipts(cluster, "rack-cluster")) < n


def test_a_topic_with_receipts_can_be_deleted(cluster: Cluster) -> None:
    _create(cluster, "rack-delete", 1)
    leader = cluster.json("/brokers/topics/rack-delete/partitions/0/state")["leader"]
    builder = RecordBatchBuilder()
    builder.append(None, b"v", None, [("rack.id", b"1")])
    with WireClient(cluster.brokers[leader].bootstrap) as c:
        c.send(ApiKey.PRODUCE, 8, _rack_body("rack-delete", builder.build()), client_id="w")
        cluster.wait(lambda: _receipts(cluster, "rack-delete"), what="a receipt")
    with Admin(cluster.bootstrap) as admin:
        admin.delete_topic("rack-delete", timeout_s=20)
    cluster.wait(lambda: cluster.zk.exists("/brokers/topics/rack-delete") is None, what="topic deleted")


def test_rack_producer_in_the_cluster_resends_what_was_dropped(cluster: Cluster) -> None:
    _create(cluster, "rack-cluster-lossy", 3)
    for b in cluster.brokers.values():
        _control(b, "inject", api="PRODUCE", count=2, drop=True)  # two requests lost, each broker
    n = 3000
    with Producer(
        bootstrap_servers=cluster.bootstrap,
        acks="rack",
        rack_zookeeper_connect=cluster.connect,
        rack_receipt_wait_ms=5000,
        rack_retry_interval_ms=500,
    ) as p:
        for i in range(n):
            p.send("rack-cluster-lossy", b"value-%d" % i)
        p.flush(timeout=120)
        stats = p.monitor.stats
    for b in cluster.brokers.values():
        _control(b, "clear_faults")  # a broker that got fewer requests keeps no armed fault
    assert stats.resent > 0 and stats.confirmed < n  # the dropped records had no receipt ...
    values = set(_values(cluster, "rack-cluster-lossy", 3, n))
    assert values == {b"value-%d" % i for i in range(n)}  # ... and came back through resends


def test_a_backlog_of_receipts_is_confirmed_a_chunk_at_a_time(cluster: Cluster) -> None:
    """A monitor that finds thousands of receipts waiting confirms them in chunks as they are read,
    so that its flush sees progress (read whole, 100,000 receipts were confirmed only after every
    read had come back, and flush took the silence for lost receipts)."""
    from hmb_client.rack.receipts import READ_CHUNK, ZooKeeperReceipts

    _create(cluster, "rack-backlog", 1)
    n = 2 * READ_CHUNK + 500
    waiting = [
        cluster.zk.create_async(
            "/brokers/topics/rack-backlog/produce - ", b"me;rack-backlog;%d" % i, sequence=True
        )
        for i in range(n)
    ]
    for w in waiting:
        w.get(timeout=60)
    batches: list[int] = []
    receipts = ZooKeeperReceipts(cluster.connect, "me", lambda got: batches.append(len(got)))
    try:
        receipts.watch("rack-backlog")
        cluster.wait(lambda: sum(batches) == n, timeout=60)
    finally:
        receipts.close()
    assert max(batches) <= READ_CHUNK and len(batches) >= 3, batches
