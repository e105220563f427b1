"""hmb_client.admin.Admin against the real broker process.

Creation goes through Metadata auto-creation (Kafka 0.8 has no CreateTopics),
so the checks are: what gets created and with how many partitions, that the
offsets ListOffsets reports match what was produced, that describing or
listing never creates a topic, and that internal topics stay hidden unless
asked for.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from broker_process import BrokerProcess, free_port

from hmb_client.admin import (
    Admin,
    PartitionCountMismatchError,
    PartitionDescription,
    TopicAlreadyExistsError,
    TopicDescription,
    UnknownTopicOrPartitionError,
)
from hmb_client.errors import NoBrokersAvailable
from hmb_client.producer import Producer


# Only an address is needed here: the broker runs in the test process (the tests
# that restart, kill or stop it take ``process_broker``).
@pytest.fixture
def broker(in_process_broker):  # type: ignore[no-untyped-def]
    return in_process_broker


@pytest.fixture
def make_broker(make_in_process_broker):  # type: ignore[no-untyped-def]
    return make_in_process_broker


def test_create_list_describe_with_offsets(make_broker: Any) -> None:
    broker = make_broker("num.partitions=3")
    with Admin(broker.bootstrap) as admin:
        created = admin.create_topic("orders")
        # alone: each partition's one replica (broker 0) leads and is in sync
        expected = [PartitionDescription(p, 0, 0, 0, (0,), (0,), ()) for p in range(3)]
        assert created == TopicDescription("orders", expected)
        with Producer(broker.bootstrap) as producer:
            for partition, count in ((0, 5), (1, 0), (2, 2)):
                for i in range(count):
                    producer.send("orders", b"v%d" % i, partition=partition)
            producer.flush(30)
        described = admin.describe_topic("orders")
        assert [
            (p.partition, p.leader, p.earliest_offset, p.latest_offset, p.messages)
            for p in described.partitions
        ] == [(0, 0, 0, 5, 5), (1, 0, 0, 0, 0), (2, 0, 0, 2, 2)]
        assert described.messages == 7
        listed = admin.list_topics()
        assert set(listed) == {"orders"}
        assert listed["orders"] == described
        assert admin.topic_names() == {"orders"}


def test_create_existing_topic_raises(broker: BrokerProcess) -> None:
    with Admin(broker.bootstrap) as admin:
        admin.create_topic("once")
        with pytest.raises(TopicAlreadyExistsError, match="once"):
            admin.create_topic("once")


def test_partition_count_mismatch_is_a_clear_error(make_broker: Any) -> None:
    broker = make_broker("num.partitions=2")
    with Admin(broker.bootstrap, api_version=(0, 8, 2)) as admin:  # Metadata creation: no CreateTopics
        assert len(admin.create_topic("two", num_partitions=2).partitions) == 2
        with pytest.raises(PartitionCountMismatchError) as info:
            admin.create_topic("five", num_partitions=5)
        message = str(info.value)
        assert "num.partitions" in message and "CreateTopics" in message
        assert (info.value.requested, info.value.actual) == (5, 2)
        # Metadata creation cannot be undone: the topic exists, with the broker's count.
        assert len(admin.describe_topic("five").partitions) == 2
        with pytest.raises(ValueError):
            admin.create_topic("zero", num_partitions=0)


def test_internal_topics_only_when_asked(broker: BrokerProcess) -> None:
    with Admin(broker.bootstrap) as admin:
        admin.create_topic("visible")
        assert set(admin.list_topics()) == {"visible"}
        assert admin.topic_names() == {"visible"}
        everything = admin.list_topics(include_internal=True)
        assert set(everything) == {"visible", "__consumer_offsets"}
        assert admin.topic_names(include_internal=True) == {"visible", "__consumer_offsets"}
        assert admin.describe_topic("__consumer_offsets").partitions[0].leader == 0


def test_describe_unknown_topic_does_not_create_it(broker: BrokerProcess) -> None:
    with Admin(broker.bootstrap) as admin:
        with pytest.raises(UnknownTopicOrPartitionError, match="ghost"):
            admin.describe_topic("ghost")
        assert "ghost" not in admin.topic_names(include_internal=True)
        assert admin.list_topics() == {}


def test_create_without_auto_create_fails_fast(make_broker: Any) -> None:
    broker = make_broker("auto.create.topics.enable=false")
    with Admin(broker.bootstrap, api_version=(0, 8, 2)) as admin:  # Metadata creation: no CreateTopics
        started = time.monotonic()
        with pytest.raises(UnknownTopicOrPartitionError, match=r"auto\.create\.topics\.enable"):
            admin.create_topic("never", timeout_s=30)
        assert time.monotonic() - started < 10  # a refusal, not a wait for the timeout
        assert admin.topic_names() == set()


def test_invalid_topic_name(broker: BrokerProcess) -> None:
    with Admin(broker.bootstrap) as admin, pytest.raises(Exception, match="INVALID_TOPIC"):
        admin.create_topic("no spaces allowed")


def test_unreachable_bootstrap_raises_within_the_timeout() -> None:
    port = free_port()
    started = time.monotonic()
    with Admin(f"127.0.0.1:{port}", request_timeout_ms=500) as admin:
        with pytest.raises(NoBrokersAvailable, match=str(port)):
            admin.topic_names()
    assert time.monotonic() - started < 5


def test_closed_admin_refuses_calls(broker: BrokerProcess) -> None:
    admin = Admin(broker.bootstrap)
    admin.close()
    admin.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        admin.topic_names()
