"""Admin through CreateTopics/DeleteTopics, and ListOffsets by time, on Tansu and hmb.

Tansu's ListOffsets answers "latest" with the last batch's base offset and
ignores timestamps (kafka-python sees the same), so offsets are checked
against hmb only.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from test_modern_wire import negotiated

from hmb_client.admin import Admin, TopicAlreadyExistsError, UnknownTopicOrPartitionError
from hmb_client.consumer import Consumer
from hmb_client.producer import Producer
from hmb_client.structs import OffsetAndTimestamp, TopicPartition
from kproto import ApiKey


@pytest.fixture(params=["tansu", "broker"])
def server(request: pytest.FixtureRequest) -> Any:
    s = request.getfixturevalue(request.param)
    if ApiKey.CREATE_TOPICS not in negotiated(s.bootstrap):
        pytest.skip("this broker has no CreateTopics yet")
    return s


def test_create_with_a_partition_count_then_delete(server: Any) -> None:
    with Admin(server.bootstrap) as admin:
        created = admin.create_topic("seven", num_partitions=7)
        assert [p.partition for p in created.partitions] == list(range(7))
        with pytest.raises(TopicAlreadyExistsError):
            admin.create_topic("seven", num_partitions=7)
        default = admin.create_topic("broker-default")  # v4+: the broker's partition count
        assert default.partitions
        assert {"seven", "broker-default"} <= admin.topic_names()
        assert admin.describe_topic("seven").name == "seven"
        admin.delete_topic("seven")
        deadline = time.monotonic() + 10
        while "seven" in admin.topic_names() and time.monotonic() < deadline:
            time.sleep(0.1)  # deletion may complete asynchronously
        assert "seven" not in admin.topic_names()
        with pytest.raises(UnknownTopicOrPartitionError):
            admin.describe_topic("never-created")
        assert "never-created" not in admin.topic_names()  # describing did not create it


def test_describe_offsets_and_offsets_for_times(broker: Any) -> None:
    with Producer(broker.bootstrap) as p:
        for i in range(30):
            p.send("times", b"v%d" % i, partition=0, timestamp_ms=10_000 + 100 * i)
        p.flush(30)
    with Admin(broker.bootstrap) as admin:
        part = admin.describe_topic("times").partitions[0]
        assert (part.earliest_offset, part.latest_offset) == (0, 30)
    tp = TopicPartition("times", 0)
    with Consumer(broker.bootstrap) as c:
        if negotiated(broker.bootstrap)[ApiKey.LIST_OFFSETS][1] < 1:
            pytest.skip("ListOffsets v0 only")
        assert c.offsets_for_times({tp: 10_950}) == {tp: OffsetAndTimestamp(10, 11_000)}
        assert c.offsets_for_times({tp: 0}) == {tp: OffsetAndTimestamp(0, 10_000)}
        assert c.offsets_for_times({tp: 99_999}) == {tp: None}
        assert c.end_offsets([tp]) == {tp: 30}
