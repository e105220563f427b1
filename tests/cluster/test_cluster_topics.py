"""Topics in a three-broker cluster: placement, replication factors, clients across
brokers, leadership checks, deletion, and a broker that restarts with its data.

One ZooKeeper and one cluster for the whole module (a JVM and three brokers cost
seconds); each test uses topics of its own, and the restart test comes last.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator

import pytest
from cluster import Cluster, three_brokers
from wire import WireClient, fetch_body
from zookeeper import ZooKeeperProcess

from hmb.groups.offset_partitions import coordinator_partition
from kproto import ApiKey, ErrorCode

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def cluster(zookeeper: ZooKeeperProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    yield from three_brokers(zookeeper.connect, tmp_path_factory.mktemp("cluster"))


def _admin(bootstrap: str) -> AdminClient:
    return AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})


def _create(cluster: Cluster, via: int, topic: str, partitions: int, rf: int = 1) -> None:
    admin = _admin(cluster.brokers[via].bootstrap)  # kept: the futures die with their client
    futures = admin.create_topics([NewTopic(topic, partitions, rf)], operation_timeout=20)
    assert futures[topic].result(30) is None


def _leaders(cluster: Cluster, topic: str, partitions: int) -> dict[int, int]:
    return {
        p: cluster.json(f"/brokers/topics/{topic}/partitions/{p}/state")["leader"] for p in range(partitions)
    }


def test_topic_made_through_any_broker_spreads_its_leaders(cluster: Cluster) -> None:
    controller = cluster.json("/controller")["brokerid"]
    via = next(i for i in cluster.brokers if i != controller)  # not the controller: it reacts
    _create(cluster, via, "spread", 6)
    assignment = cluster.json("/brokers/topics/spread")
    assert assignment["version"] == 3
    assert assignment["adding_replicas"] == {} and assignment["removing_replicas"] == {}
    assert len(assignment["topic_id"]) == 22  # a base64url uuid, as Kafka writes it
    assert sorted(assignment["partitions"]) == [str(p) for p in range(6)]
    assert all(len(r) == 1 for r in assignment["partitions"].values())
    epoch = int(cluster.zk.get("/controller_epoch")[0])
    for p in range(6):
        state = cluster.json(f"/brokers/topics/spread/partitions/{p}/state")
        assert state == {
            "controller_epoch": epoch,
            "leader": assignment["partitions"][str(p)][0],
            "version": 1,
            "leader_epoch": 0,
            "isr": assignment["partitions"][str(p)],
        }
    assert Counter(_leaders(cluster, "spread", 6).values()) == {0: 2, 1: 2, 2: 2}
    assert json.loads(cluster.zk.get("/config/topics/spread")[0]) == {"version": 1, "config": {}}
    for b in cluster.brokers.values():  # every broker tells clients the same leaders
        md = _admin(b.bootstrap).list_topics("spread", timeout=10)
        assert sorted(md.brokers) == [0, 1, 2]
        assert md.controller_id == controller if hasattr(md, "controller_id") else True
        assert {p: m.leader for p, m in md.topics["spread"].partitions.items()} == _leaders(
            cluster, "spread", 6
        )


def test_replication_factor_above_the_live_brokers_is_refused_and_nothing_is_made(
    cluster: Cluster,
) -> None:
    admin = _admin(cluster.bootstrap)
    admin.create_topics([NewTopic("three-copies", 2, 3)])["three-copies"].result(15)
    placed = cluster.json("/brokers/topics/three-copies")["partitions"]
    assert {p: sorted(r) for p, r in placed.items()} == {"0": [0, 1, 2], "1": [0, 1, 2]}
    four = admin.create_topics([NewTopic("four-copies", 1, 4)])["four-copies"]
    with pytest.raises(ck.KafkaException) as exc:
        four.result(15)
    assert exc.value.args[0].code() == ck.KafkaError.INVALID_REPLICATION_FACTOR
    assert "larger than available brokers: 3" in exc.value.args[0].str()
    assert cluster.zk.exists("/brokers/topics/four-copies") is None
    assert cluster.zk.exists("/config/topics/four-copies") is None


def test_off_the_leader_a_partition_is_not_served(cluster: Cluster) -> None:
    _create(cluster, 0, "led", 3)
    leaders = _leaders(cluster, "led", 3)
    p, leader = next(iter(leaders.items()))
    other = next(i for i in cluster.brokers if i != leader)
    cluster.wait(lambda: (cluster.brokers[other].data_dir / f"led-{p}").exists(), what="the local copy")
    with WireClient(cluster.brokers[other].bootstrap) as c:
        body = c.request(ApiKey.FETCH, 0, fetch_body("led", p, 0))
        assert body.responses[0].partitions[0].error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    with WireClient(cluster.brokers[leader].bootstrap) as c:
        body = c.request(ApiKey.FETCH, 0, fetch_body("led", p, 0))
        assert body.responses[0].partitions[0].error_code == ErrorCode.NONE


def test_groups_are_served_by_their_coordinator_only(cluster: Cluster) -> None:
    with WireClient(cluster.brokers[0].bootstrap) as c:  # the first use makes __consumer_offsets
        cluster.wait(
            lambda: (
                c.request(ApiKey.FIND_COORDINATOR, 1, {"key": "some-group", "key_type": 0}).error_code
                == ErrorCode.NONE
            ),
            what="the group's coordinator",
        )
    partitions = len(cluster.json("/brokers/topics/__consumer_offsets")["partitions"])
    home = coordinator_partition("some-group", partitions)
    coordinator = cluster.json(f"/brokers/topics/__consumer_offsets/partitions/{home}/state")["leader"]
    for b in cluster.brokers.values():  # every broker names the same coordinator
        with WireClient(b.bootstrap) as c:
            found = c.request(ApiKey.FIND_COORDINATOR, 1, {"key": "some-group", "key_type": 0})
            assert (found.error_code, found.node_id) == (ErrorCode.NONE, coordinator)
            assert found.port == cluster.brokers[coordinator].port
    other = next(i for i in cluster.brokers if i != coordinator)
    join = {
        "group_id": "some-group",
        "session_timeout_ms": 10000,
        "member_id": "",
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": b""}],
    }
    heartbeat = {"group_id": "some-group", "generation_id": 1, "member_id": "m"}
    with WireClient(cluster.brokers[other].bootstrap) as c:
        assert c.request(ApiKey.JOIN_GROUP, 0, join).error_code == ErrorCode.NOT_COORDINATOR
        assert c.request(ApiKey.HEARTBEAT, 0, heartbeat).error_code == ErrorCode.NOT_COORDINATOR
        # the offsets and group admin requests too: the offsets are held by the coordinator only
        commit = {
            "group_id": "some-group",
            "topics": [
                {
                    "name": "led",
                    "partitions": [{"partition_index": 0, "committed_offset": 1, "committed_metadata": ""}],
                }
            ],
        }
        got = c.request(ApiKey.OFFSET_COMMIT, 0, commit)
        assert got.topics[0].partitions[0].error_code == ErrorCode.NOT_COORDINATOR
        fetch = {"group_id": "some-group", "topics": [{"name": "led", "partition_indexes": [0]}]}
        assert c.request(ApiKey.OFFSET_FETCH, 2, fetch).error_code == ErrorCode.NOT_COORDINATOR
        described = c.request(ApiKey.DESCRIBE_GROUPS, 0, {"groups": ["some-group"]})
        assert described.groups[0].error_code == ErrorCode.NOT_COORDINATOR
        deleted = c.request(ApiKey.DELETE_GROUPS, 0, {"groups_names": ["some-group"]})
        assert deleted.results[0].error_code == ErrorCode.NOT_COORDINATOR
    with WireClient(cluster.brokers[coordinator].bootstrap) as c:
        assert c.request(ApiKey.JOIN_GROUP, 0, join).error_code == ErrorCode.NONE


def _consume_confluent(bootstrap: str, topic: str, expected: int) -> list[tuple[int, int, bytes]]:
    consumer = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{topic}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "log_level": 3,
        }
    )
    consumer.subscribe([topic])
    got: list[tuple[int, int, bytes]] = []
    try:
        for _ in range(600):
            if len(got) >= expected:
                break
            msg = consumer.poll(0.1)
            if msg is not None and msg.error() is None:
                got.append((msg.partition(), msg.offset(), msg.value()))
    finally:
        consumer.close()
    return got


def test_clients_produce_and_consume_across_the_three_brokers(cluster: Cluster) -> None:
    kafka = pytest.importorskip("kafka")
    _create(cluster, 1, "across", 6)
    assert len(set(_leaders(cluster, "across", 6).values())) == 3
    errors: list[object] = []
    producer = ck.Producer({"bootstrap.servers": cluster.bootstrap, "log_level": 3})
    for i in range(60):
        producer.produce(
            "across", f"ck-{i}".encode(), partition=i % 6, on_delivery=lambda e, m: e and errors.append(e)
        )
    assert producer.flush(30) == 0 and not errors
    kp = kafka.KafkaProducer(bootstrap_servers=cluster.bootstrap.split(","))
    futures = [kp.send("across", f"kp-{i}".encode(), partition=i % 6) for i in range(60)]
    assert [f.get(timeout=30).partition for f in futures] == [i % 6 for i in range(60)]
    kp.close()
    got = _consume_confluent(cluster.bootstrap, "across", 120)
    assert len(got) == 120
    for p in range(6):  # per partition: offsets 0..19, confluent's ten first, in order
        mine = sorted((o, v) for q, o, v in got if q == p)
        assert [o for o, _ in mine] == list(range(20))
        assert [v for _, v in mine] == [f"ck-{i}".encode() for i in range(p, 60, 6)] + [
            f"kp-{i}".encode() for i in range(p, 60, 6)
        ]
    kc = kafka.KafkaConsumer(
        "across",
        bootstrap_servers=cluster.bootstrap.split(","),
        auto_offset_reset="earliest",
        group_id="kp-across",
        consumer_timeout_ms=10000,
    )
    values = Counter(m.value for m in kc)
    kc.close()
    assert sum(values.values()) == 120 and len(values) == 120


def test_deleting_a_topic_goes_through_the_controller(cluster: Cluster) -> None:
    _create(cluster, 2, "doomed", 3)
    cluster.wait(lambda: all((b.data_dir / "doomed-0").exists() for b in cluster.brokers.values()))
    admin = _admin(cluster.brokers[0].bootstrap)
    futures = admin.delete_topics(["doomed"], operation_timeout=20)
    assert futures["doomed"].result(30) is None
    assert cluster.zk.exists("/brokers/topics/doomed") is None
    assert cluster.zk.exists("/config/topics/doomed") is None
    assert cluster.zk.get_children("/admin/delete_topics") == []
    cluster.wait(
        lambda: (
            not any((b.data_dir / f"doomed-{p}").exists() for b in cluster.brokers.values() for p in range(3))
        ),
        what="every broker's copy removed",
    )


def test_partitions_added_through_any_broker_are_placed_and_opened(cluster: Cluster) -> None:
    from confluent_kafka.admin import NewPartitions

    _create(cluster, 0, "grown", 2)
    admin = _admin(cluster.brokers[2].bootstrap)
    futures = admin.create_partitions([NewPartitions("grown", 5)], operation_timeout=20)
    assert futures["grown"].result(30) is None
    assignment = cluster.json("/brokers/topics/grown")
    assert sorted(assignment["partitions"]) == [str(p) for p in range(5)]
    leaders = _leaders(cluster, "grown", 5)
    assert set(leaders.values()) <= {0, 1, 2}
    cluster.wait(
        lambda: all((b.data_dir / f"grown-{p}").exists() for b in cluster.brokers.values() for p in range(5)),
        what="every broker's new partitions",
    )
    producer = ck.Producer({"bootstrap.servers": cluster.bootstrap, "log_level": 3})
    producer.produce("grown", b"in the new partition", partition=4)
    assert producer.flush(30) == 0
    shrink = admin.create_partitions([NewPartitions("grown", 3)])["grown"]
    with pytest.raises(ck.KafkaException) as exc:
        shrink.result(15)
    assert exc.value.args[0].code() == ck.KafkaError.INVALID_PARTITIONS


def test_a_topic_is_auto_created_through_the_cluster(cluster: Cluster) -> None:
    producer = ck.Producer({"bootstrap.servers": cluster.brokers[1].bootstrap, "log_level": 3})
    errors: list[object] = []
    producer.produce("made-on-first-use", b"v", on_delivery=lambda e, m: e and errors.append(e))
    assert producer.flush(30) == 0 and not errors
    assignment = cluster.json("/brokers/topics/made-on-first-use")
    assert len(assignment["partitions"]) == 1  # num.partitions
    assert cluster.json("/brokers/topics/made-on-first-use/partitions/0/state")["leader"] in (0, 1, 2)


def _retention_everywhere(cluster: Cluster, topic: str, value: str) -> None:
    """Each broker's own answer (a client would send DescribeConfigs to any one broker)."""
    resource = {"resource_type": 2, "resource_name": topic, "configuration_keys": ["retention.ms"]}
    request = {"resources": [resource], "include_synonyms": False}
    for b in cluster.brokers.values():
        with WireClient(b.bootstrap) as c:

            def retention() -> bool:
                body = c.request(ApiKey.DESCRIBE_CONFIGS, 1, request)
                return [e.value for e in body.results[0].configs] == [value]

            cluster.wait(retention, what=f"broker at {b.bootstrap} to apply retention.ms={value}")


