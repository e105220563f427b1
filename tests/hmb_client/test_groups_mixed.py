"""hmb_client consumers sharing a group with kafka-python and librdkafka consumers.

All speak protocol type "consumer" and agree on ``range`` (the first of each
client's default list), so whichever member leads, the others read its
assignment bytes and it reads their subscriptions.  Against hmb (hmb_client
leads, decoding kafka-python's and librdkafka's subscriptions) and against
Tansu, the reference broker (kafka-python leads, decoding ours).
"""

from __future__ import annotations

from typing import Any

import pytest
from broker_process import BrokerProcess
from group_support import (
    KafkaPythonMember,
    Member,
    RdkafkaMember,
    create_topic,
    exactly_once,
    produce,
    split_among,
    value,
    wait_until,
)

from hmb_client.consumer import Consumer
from hmb_client.structs import TopicPartition

pytest.importorskip("confluent_kafka")
pytest.importorskip("kafka")

TOPIC = "shared"


def by_member(sink: list[Any]) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for _, partition, _, _, name in sink:
        out.setdefault(name, set()).add(partition)
    return out


def test_hmb_client_leads_a_group_with_kafka_python_and_librdkafka(broker: BrokerProcess) -> None:
    create_topic(broker.bootstrap, TOPIC, 6)
    everything = {TopicPartition(TOPIC, p) for p in range(6)}
    sink: list[Any] = []
    ours = Member("hmb-client", broker.bootstrap, "mixed", [TOPIC], sink)
    ours.start()
    wait_until(lambda: ours.stats is not None and ours.stats["joins"] >= 1, 30, "hmb_client joined first")
    others = [
        KafkaPythonMember("kafka-python", broker.bootstrap, "mixed", [TOPIC], sink),
        RdkafkaMember("librdkafka", broker.bootstrap, "mixed", [TOPIC], sink),
    ]
    for m in others:
        m.start()
    members = [ours, *others]
    try:
        wait_until(split_among(members, everything), 90, "three clients with two partitions each")
        assert ours.stats is not None and ours.stats["leader"] and ours.stats["protocol"] == "range"
        # range over members sorted by id: hmb-client-…, kafka-python-…, librdkafka…/rdkafka-…
        assert all(len(m.assignment) == 2 for m in members)
        produce(broker.bootstrap, TOPIC, 0, 600, 6)
        wait_until(lambda: len(sink) >= 600, 60, "every message consumed")
        seen = list(sink)
        assigned = {m.name: {tp.partition for tp in m.assignment} for m in members}
    finally:
        for m in members:
            m.stop()
    exactly_once(seen, {value(i) for i in range(600)})
    assert by_member(seen) == assigned
    with Consumer(broker.bootstrap, group_id="mixed") as c:
        assert {tp: c.committed(tp) for tp in everything} == dict.fromkeys(everything, 100)


def test_kafka_python_leads_hmb_client_on_tansu(tansu: Any) -> None:
    """Tansu answers a join after about half the session timeout (6 s here: ~3 s a join)."""
    create_topic(tansu.bootstrap, TOPIC, 4)
    everything = {TopicPartition(TOPIC, p) for p in range(4)}
    sink: list[Any] = []
    leader = KafkaPythonMember("kafka-python", tansu.bootstrap, "mixed", [TOPIC], sink)
    leader.start()
    wait_until(lambda: leader.assignment == everything, 90, "kafka-python alone with all partitions")
    ours = Member("hmb-client", tansu.bootstrap, "mixed", [TOPIC], sink)
    ours.start()
    try:
        wait_until(split_among([leader, ours], everything), 90, "two partitions each")
        assert ours.stats is not None and not ours.stats["leader"] and ours.stats["protocol"] == "range"
        produce(tansu.bootstrap, TOPIC, 0, 400, 4)
        wait_until(lambda: len(sink) >= 400, 60, "every message consumed")
        seen = list(sink)
        assigned = {m.name: {tp.partition for tp in m.assignment} for m in (leader, ours)}
    finally:
        for m in (ours, leader):
            m.stop()
    exactly_once(seen, {value(i) for i in range(400)})
    assert by_member(seen) == assigned
