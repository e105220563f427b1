"""hmb_client consumer groups against Tansu, the Kafka-compatible reference broker.

Tansu answers a JoinGroup only after about half the session timeout (measured:
~3 s with the 6 s used here, so ~23 s with Kafka's default 45 s), so these
tests keep to one or two members; the larger scenarios run against hmb
(test_groups_hmb.py).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from group_support import Member, create_topic, exactly_once, produce, split_among, value, wait_until

from hmb_client.consumer import Consumer
from hmb_client.structs import TopicPartition

pytest.importorskip("confluent_kafka")

TOPIC = "orders"


def test_subscribe_consume_commit_and_resume(tansu: Any) -> None:
    create_topic(tansu.bootstrap, TOPIC, 3)
    produce(tansu.bootstrap, TOPIC, 0, 90, 3)
    sink: list[Any] = []
    first = Member("first", tansu.bootstrap, "g1", [TOPIC], sink)
    started = time.monotonic()
    first.start()
    wait_until(lambda: len(first.assignment) == 3, 60, "the only member assigned everything")
    join_s = time.monotonic() - started
    wait_until(lambda: len(sink) >= 90, 60, "90 records")
    assert first.stats is not None and first.stats["leader"] and first.stats["protocol"] == "range"
    first.stop()  # commits on close, then LeaveGroup
    with Consumer(tansu.bootstrap, group_id="g1") as c:
        assert [c.committed(TopicPartition(TOPIC, p)) for p in range(3)] == [30, 30, 30]

    produce(tansu.bootstrap, TOPIC, 90, 120, 3)
    second = Member("second", tansu.bootstrap, "g1", [TOPIC], sink)
    second.start()
    wait_until(lambda: len(sink) >= 120, 60, "the 30 new records")
    second.stop()
    exactly_once(sink, {value(i) for i in range(120)})
    assert sorted(v for *_, v, name in sink if name == "second") == [value(i) for i in range(90, 120)]
    assert join_s < 30, f"a join took {join_s:.1f}s"


def test_two_members_share_then_one_leaves(tansu: Any) -> None:
    create_topic(tansu.bootstrap, TOPIC, 4)
    everything = {TopicPartition(TOPIC, p) for p in range(4)}
    sink: list[Any] = []
    produce(tansu.bootstrap, TOPIC, 0, 400, 4)
    a = Member("a", tansu.bootstrap, "g2", [TOPIC], sink)
    b = Member("b", tansu.bootstrap, "g2", [TOPIC], sink)
    a.start()
    b.start()
    try:
        wait_until(split_among([a, b], everything), 90, "two partitions each")
        assert len(a.assignment) == len(b.assignment) == 2
        produce(tansu.bootstrap, TOPIC, 400, 600, 4)
        a.stop()  # commit on close + LeaveGroup: b takes over a's partitions where a stopped
        wait_until(lambda: b.assignment == everything, 90, "b with every partition")
        produce(tansu.bootstrap, TOPIC, 600, 800, 4)
        wait_until(lambda: len(sink) >= 800, 60, "every message consumed")
    finally:
        a.stop()
        b.stop()
    exactly_once(sink, {value(i) for i in range(800)})
    with Consumer(tansu.bootstrap, group_id="g2") as c:
        assert {tp: c.committed(tp) for tp in everything} == dict.fromkeys(everything, 200)
