"""Transactions on a three-broker cluster: the coordinator is the leader of the transactional
id's ``__transaction_state`` partition, markers go to every partition's leader, and a
coordinator killed with kill -9 is replaced without an aborted record ever becoming visible
or a committed one doubled; producer ids are unique across the brokers."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from cluster import Cluster, three_brokers
from replicas import LAG_MS, create, everyone_sees_everyone, no_tracebacks, state
from wire import WireClient
from zookeeper import ZooKeeperProcess

from hmb.groups.offset_partitions import coordinator_partition
from hmb_client import Producer
from kproto import ApiKey, ErrorCode

ck = pytest.importorskip("confluent_kafka")

TXN_STATE = "__transaction_state"
PARTITIONS = 50  # transaction.state.log.num.partitions, Kafka's default
TOPIC = "txn-out"
KILL_TOPIC = "txn-kill"


@pytest.fixture(scope="module")
def cluster(zookeeper: ZooKeeperProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    for c in three_brokers(
        zookeeper.connect, tmp_path_factory.mktemp("txn"), f"replica.lag.time.max.ms={LAG_MS}"
    ):
        everyone_sees_everyone(c)
        create(c, TOPIC, 3, **{"min.insync.replicas": "2"})
        yield c


def producer(cluster: Cluster, tid: str) -> Any:
    p = ck.Producer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "transactional.id": tid,
            "transaction.timeout.ms": 60000,
            "message.timeout.ms": 60000,
            "linger.ms": 2,
        }
    )
    p.init_transactions(60)
    return p


def read_committed(cluster: Cluster, expect: int, settle_s: float = 1.0, topic: str = TOPIC) -> list[bytes]:
    """Every value a read_committed consumer gets from ``topic`` (waits for ``expect``, then a little
    longer so that a record that should not be there has time to show up)."""
    consumer = ck.Consumer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "group.id": f"verify-{time.monotonic_ns()}",
            "isolation.level": "read_committed",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([ck.TopicPartition(topic, p, 0) for p in range(3)])
    values: list[bytes] = []
    deadline = time.monotonic() + 60
    quiet_until = None
    while time.monotonic() < deadline:
        msg = consumer.poll(0.2)
        if msg is not None and not msg.error():
            values.append(msg.value())
        if len(values) >= expect:
            quiet_until = quiet_until or time.monotonic() + settle_s
            if time.monotonic() >= quiet_until:
                break
    consumer.close()
    return values


def find_coordinator(bootstrap: str, tid: str) -> int:
    """The node the broker at ``bootstrap`` names as ``tid``'s transaction coordinator."""
    with WireClient(bootstrap) as wire:
        resp = wire.request(ApiKey.FIND_COORDINATOR, 3, {"key": tid, "key_type": 1})
    assert resp.error_code == ErrorCode.NONE, resp
    return int(resp.node_id)


def init_producer_id(bootstrap: str) -> int:
    """An idempotent producer id from the broker at ``bootstrap``."""
    with WireClient(bootstrap) as wire:
        body = {"transactional_id": None, "transaction_timeout_ms": 60000}
        resp = wire.request(ApiKey.INIT_PRODUCER_ID, 2, body)
    assert resp.error_code == ErrorCode.NONE, resp
    return int(resp.producer_id)


def coordinator_of(cluster: Cluster, tid: str) -> int:
    p = coordinator_partition(tid, PARTITIONS)
    return int(cluster.wait(lambda: (state(cluster, TXN_STATE, p) or {}).get("leader", -1) + 1)) - 1


