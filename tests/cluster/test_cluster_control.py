"""The controller's control side with real brokers: controlled shutdown, ElectLeaders, auto
leader rebalance, and committed offsets across a coordinator's restart.

These tests write a three-replica topic's assignment into ZooKeeper by hand
(as Kafka's tools could) and let the controller place it: the leadership
rules act on replicas and ISRs whether or not records flow.  A follower that
comes back rejoins the ISR through replication (its leader's conditional
set), which the tests wait for.

"Before the registration goes" is checked with ZooKeeper's own order: the
zxid of each state change (``mzxid``) against the zxid at which the
broker's ephemeral node disappeared (the ``pzxid`` of ``/brokers/ids``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster import Cluster, three_brokers
from wire import WireClient
from zookeeper import ZooKeeperProcess

from hmb.cluster.layout import TopicAssignment
from hmb.groups.offset_partitions import coordinator_partition
from kproto import ApiKey, ErrorCode

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka import ElectionType, KafkaError, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

pytestmark = pytest.mark.interop

THREE = {0: (0, 1, 2), 1: (1, 2, 0), 2: (2, 0, 1)}  # partition -> replicas, the first preferred


def _state(cluster: Cluster, topic: str, p: int) -> tuple[dict[str, Any], int]:
    """A partition's state znode and the zxid that last changed it."""
    data, stat = cluster.zk.get(f"/brokers/topics/{topic}/partitions/{p}/state")
    return json.loads(data), stat.mzxid


def _three_replica_topic(cluster: Cluster, topic: str) -> None:
    cluster.zk.create(f"/config/topics/{topic}", b'{"version":1,"config":{}}', makepath=True)
    cluster.zk.create(f"/brokers/topics/{topic}", TopicAssignment(THREE, "AAAAAAAAAAAAAAAAAAAAAQ").encode())
    cluster.wait(
        lambda: all(cluster.zk.exists(f"/brokers/topics/{topic}/partitions/{p}/state") for p in THREE),
        what=f"the controller placing {topic}",
    )


def _single_replica_topic(cluster: Cluster, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap, "log_level": 3})
    assert (
        admin.create_topics([NewTopic(topic, partitions, 1)], operation_timeout=20)[topic].result(30) is None
    )


def _deregistered_at(cluster: Cluster, broker: int) -> int:
    assert cluster.zk.exists(f"/brokers/ids/{broker}") is None
    return int(cluster.zk.exists("/brokers/ids").pzxid)


def _controller(cluster: Cluster) -> int:
    return int(cluster.json("/controller")["brokerid"])


@pytest.fixture
def cluster(zookeeper: ZooKeeperProcess, tmp_path: Path) -> Iterator[Cluster]:
    yield from three_brokers(zookeeper.connect, tmp_path, "auto.leader.rebalance.enable=false")


def _check_handed_over(cluster: Cluster, broker: int, before: dict[int, dict[str, Any]]) -> None:
    """``broker`` stopped cleanly: its leaderships of ``moved`` went to in-sync replicas, and it
    left every ISR, all before its registration went."""
    gone = _deregistered_at(cluster, broker)
    for p, old in before.items():
        new, changed_at = _state(cluster, "moved", p)
        assert broker not in new["isr"], (p, new)
        if old["leader"] == broker:
            assert new["leader"] in old["isr"] and new["leader"] != broker, (p, new)
            assert new["leader_epoch"] == old["leader_epoch"] + 1
        else:
            assert new["leader"] == old["leader"] and new["leader_epoch"] == old["leader_epoch"]
        if broker in old["isr"]:
            assert changed_at < gone, f"moved-{p} changed after broker {broker} deregistered"


