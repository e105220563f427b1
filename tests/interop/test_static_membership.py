"""Static membership (KIP-345) with librdkafka: a restarted consumer gets its partitions back.

Two confluent-kafka consumers with ``group.instance.id`` share a topic.  One
is closed (a static member sends no LeaveGroup: the broker keeps its place
for the session timeout) and a new consumer with the same instance id
starts: it must be handed the same partitions, and the other member must
not go through a rebalance (no revoke, no second assignment).  Waits are
bounded loops of ``poll``, as an application's own loop would be.
"""

from __future__ import annotations

import time

import pytest
from broker_process import BrokerProcess

pytestmark = pytest.mark.interop

ck = pytest.importorskip("confluent_kafka")
ck_admin = pytest.importorskip("confluent_kafka.admin")

TOPIC = "static"
GROUP = "static-group"


class StaticConsumer:
    def __init__(self, bootstrap: str, instance: str) -> None:
        self.assigned: list[set[int]] = []
        self.revoked: list[set[int]] = []
        self.consumer = ck.Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": GROUP,
                "group.instance.id": instance,
                "session.timeout.ms": 30_000,
                "log_level": 3,
            }
        )
        self.consumer.subscribe(
            [TOPIC],
            on_assign=lambda _c, parts: self.assigned.append({p.partition for p in parts}),
            on_revoke=lambda _c, parts: self.revoked.append({p.partition for p in parts}),
        )

    @property
    def partitions(self) -> set[int]:
        return {p.partition for p in self.consumer.assignment()}


def poll_until(consumers: list[StaticConsumer], condition, what: str, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        for c in consumers:
            c.consumer.poll(0.05)


def test_a_restarted_static_consumer_gets_its_partitions_back_without_a_rebalance(
    broker: BrokerProcess,
) -> None:
    admin = ck_admin.AdminClient({"bootstrap.servers": broker.bootstrap, "log_level": 3})
    admin.create_topics([ck_admin.NewTopic(TOPIC, 4, 1)])[TOPIC].result(30)
    a, b = StaticConsumer(broker.bootstrap, "instance-a"), StaticConsumer(broker.bootstrap, "instance-b")
    poll_until(
        [a, b],
        lambda: len(a.partitions) == 2 and len(b.partitions) == 2 and not a.partitions & b.partitions,
        "both members own two partitions",
    )
    a_had, b_assignments, b_revocations = a.partitions, len(b.assigned), len(b.revoked)
    a.consumer.close()  # static: no LeaveGroup, the broker keeps the membership

    again = StaticConsumer(broker.bootstrap, "instance-a")
    poll_until([again, b], lambda: bool(again.partitions), "the restarted instance has partitions")
    assert again.partitions == a_had
    for _ in range(20):  # b keeps polling: a rebalance would show up as a revoke or a new assignment
        b.consumer.poll(0.05)
    assert (len(b.assigned), len(b.revoked)) == (b_assignments, b_revocations)
    assert b.partitions == {0, 1, 2, 3} - a_had
    again.consumer.close()
    b.consumer.close()