def test_commit_and_abort_across_the_brokers(cluster: Cluster) -> None:
    p = producer(cluster, "txn-basic")
    # __transaction_state was made on first use: 50 partitions, 3 replicas, compacted, min ISR 2
    assignment = cluster.json(f"/brokers/topics/{TXN_STATE}")["partitions"]
    assert len(assignment) == PARTITIONS and all(len(r) == 3 for r in assignment.values())
    config = cluster.json(f"/config/topics/{TXN_STATE}")["config"]
    assert config["cleanup.policy"] == "compact" and config["min.insync.replicas"] == "2"
    # FindCoordinator names the leader of the id's partition, whichever broker is asked
    leader = coordinator_of(cluster, "txn-basic")
    for b in cluster.brokers.values():
        assert find_coordinator(b.bootstrap, "txn-basic") == leader

    for name, commit in (("c1", True), ("a1", False), ("c2", True), ("a2", False)):
        p.begin_transaction()
        for i in range(30):  # every partition, so every broker leads some of the transaction
            p.produce(TOPIC, value=f"{name}-{i}".encode(), partition=i % 3)
        if commit:
            p.commit_transaction(30)
        else:
            p.flush(30)  # the aborted records are in the logs before the abort
            p.abort_transaction(30)
    values = read_committed(cluster, 60)
    assert sorted(values) == sorted(f"{n}-{i}".encode() for n in ("c1", "c2") for i in range(30))
    for i, b in cluster.brokers.items():  # only the coordinator describes the id
        with WireClient(b.bootstrap) as wire:
            body = {"transactional_ids": ["txn-basic"]}
            [got] = wire.request(ApiKey.DESCRIBE_TRANSACTIONS, 0, body).transaction_states
        if i == leader:
            assert (got.error_code, got.transaction_state) == (ErrorCode.NONE, "CompleteAbort")
        else:
            assert got.error_code == ErrorCode.NOT_COORDINATOR
    no_tracebacks(cluster)


def test_version_2_transactions_reach_every_partition_leader(cluster: Cluster) -> None:
    """hmb_client uses transaction version 2: it adds no partition itself, so the leader of each
    partition asks the id's coordinator (another broker, for some of the partitions) to add it;
    without that the commit marks only the coordinator's own partitions and the records of the
    others stay invisible to read_committed for ever."""
    tid, topic = "txn-v2", "txn-v2-out"
    create(cluster, topic, 3, **{"min.insync.replicas": "2"})
    with Producer(cluster.bootstrap, transactional_id=tid) as p:
        p.init_transactions()
        assert p._txn is not None and p._txn.version_2, "the client runs transaction version 2"
        coordinator = coordinator_of(cluster, tid)
        leaders = {
            cluster.wait(lambda i=i: (state(cluster, topic, i) or {}).get("leader", -1) + 1) - 1
            for i in range(3)
        }
        assert leaders - {coordinator}, "a partition is led by a broker that does not coordinate the id"
        for name, commit in (("c1", True), ("a1", False), ("c2", True)):
            p.begin_transaction()
            for i in range(30):
                p.send(topic, f"{name}-{i}".encode(), partition=i % 3)
            if commit:
                p.commit_transaction()
            else:
                p.flush()
                p.abort_transaction()
    values = read_committed(cluster, 60, topic=topic)
    assert sorted(values) == sorted(f"{n}-{i}".encode() for n in ("c1", "c2") for i in range(30))
    no_tracebacks(cluster)


def test_producer_ids_are_unique_across_brokers(cluster: Cluster) -> None:
    ids = set()
    for b in cluster.brokers.values():  # each broker hands out from its own block
        for _ in range(3):
            ids.add(init_producer_id(b.bootstrap))
    assert len(ids) == 3 * len(cluster.brokers)
    block = cluster.json("/latest_producer_id_block")
    assert block["version"] == 1 and int(block["block_end"]) >= max(ids)
    assert int(block["block_end"]) - int(block["block_start"]) == 999