def test_controlled_shutdown_moves_leadership_before_the_registration_goes(cluster: Cluster) -> None:
    _three_replica_topic(cluster, "moved")
    _single_replica_topic(cluster, "single", 3)
    controller = _controller(cluster)
    first = next(i for i in cluster.brokers if i != controller)  # asks the controller over the wire
    before = {p: _state(cluster, "moved", p)[0] for p in THREE}
    single_led = [p for p in range(3) if _state(cluster, "single", p)[0]["leader"] == first]
    assert any(s["leader"] == first for s in before.values()) and single_led

    # hmb serve says who it is, who the controller is and what it leads
    started = cluster.brokers[first].log_text()
    assert (
        f"broker {first} in cluster {cluster.json('/cluster/id')['id']}: controller {controller}" in started
    )
    assert f"broker {first} leads" in started
    assert cluster.brokers[first].stop() == 0
    assert f"controlled shutdown of broker {first} done" in cluster.brokers[first].log_text()
    _check_handed_over(cluster, first, before)
    # one replica: nowhere to go, so offline once the broker is gone (Kafka's behaviour)
    gone = _deregistered_at(cluster, first)
    for p in single_led:
        state, changed_at = cluster.wait(
            lambda p=p: (s := _state(cluster, "single", p))[0]["leader"] == -1 and s,
            what=f"single-{p} offline",
        )
        assert state["isr"] == [first] and changed_at > gone

    # the controller itself: it moves its own leaderships in place, then gives up the role
    before = {p: _state(cluster, "moved", p)[0] for p in THREE}
    assert any(s["leader"] == controller for s in before.values())
    assert cluster.brokers[controller].stop() == 0
    assert f"controlled shutdown of broker {controller} done" in cluster.brokers[controller].log_text()
    _check_handed_over(cluster, controller, before)
    last = next(i for i in cluster.brokers if i not in (first, controller))
    assert all(_state(cluster, "moved", p)[0]["leader"] == last for p in THREE)
    assert (
        cluster.wait(lambda: cluster.json_if_any("/controller"), what="a new controller")["brokerid"] == last
    )


def _codes(results: dict[TopicPartition, Any]) -> dict[int, int]:
    return {
        tp.partition: (0 if exc is None else (exc.args[0] if hasattr(exc, "args") else exc).code())
        for tp, exc in results.items()
    }


def _rejoin_isr(cluster: Cluster, topic: str, p: int, broker: int) -> None:
    """A follower that came back catches up and its leader puts it back into the ISR."""
    cluster.wait(
        lambda: broker in _state(cluster, topic, p)[0]["isr"], timeout=60, what=f"{broker} back in sync"
    )


def test_elect_leaders_preferred_and_unclean_through_the_admin_client(cluster: Cluster) -> None:
    _three_replica_topic(cluster, "pref")
    _three_replica_topic(cluster, "tool")  # elected through Kafka's ZooKeeper-mode znode below
    controller = _controller(cluster)
    mover = next(i for i in cluster.brokers if i != controller)
    own = next(p for p, r in THREE.items() if r[0] == mover)  # the partition mover prefers
    assert cluster.brokers[mover].stop() == 0
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap, "log_level": 3})
    asked = [TopicPartition("pref", p) for p in THREE]

    got = _codes(admin.elect_leaders(ElectionType.PREFERRED, asked).result(30))
    others = {p: KafkaError.ELECTION_NOT_NEEDED for p in THREE if p != own}
    assert got == {own: KafkaError.PREFERRED_LEADER_NOT_AVAILABLE, **others}  # away, out of sync

    before = _state(cluster, "pref", own)[0]
    cluster.brokers[mover].restart()
    cluster.wait(lambda: cluster.zk.exists(f"/brokers/ids/{mover}"), what="the broker back")
    _rejoin_isr(cluster, "pref", own, mover)
    got = _codes(admin.elect_leaders(ElectionType.PREFERRED, asked).result(30))
    assert got == {own: 0, **others}
    after = _state(cluster, "pref", own)[0]
    assert (after["leader"], after["leader_epoch"]) == (mover, before["leader_epoch"] + 1)

    # kafka-preferred-replica-election --zookeeper's way: the znode, acted on and removed
    assert _state(cluster, "tool", own)[0]["leader"] != mover
    _rejoin_isr(cluster, "tool", own, mover)
    asked_json = {
        "version": 1,
        "partitions": [{"topic": "tool", "partition": own}, {"topic": "nope", "partition": 0}],
    }
    cluster.zk.create("/admin/preferred_replica_election", json.dumps(asked_json).encode())
    cluster.wait(
        lambda: not cluster.zk.exists("/admin/preferred_replica_election"), what="the znode acted on"
    )
    assert _state(cluster, "tool", own)[0]["leader"] == mover

    # unclean: a partition with one replica whose broker is gone has nobody to elect
    _single_replica_topic(cluster, "lone", 3)
    victim = next(i for i in cluster.brokers if i != _controller(cluster))
    lost = [p for p in range(3) if _state(cluster, "lone", p)[0]["leader"] == victim]
    cluster.brokers[victim].kill()
    cluster.wait(lambda: all(_state(cluster, "lone", p)[0]["leader"] == -1 for p in lost), what="offline")
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap, "log_level": 3})
    got = _codes(
        admin.elect_leaders(ElectionType.UNCLEAN, [TopicPartition("lone", p) for p in range(3)]).result(30)
    )
    assert got == {
        p: KafkaError.ELIGIBLE_LEADERS_NOT_AVAILABLE if p in lost else KafkaError.ELECTION_NOT_NEEDED
        for p in range(3)
    }


