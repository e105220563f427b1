"""hmb_client consumer groups (subscribe) against the hmb broker process.

The central property: across rebalances -- a member leaving, another
joining -- every message is consumed exactly once, because partitions are
given up only after their consumed positions are committed (commit on
revoke) and their new owner starts from those commits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from broker_process import BrokerProcess
from group_support import (
    FAST_GROUP,
    Member,
    create_topic,
    exactly_once,
    produce,
    split_among,
    value,
    wait_until,
)

from hmb_client.consumer import Consumer, ConsumerRebalanceListener
from hmb_client.errors import IllegalStateError, RebalanceInProgressError
from hmb_client.structs import TopicPartition

pytest.importorskip("confluent_kafka")

TOPIC = "orders"


def tps(topic: str, n: int) -> set[TopicPartition]:
    return {TopicPartition(topic, p) for p in range(n)}


def committed(
    bootstrap: str, group: str, partitions: set[TopicPartition]
) -> dict[TopicPartition, int | None]:
    with Consumer(bootstrap, group_id=group) as c:
        return {tp: c.committed(tp) for tp in partitions}


def test_three_members_one_leaves_one_joins_every_message_once(broker: BrokerProcess) -> None:
    create_topic(broker.bootstrap, TOPIC, 6)
    everything = tps(TOPIC, 6)
    sink: list[Any] = []
    produce(broker.bootstrap, TOPIC, 0, 600, 6)
    members = [Member(f"m{i}", broker.bootstrap, "g3", [TOPIC], sink) for i in range(3)]
    for m in members:
        m.start()
    wait_until(split_among(members, everything), 60, "3 members with 2 partitions each")
    assert all(len(m.assignment) == 2 for m in members)
    produce(broker.bootstrap, TOPIC, 600, 900, 6)
    wait_until(lambda: len(sink) >= 300, 60, "consumption under way")

    members[0].stop()  # commits its positions and leaves: a rebalance at once
    newcomer = Member("m3", broker.bootstrap, "g3", [TOPIC], sink)
    newcomer.start()
    produce(broker.bootstrap, TOPIC, 900, 1050, 6)  # while the group rebalances
    group = [members[1], members[2], newcomer]
    wait_until(split_among(group, everything), 60, "the new member in, 2 partitions each")
    produce(broker.bootstrap, TOPIC, 1050, 1200, 6)  # some certainly for the newcomer
    wait_until(lambda: len(sink) >= 1200, 60, "every message consumed")
    for m in group:
        m.stop()
    exactly_once(sink, {value(i) for i in range(1200)})
    assert {name for *_, name in sink} == {"m0", "m1", "m2", "m3"}
    assert committed(broker.bootstrap, "g3", everything) == dict.fromkeys(everything, 200)


class Recorder(ConsumerRebalanceListener):
    """Records callbacks, with what commit/position say inside them."""

    def __init__(self) -> None:
        self.consumer: Consumer | None = None
        self.calls: list[tuple[str, set[TopicPartition], Any]] = []

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        assert self.consumer is not None
        seen = {tp: (self.consumer.position(tp), self.consumer.committed(tp)) for tp in revoked}
        self.calls.append(("revoked", revoked, seen))

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        assert self.consumer is not None
        self.calls.append(("assigned", assigned, self.consumer.assignment()))
        for tp in assigned:
            self.consumer.seek(tp, 1)  # decides where consumption starts


def test_listener_runs_in_poll_after_commit_on_revoke(broker: BrokerProcess) -> None:
    create_topic(broker.bootstrap, TOPIC, 2)
    produce(broker.bootstrap, TOPIC, 0, 20, 2)
    rec = Recorder()
    c = Consumer(broker.bootstrap, group_id="gl", auto_offset_reset="earliest", **FAST_GROUP)
    rec.consumer = c
    try:
        c.subscribe([TOPIC], rec)
        got: list[Any] = []
        wait_until(lambda: got.extend(c.poll(0.2)) or len(got) >= 18, 30, "18 records")
        assert [name for name, *_ in rec.calls] == ["assigned"]
        assert rec.calls[0][1] == rec.calls[0][2] == tps(TOPIC, 2)
        assert {r.offset for r in got} == set(range(1, 10)), "consumption starts where the listener seeked"

        other = Member("other", broker.bootstrap, "gl", [TOPIC], [])
        other.start()
        wait_until(lambda: c.poll(0.1) is not None and len(rec.calls) >= 3, 30, "revoke and assign again")
        (_, revoked, seen), (_, assigned, now) = rec.calls[1], rec.calls[2]
        assert revoked == tps(TOPIC, 2)
        assert seen == {tp: (10, 10) for tp in revoked}, "positions committed before the revoke callback"
        assert assigned == now and len(assigned) == 1
        other.stop()
    finally:
        c.close()


def test_resume_after_a_broker_restart(broker: BrokerProcess) -> None:
    create_topic(broker.bootstrap, TOPIC, 3)
    produce(broker.bootstrap, TOPIC, 0, 90, 3)
    sink: list[Any] = []
    first = Member("first", broker.bootstrap, "gr", [TOPIC], sink)
    first.start()
    wait_until(lambda: len(sink) >= 90, 60, "90 records")
    first.stop()
    broker.stop()
    broker.restart()
    produce(broker.bootstrap, TOPIC, 90, 150, 3)
    second = Member("second", broker.bootstrap, "gr", [TOPIC], sink)
    second.start()
    wait_until(lambda: len(sink) >= 150, 60, "the 60 new records")
    second.stop()
    exactly_once(sink, {value(i) for i in range(150)})
    assert {v for *_, v, name in sink if name == "second"} == {value(i) for i in range(90, 150)}


def test_a_topic_created_later_makes_the_group_rejoin(make_broker: Callable[..., BrokerProcess]) -> None:
    broker = make_broker("auto.create.topics.enable=false")
    sink: list[Any] = []
    m = Member("m", broker.bootstrap, "gt", ["later"], sink, metadata_max_age_ms=300)
    m.start()
    wait_until(lambda: m.stats is not None and m.stats["joins"] >= 1, 30, "joined with nothing to consume")
    assert m.assignment == set()
    create_topic(broker.bootstrap, "later", 2)
    wait_until(lambda: m.assignment == tps("later", 2), 30, "the new topic's partitions assigned")
    produce(broker.bootstrap, "later", 0, 10, 2)
    wait_until(lambda: len(sink) >= 10, 30, "its records consumed")
    m.stop()
    exactly_once(sink, {value(i) for i in range(10)})


def test_roundrobin_when_every_member_prefers_it(broker: BrokerProcess) -> None:
    create_topic(broker.bootstrap, "a-topic", 2)
    create_topic(broker.bootstrap, "b-topic", 2)
    strategy = {"partition_assignment_strategy": ["roundrobin", "range"]}
    members = [
        Member(f"rr{i}", broker.bootstrap, "grr", ["a-topic", "b-topic"], [], **strategy) for i in range(2)
    ]
    for m in members:
        m.start()
    everything = tps("a-topic", 2) | tps("b-topic", 2)
    wait_until(split_among(members, everything), 60, "both members assigned")
    for m in members:
        assert m.stats is not None and m.stats["protocol"] == "roundrobin"
        # Round robin deals a0 a1 b0 b1 in turn: each member has one partition of each topic
        # (range would give the first member partition 0 of both).
        assert {tp.topic for tp in m.assignment} == {"a-topic", "b-topic"}
    leader = next(m for m in members if m.stats and m.stats["leader"])
    follower = next(m for m in members if m is not leader)
    assert leader.assignment and follower.assignment
    for m in members:
        m.stop()


def test_commit_names_the_generation_and_unsubscribe_leaves(broker: BrokerProcess) -> None:
    create_topic(broker.bootstrap, TOPIC, 2)
    produce(broker.bootstrap, TOPIC, 0, 10, 2)
    c = Consumer(
        broker.bootstrap, group_id="gc", auto_offset_reset="earliest", enable_auto_commit=False, **FAST_GROUP
    )
    try:
        c.subscribe([TOPIC])
        with pytest.raises(IllegalStateError, match="subscribed"):
            c.assign([TopicPartition(TOPIC, 0)])
        got: list[Any] = []
        wait_until(lambda: got.extend(c.poll(0.2)) or len(got) >= 10, 30, "10 records")
        c.commit()
        assert c.committed(TopicPartition(TOPIC, 0)) == 5
        stats = c.group_statistics()
        assert stats is not None and stats["state"] == "stable" and stats["generation_id"] >= 0
        other_sink: list[Any] = []
        other = Member("other", broker.bootstrap, "gc", [TOPIC], other_sink)
        other.start()
        wait_until(lambda: len(other.assignment) == 1 or len(other.assignment) == 2, 30, "other assigned")
        c.unsubscribe()  # leaves: the other member takes both partitions at once
        assert c.assignment() == set() and c.subscription() is None
        wait_until(lambda: other.assignment == tps(TOPIC, 2), 30, "all partitions moved to the other member")
        produce(broker.bootstrap, TOPIC, 10, 14, 2)
        wait_until(lambda: len(other_sink) >= 4, 30, "the new records consumed by the other member")
        assert sorted(v for *_, v, _ in other_sink) == [value(i) for i in range(10, 14)]
        other.stop()
        c.assign([TopicPartition(TOPIC, 1)])  # allowed again after unsubscribe
    finally:
        c.close()


def test_commit_while_rebalancing_is_refused(broker: BrokerProcess) -> None:
    """Between JoinGroup and SyncGroup the partitions may move: a commit then is refused.

    A member whose revoke listener blocks (it runs in that member's poll()) holds the
    rebalance open, so the consumer under test waits in JoinGroup meanwhile.
    """
    create_topic(broker.bootstrap, TOPIC, 3)
    in_revoke, release = threading.Event(), threading.Event()

    class Blocking(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
            in_revoke.set()
            release.wait(60)

    c = Consumer(broker.bootstrap, group_id="gx", auto_offset_reset="earliest", **FAST_GROUP)
    slow = Member("slow", broker.bootstrap, "gx", [TOPIC], [], listener=Blocking())
    third = Member("third", broker.bootstrap, "gx", [TOPIC], [])
    try:
        c.subscribe([TOPIC])
        slow.start()
        wait_until(split_among([c_view(c), slow], tps(TOPIC, 3)), 30, "two members with partitions")
        third.start()
        wait_until(in_revoke.is_set, 30, "the slow member's revoke callback running")
        wait_until(
            lambda: (c.group_statistics() or {}).get("state") == "rebalancing",
            30,
            "the consumer waiting in JoinGroup",
        )
        with pytest.raises(RebalanceInProgressError):
            c.commit({TopicPartition(TOPIC, 0): 0})
        release.set()
        wait_until(split_among([c_view(c), slow, third], tps(TOPIC, 3)), 30, "one partition each")
    finally:
        release.set()
        slow.stop()
        third.stop()
        c.close()


class c_view:  # noqa: N801 - a tiny adapter: a consumer seen like a Member
    def __init__(self, c: Consumer) -> None:
        self.c = c

    @property
    def assignment(self) -> set[TopicPartition]:
        self.c.poll(0.05)
        return self.c.assignment()


def test_subscribe_needs_a_group_and_a_valid_strategy(broker: BrokerProcess) -> None:
    with Consumer(broker.bootstrap) as c, pytest.raises(IllegalStateError, match="group_id"):
        c.subscribe([TOPIC])
    with pytest.raises(ValueError, match="sticky"):
        Consumer(broker.bootstrap, group_id="g", partition_assignment_strategy=["sticky"])
    with pytest.raises(ValueError, match="heartbeat_interval_ms"):
        Consumer(broker.bootstrap, group_id="g", heartbeat_interval_ms=50_000)
    with Consumer(broker.bootstrap, group_id="g") as c:
        c.assign([TopicPartition(TOPIC, 0)])
        with pytest.raises(IllegalStateError, match="unsubscribe"):
            c.subscribe([TOPIC])


def test_a_member_that_stops_polling_leaves_and_rejoins_at_its_next_poll(broker: BrokerProcess) -> None:
    """As Java's client: no poll() for max_poll_interval_ms means LeaveGroup (the partitions
    move to the others); the next poll() rejoins."""
    create_topic(broker.bootstrap, TOPIC, 2)
    other = Member("other", broker.bootstrap, "gp", [TOPIC], [])
    c = Consumer(broker.bootstrap, group_id="gp", max_poll_interval_ms=1500, **FAST_GROUP)
    try:
        c.subscribe([TOPIC])
        other.start()
        wait_until(split_among([c_view(c), other], tps(TOPIC, 2)), 30, "one partition each")
        wait_until(lambda: other.assignment == tps(TOPIC, 2), 30, "the idle member gone, its partition moved")
        assert c.assignment() == set()
        wait_until(split_among([c_view(c), other], tps(TOPIC, 2)), 30, "back after polling again")
    finally:
        other.stop()
        c.close()