def test_coordinator_killed_mid_stream(cluster: Cluster) -> None:
    tid = "txn-kill"
    create(cluster, KILL_TOPIC, 3, **{"min.insync.replicas": "2"})
    p = producer(cluster, tid)
    coordinator = coordinator_of(cluster, tid)
    committed: list[str] = []  # transactions whose commit returned
    aborted: list[str] = []  # transactions aborted by us or fenced by the next instance
    ambiguous: list[str] = []  # the commit failed with the coordinator: committed or aborted, whole
    for n in range(12):
        name = f"t{n}"
        p.begin_transaction()
        for i in range(20):
            p.produce(KILL_TOPIC, value=f"{name}-{i}".encode(), partition=i % 3)
        if n == 6:  # mid-stream: records of an open transaction are in the logs
            p.flush(30)
            cluster.brokers[coordinator].kill()
        try:
            if n % 4 == 3:
                p.abort_transaction(60)
                aborted.append(name)
            else:
                p.commit_transaction(60)
                committed.append(name)
        except ck.KafkaException as exc:
            err = exc.args[0]
            if err.txn_requires_abort():
                p.abort_transaction(60)
                aborted.append(name)
            else:  # fatal: a new instance fences the old one and finishes what it left
                ambiguous.append(name)
                p = producer(cluster, tid)
    assert coordinator_of(cluster, tid) != coordinator  # a new coordinator took the id over
    assert any(int(n[1:]) > 6 for n in committed), (committed, aborted, ambiguous)  # and served it
    # a new instance initialises against the new coordinator: the old one is fenced
    fresh = producer(cluster, tid)
    fresh.begin_transaction()
    for i in range(20):
        fresh.produce(KILL_TOPIC, value=f"fresh-{i}".encode(), partition=i % 3)
    fresh.commit_transaction(60)
    committed.append("fresh")
    p.begin_transaction()
    p.produce(KILL_TOPIC, value=b"zombie-0", partition=0)
    with pytest.raises(ck.KafkaException):
        p.commit_transaction(30)
    aborted.append("zombie")
    want = {f"{n}-{i}".encode() for n in committed for i in range(20)}
    expect = len(want) + 20 * len(ambiguous)
    values = read_committed(cluster, len(want), settle_s=2.0, topic=KILL_TOPIC)
    assert len(values) == len(set(values)), "a committed record was read twice"
    got = set(values)
    assert want <= got, sorted(want - got)[:5]
    assert not {v for v in got if v.split(b"-")[0].decode() in aborted}, "an aborted record is visible"
    for name in ambiguous:  # all of a transaction or nothing of it
        mine = {v for v in got if v.split(b"-")[0] == name.encode()}
        assert len(mine) in (0, 20), (name, len(mine))
    assert len(got) <= expect
    cluster.brokers[coordinator].restart()
    everyone_sees_everyone(cluster)


def test_offsets_sent_to_the_transaction_commit_with_it(cluster: Cluster) -> None:
    """Consume-transform-produce: the group's offsets go to its coordinator (another
    partition's leader) with the transaction, visible only once the transaction commits."""
    source, group = "txn-source", "txn-app"
    create(cluster, source, 1)
    feeder = ck.Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for i in range(10):
        feeder.produce(source, value=b"in-%d" % i, partition=0)
    assert feeder.flush(30) == 0
    consumer = ck.Consumer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "group.id": group,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
        }
    )
    consumer.subscribe([source])
    got: list[Any] = []
    deadline = time.monotonic() + 60
    while len(got) < 10 and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and not msg.error():
            got.append(msg)
    assert len(got) == 10
    p = producer(cluster, "txn-app-1")
    tp = [ck.TopicPartition(source, 0, got[-1].offset() + 1)]

    def committed() -> int:
        return int(consumer.committed([ck.TopicPartition(source, 0)], timeout=10)[0].offset)

    p.begin_transaction()
    for m in got[:5]:
        p.produce(TOPIC, value=b"out-" + m.value(), partition=0)
    p.send_offsets_to_transaction(tp, consumer.consumer_group_metadata(), 30)
    p.abort_transaction(30)
    assert committed() < 0  # aborted: no offset for the group
    p.begin_transaction()
    for m in got:
        p.produce(TOPIC, value=b"out-" + m.value(), partition=0)
    p.send_offsets_to_transaction(tp, consumer.consumer_group_metadata(), 30)
    p.commit_transaction(30)
    assert committed() == 10
    consumer.close()
    outs = [v for v in read_committed(cluster, 10) if v.startswith(b"out-")]
    assert sorted(outs) == sorted(b"out-in-%d" % i for i in range(10))