def test_only_the_controller_answers_elections_and_controlled_shutdowns_also_after_failover(
    cluster: Cluster,
) -> None:
    controller = _controller(cluster)
    other = next(i for i in cluster.brokers if i != controller)
    with WireClient(cluster.brokers[other].bootstrap) as wire:
        body = {
            "election_type": 0,
            "topic_partitions": [{"topic": "x", "partitions": [0]}],
            "timeout_ms": 1000,
        }
        resp = wire.request(ApiKey.ELECT_LEADERS, 2, body)
        assert resp.error_code == ErrorCode.NOT_CONTROLLER
        resp = wire.request(ApiKey.CONTROLLED_SHUTDOWN, 3, {"broker_id": other, "broker_epoch": -1})
        assert resp.error_code == ErrorCode.NOT_CONTROLLER
    with WireClient(cluster.brokers[controller].bootstrap) as wire:
        resp = wire.request(ApiKey.CONTROLLED_SHUTDOWN, 0, {"broker_id": 99})  # v0: header v0 too
        assert resp.error_code == ErrorCode.BROKER_NOT_AVAILABLE

    # after a controller failover, the new controller answers them
    _single_replica_topic(cluster, "after", 3)
    lost = {p for p in range(3) if _state(cluster, "after", p)[0]["leader"] == controller}
    cluster.brokers[controller].kill()
    successor = cluster.wait(
        lambda: (
            (got := cluster.json_if_any("/controller")) and got["brokerid"] != controller and got["brokerid"]
        ),
        what="a new controller",
    )
    with WireClient(cluster.brokers[successor].bootstrap) as wire:
        body = {
            "election_type": 0,
            "topic_partitions": [{"topic": "after", "partitions": [0, 1, 2]}],
            "timeout_ms": 5000,
        }

        def answered() -> Any:  # NOT_CONTROLLER until the new controller has taken office
            r = wire.request(ApiKey.ELECT_LEADERS, 2, body)
            return r if r.error_code != ErrorCode.NOT_CONTROLLER else None

        resp = cluster.wait(answered, what="the new controller in office")
        got = {
            p.partition_id: p.error_code for t in resp.replica_election_results for p in t.partition_result
        }
        assert got == {
            p: ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE if p in lost else ErrorCode.ELECTION_NOT_NEEDED
            for p in range(3)
        }
        survivor = next(i for i in cluster.brokers if i not in (controller, successor))
        resp = wire.request(ApiKey.CONTROLLED_SHUTDOWN, 3, {"broker_id": survivor, "broker_epoch": -1})
        assert (resp.error_code, list(resp.remaining_partitions)) == (ErrorCode.NONE, [])  # one replica each


@pytest.fixture
def balancing(zookeeper: ZooKeeperProcess, tmp_path: Path) -> Iterator[Cluster]:
    """A cluster whose controller checks the leaders' balance every second."""
    yield from three_brokers(zookeeper.connect, tmp_path, "leader.imbalance.check.interval.seconds=1")


def test_auto_leader_rebalance_gives_leadership_back(balancing: Cluster) -> None:
    cluster = balancing
    _three_replica_topic(cluster, "bal")
    controller = _controller(cluster)
    mover = next(i for i in cluster.brokers if i != controller)
    own = next(p for p, r in THREE.items() if r[0] == mover)
    assert cluster.brokers[mover].stop() == 0
    assert _state(cluster, "bal", own)[0]["leader"] != mover
    cluster.brokers[mover].restart()
    cluster.wait(lambda: cluster.zk.exists(f"/brokers/ids/{mover}"), what="the broker back")
    _rejoin_isr(cluster, "bal", own, mover)
    cluster.wait(lambda: _state(cluster, "bal", own)[0]["leader"] == mover, what="leadership given back")


@pytest.fixture
def offsets_alone(zookeeper: ZooKeeperProcess, tmp_path: Path) -> Iterator[Cluster]:
    """A cluster whose committed offsets have one replica: their partition goes offline with it."""
    yield from three_brokers(zookeeper.connect, tmp_path, "offsets.topic.replication.factor=1")


_KEEPER = {"group.id": "keeper", "auto.offset.reset": "earliest", "enable.auto.commit": False, "log_level": 3}


