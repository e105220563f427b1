"""The cluster's pure rules, without ZooKeeper: Kafka's znode JSON, replica placement,
and the group-to-coordinator hash."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from hmb.cluster import layout
from hmb.cluster.assignment import PlacementError, assign_replicas
from hmb.cluster.layout import BrokerRegistration, Endpoint, PartitionState, TopicAssignment
from hmb.cluster.session import split_connect
from hmb.groups.offset_partitions import coordinator_partition, java_string_hash


def test_rack_unaware_placement_is_kafkas() -> None:
    # Kafka's own expectation for 5 brokers, 10 partitions, RF 3, fixed start 0
    placed = assign_replicas(dict.fromkeys(range(5)), 10, 3, start=0, shift=0)
    assert placed == {
        0: (0, 1, 2),
        1: (1, 2, 3),
        2: (2, 3, 4),
        3: (3, 4, 0),
        4: (4, 0, 1),
        5: (0, 2, 3),
        6: (1, 3, 4),
        7: (2, 4, 0),
        8: (3, 0, 1),
        9: (4, 1, 2),
    }


def test_rack_aware_placement_alternates_racks_as_kafka() -> None:
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    placed = assign_replicas(racks, 7, 3, start=0, shift=0)
    assert placed == {
        0: (0, 3, 1),
        1: (3, 1, 5),
        2: (1, 5, 4),
        3: (5, 4, 2),
        4: (4, 2, 0),
        5: (2, 0, 3),
        6: (0, 4, 2),
    }
    for replicas in placed.values():  # three racks, three replicas: one on each
        assert len({racks[b] for b in replicas}) == 3


def test_leaders_spread_evenly_from_any_start() -> None:
    for start in range(3):
        placed = assign_replicas(dict.fromkeys((0, 1, 2)), 6, 1, start=start)
        assert Counter(r[0] for r in placed.values()) == {0: 2, 1: 2, 2: 2}


def test_placement_refusals() -> None:
    with pytest.raises(PlacementError, match="larger than available brokers: 3"):
        assign_replicas(dict.fromkeys((0, 1, 2)), 1, 4)
    with pytest.raises(PlacementError, match="Not all brokers have rack information"):
        assign_replicas({0: "a", 1: None}, 1, 1)


def test_broker_registration_is_kafkas_version_5() -> None:
    reg = BrokerRegistration(
        3, (Endpoint("PLAINTEXT", "h", 9092, "PLAINTEXT"), Endpoint("SSL", "h", 9093, "SSL")), "r1", 42
    )
    obj = json.loads(reg.encode())
    assert obj == {
        "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL"},
        "endpoints": ["PLAINTEXT://h:9092", "SSL://h:9093"],
        "rack": "r1",
        "jmx_port": -1,
        "port": 9092,
        "host": "h",
        "version": 5,
        "timestamp": "42",
        "features": {},
    }
    assert BrokerRegistration.decode(3, reg.encode()) == reg
    assert "rack" not in json.loads(BrokerRegistration(1, reg.endpoints[:1]).encode())


def test_topic_and_partition_state_json() -> None:
    assignment = TopicAssignment({1: (2,), 0: (1,)}, "AAAAAAAAAAAAAAAAAAAAAQ")
    assert json.loads(assignment.encode()) == {
        "version": 3,
        "partitions": {"0": [1], "1": [2]},
        "topic_id": "AAAAAAAAAAAAAAAAAAAAAQ",
        "adding_replicas": {},
        "removing_replicas": {},
    }
    assert TopicAssignment.decode(assignment.encode()) == assignment
    state = PartitionState(2, 5, (2,), 7)
    assert json.loads(state.encode()) == {
        "controller_epoch": 7,
        "leader": 2,
        "version": 1,
        "leader_epoch": 5,
        "isr": [2],
    }
    assert PartitionState.decode(state.encode(), zk_version=3) == state
    assert json.loads(layout.encode_controller(4))["brokerid"] == 4
    assert sorted(json.loads(layout.encode_controller(4))) == ["brokerid", "timestamp", "version"]
    assert layout.decode_cluster_id(layout.encode_cluster_id("abc")) == "abc"
    assert json.loads(layout.encode_cluster_id("abc")) == {"version": "1", "id": "abc"}


def test_java_string_hash_and_coordinator_partition() -> None:
    # values of Java's "...".hashCode()
    assert java_string_hash("") == 0
    assert java_string_hash("a") == 97
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("polygenelubricants") == -(2**31)  # Java's famous MIN_VALUE hash
    assert coordinator_partition("polygenelubricants", 50) == 0  # Kafka's abs maps MIN_VALUE to 0
    assert coordinator_partition("hello", 50) == 99162322 % 50
    assert coordinator_partition("any-group", 1) == 0


def test_zookeeper_connect_with_a_chroot() -> None:
    assert split_connect("a:1,b:2/kafka/prod") == ("a:1,b:2", "/kafka/prod")
    assert split_connect("a:1") == ("a:1", "")
    assert split_connect("a:1/") == ("a:1", "")


def test_preferred_replica_election_znode_json() -> None:
    data = layout.encode_preferred_election([("t", 0), ("u", 3)])
    assert json.loads(data) == {
        "version": 1,
        "partitions": [{"topic": "t", "partition": 0}, {"topic": "u", "partition": 3}],
    }
    assert layout.decode_preferred_election(data) == [("t", 0), ("u", 3)]