def test_topic_settings_written_in_zookeeper_reach_every_broker(cluster: Cluster) -> None:
    _create(cluster, 0, "tuned", 1)
    config = json.dumps({"version": 1, "config": {"retention.ms": "1234"}}).encode()
    cluster.zk.set("/config/topics/tuned", config)  # as kafka-configs --zookeeper wrote it
    _retention_everywhere(cluster, "tuned", "1234")


def test_topic_settings_altered_through_one_broker_reach_every_broker(cluster: Cluster) -> None:
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

    _create(cluster, 1, "altered", 1)
    admin = _admin(cluster.brokers[2].bootstrap)
    entry = ConfigEntry("retention.ms", "4321", incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource(ConfigResource.Type.TOPIC, "altered", incremental_configs=[entry])
    assert admin.incremental_alter_configs([resource])[resource].result(15) is None
    cluster.wait(
        lambda: cluster.json("/config/topics/altered") == {"version": 1, "config": {"retention.ms": "4321"}},
        what="the change shared through ZooKeeper",
    )
    _retention_everywhere(cluster, "altered", "4321")


def test_a_restarted_broker_leads_its_partitions_again_with_its_data(cluster: Cluster) -> None:
    _create(cluster, 0, "rejoin", 3)
    leaders = _leaders(cluster, "rejoin", 3)
    producer = ck.Producer({"bootstrap.servers": cluster.bootstrap, "log_level": 3})
    for i in range(30):
        producer.produce("rejoin", f"r-{i}".encode(), partition=i % 3)
    assert producer.flush(30) == 0
    victim = next(
        b for b in (1, 2, 0) if b in leaders.values() and b != cluster.json("/controller")["brokerid"]
    )
    theirs = [p for p, b in leaders.items() if b == victim]
    epochs = {p: cluster.json(f"/brokers/topics/rejoin/partitions/{p}/state")["leader_epoch"] for p in theirs}
    cluster.brokers[victim].kill()
    cluster.wait(lambda: all(_leaders(cluster, "rejoin", 3)[p] == -1 for p in theirs), what="leaderless")
    survivor = next(b for i, b in cluster.brokers.items() if i != victim)
    admin = _admin(survivor.bootstrap)

    def told_leaderless() -> object:  # the survivor's view follows ZooKeeper within a moment
        md = admin.list_topics("rejoin", timeout=10)
        return md if all(md.topics["rejoin"].partitions[p].leader == -1 for p in theirs) else None

    md = cluster.wait(told_leaderless, what="Metadata without a leader")
    for p in theirs:  # as Kafka with one replica: no leader until the broker returns
        assert md.topics["rejoin"].partitions[p].leader == -1
        assert md.topics["rejoin"].partitions[p].error.code() == ck.KafkaError.LEADER_NOT_AVAILABLE
    config = json.dumps({"version": 1, "config": {"retention.ms": "5555"}}).encode()
    cluster.zk.set("/config/topics/rejoin", config)  # changed while the victim is down
    cluster.brokers[victim].restart()
    cluster.wait(
        lambda: all(_leaders(cluster, "rejoin", 3)[p] == victim for p in theirs), what="leading again"
    )
    for p in theirs:
        state = cluster.json(f"/brokers/topics/rejoin/partitions/{p}/state")
        assert state["leader_epoch"] > epochs[p]
    got = _consume_confluent(cluster.bootstrap, "rejoin", 30)
    assert sorted(v for _, _, v in got) == sorted(f"r-{i}".encode() for i in range(30))
    _retention_everywhere(cluster, "rejoin", "5555")  # the restarted broker caught up with it