def _commit_six(cluster: Cluster) -> int:
    """Group "keeper" reads 6 of 10 records of "work" and commits; the offsets partition it uses."""
    _single_replica_topic(cluster, "work", 1)
    producer = ck.Producer({"bootstrap.servers": cluster.bootstrap, "log_level": 3})
    for i in range(10):
        producer.produce("work", f"m{i}".encode())
    assert producer.flush(30) == 0
    consumer = ck.Consumer({**_KEEPER, "bootstrap.servers": cluster.bootstrap})
    consumer.subscribe(["work"])
    seen = 0
    while seen < 6:
        msg = consumer.poll(1)
        if msg is not None and msg.error() is None:
            seen += 1
    consumer.commit(asynchronous=False)
    consumer.close()
    offsets = cluster.json("/brokers/topics/__consumer_offsets")["partitions"]
    return coordinator_partition("keeper", len(offsets))  # the group's partition of the offsets topic


def _committed(cluster: Cluster) -> int:
    consumer = ck.Consumer({**_KEEPER, "bootstrap.servers": cluster.bootstrap})
    try:
        return int(consumer.committed([TopicPartition("work", 0)], timeout=30)[0].offset)
    finally:
        consumer.close()


def test_committed_offsets_survive_their_coordinator_being_killed(offsets_alone: Cluster) -> None:
    cluster = offsets_alone
    home = _commit_six(cluster)
    coordinator = _state(cluster, "__consumer_offsets", home)[0]["leader"]
    assert [coordinator] == cluster.json("/brokers/topics/__consumer_offsets")["partitions"][str(home)]
    cluster.brokers[coordinator].kill()
    cluster.wait(lambda: _state(cluster, "__consumer_offsets", home)[0]["leader"] == -1, what="offline")
    cluster.brokers[coordinator].restart()
    cluster.wait(lambda: _state(cluster, "__consumer_offsets", home)[0]["leader"] == coordinator, what="back")
    assert _committed(cluster) == 6


def test_committed_offsets_move_to_an_in_sync_follower_when_their_coordinator_dies(cluster: Cluster) -> None:
    """Three replicas (the default): the commit was answered only once every in-sync replica
    held it, so the follower that takes the partition over reads it back from its own copy."""
    home = _commit_six(cluster)
    assert sorted(cluster.json("/brokers/topics/__consumer_offsets")["partitions"][str(home)]) == [0, 1, 2]
    coordinator = _state(cluster, "__consumer_offsets", home)[0]["leader"]
    cluster.brokers[coordinator].kill()  # at once: no time for followers to catch up afterwards
    cluster.wait(
        lambda: _state(cluster, "__consumer_offsets", home)[0]["leader"] not in (-1, coordinator),
        what="a new coordinator",
    )
    assert _committed(cluster) == 6


def test_topics_describe_shows_replicas_isr_and_offline(
    cluster: Cluster, capsys: pytest.CaptureFixture[str]
) -> None:
    from hmb_client.cli import main

    _three_replica_topic(cluster, "shown")
    victim = next(i for i in cluster.brokers if i != _controller(cluster))
    cluster.brokers[victim].kill()
    cluster.wait(
        lambda: all(victim not in _state(cluster, "shown", p)[0]["isr"] for p in THREE), what="failover"
    )

    def seen_everywhere() -> bool:  # every live broker's view has caught up with ZooKeeper
        leaders = {p: _state(cluster, "shown", p)[0]["leader"] for p in THREE}
        for b in cluster.brokers.values():
            if b.alive():
                md = AdminClient({"bootstrap.servers": b.bootstrap, "log_level": 3}).list_topics(
                    "shown", timeout=10
                )
                if (
                    victim in md.brokers
                    or {p: m.leader for p, m in md.topics["shown"].partitions.items()} != leaders
                ):
                    return False
        return True

    cluster.wait(seen_everywhere, what="the brokers' views")
    assert main(["topics", "describe", "shown", "--bootstrap-server", cluster.bootstrap]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[-3:] == ["REPLICAS", "ISR", "OFFLINE"]
    rows = {int(r[1]): r for r in (line.split() for line in lines[1:])}
    for p, replicas in THREE.items():
        state = _state(cluster, "shown", p)[0]
        live = [b for b in replicas if b != victim]
        assert rows[p][2] == str(state["leader"]) and state["leader"] in live
        assert rows[p][6:] == [",".join(map(str, replicas)), ",".join(map(str, state["isr"])), str(victim)]
        assert sorted(state["isr"]) == sorted(live)
