"""Admin consumer groups, offsets and logs against the real broker: list and
describe groups, their committed offsets (list, alter, delete), deleting
groups, ListOffsets by time and special times, DeleteRecords, DescribeCluster
and DescribeLogDirs.  Calls hmb does not serve yet are skipped by
``needs_hmb`` and also run against Tansu where Tansu serves them.
"""

from __future__ import annotations

from typing import Any

import pytest
from admin_support import consume_and_commit, needs_hmb, produce_n
from test_modern_wire import negotiated

from hmb_client.admin import Admin
from hmb_client.admin_types import OffsetSpec
from hmb_client.errors import (
    GroupIdNotFoundError,
    KafkaConnectionError,
    NonEmptyGroupError,
    OffsetOutOfRangeError,
    UnsupportedVersionError,
)
from hmb_client.structs import OffsetAndMetadata, TopicPartition
from kproto import ApiKey

TP0 = TopicPartition("events", 0)


def test_list_and_describe_an_active_group(in_process_broker: Any) -> None:
    bs = in_process_broker.bootstrap
    produce_n(bs, "events", 10)
    consumer = consume_and_commit(bs, "events", "readers", 4)
    try:
        with Admin(bs) as admin:
            listed = admin.list_consumer_groups()
            assert [(g.group_id, g.protocol_type, g.state) for g in listed] == [
                ("readers", "consumer", "Stable")
            ]
            assert admin.list_consumer_groups(states=["empty"]) == []
            assert [g.group_id for g in admin.list_consumer_groups(states=["STABLE"])] == ["readers"]
            desc = admin.describe_consumer_groups(["readers"])["readers"]
            assert (desc.state, desc.protocol_type) == ("Stable", "consumer")
            assert desc.protocol in ("range", "roundrobin", "cooperative-sticky", "sticky")
            (member,) = desc.members
            assert member.client_id == "readers-client"
            assert member.assignment == (TP0,)  # decoded from the consumer protocol
            assert member.topics == ("events",)
            assert admin.list_consumer_group_offsets("readers") == {TP0: OffsetAndMetadata(4, "")}
            assert admin.list_consumer_group_offsets("readers", [TP0]) == {TP0: OffsetAndMetadata(4, "")}
            unknown = admin.describe_consumer_groups(["nobody"])["nobody"]
            assert (unknown.state, unknown.members) == ("Dead", ())
    finally:
        consumer.close(autocommit=False)


def test_alter_group_offsets_of_an_inactive_group(in_process_broker: Any) -> None:
    bs = in_process_broker.bootstrap
    produce_n(bs, "events", 10)
    with Admin(bs) as admin:
        admin.alter_consumer_group_offsets("offline", {TP0: 7})
        assert admin.list_consumer_group_offsets("offline") == {TP0: OffsetAndMetadata(7, "")}
        admin.alter_consumer_group_offsets("offline", {TP0: OffsetAndMetadata(2, "by hand")})
        assert admin.list_consumer_group_offsets("offline") == {TP0: OffsetAndMetadata(2, "by hand")}
        assert [(g.group_id, g.state) for g in admin.list_consumer_groups()] == [("offline", "Empty")]


def test_list_offsets_earliest_latest_and_by_time(in_process_broker: Any) -> None:
    bs = in_process_broker.bootstrap
    produce_n(bs, "events", 20, first_ts=50_000)
    with Admin(bs) as admin:
        got = admin.list_offsets({TP0: OffsetSpec.EARLIEST})
        assert got[TP0].offset == 0
        assert admin.list_offsets({TP0: OffsetSpec.LATEST})[TP0].offset == 20
        by_time = admin.list_offsets({TP0: 50_007})[TP0]
        assert (by_time.offset, by_time.timestamp) == (7, 50_007)
        assert admin.list_offsets({TP0: 99_999_999})[TP0].offset == -1  # nothing at or after it
        with pytest.raises(ValueError, match="timestamp"):
            admin.list_offsets({TP0: -42})


@needs_hmb(ApiKey.LIST_OFFSETS, 7)
def test_list_offsets_max_timestamp(in_process_broker: Any) -> None:
    bs = in_process_broker.bootstrap
    with Admin(bs) as admin:
        admin.create_topic("events", num_partitions=1)
    from hmb_client.producer import Producer

    with Producer(bs) as p:
        for i, ts in enumerate((1000, 9000, 3000)):
            p.send("events", b"%d" % i, partition=0, timestamp_ms=ts)
        p.flush(30)
    with Admin(bs) as admin:
        assert admin.list_offsets({TP0: OffsetSpec.MAX_TIMESTAMP})[TP0][:2] == (1, 9000)


def test_max_timestamp_on_a_broker_without_it_names_the_version(in_process_broker: Any) -> None:
    if negotiated(in_process_broker.bootstrap)[ApiKey.LIST_OFFSETS][1] >= 7:
        pytest.skip("this broker answers MAX_TIMESTAMP")
    produce_n(in_process_broker.bootstrap, "events", 1)
    with Admin(in_process_broker.bootstrap) as admin, pytest.raises(UnsupportedVersionError, match="v7"):
        admin.list_offsets({TP0: OffsetSpec.MAX_TIMESTAMP})


# ---------------------------------------------------------------- APIs hmb serves later


@needs_hmb(ApiKey.DELETE_GROUPS)
def test_delete_groups(in_process_broker: Any) -> None:
    bs = in_process_broker.bootstrap
    produce_n(bs, "events", 5)
    consumer = consume_and_commit(bs, "events", "busy", 2)
    try:
        with Admin(bs) as admin:
            admin.alter_consumer_group_offsets("idle", {TP0: 3})
            with pytest.raises(NonEmptyGroupError):
                admin.delete_consumer_groups(["busy"])
            admin.delete_consumer_groups(["idle"])
            assert [g.group_id for g in admin.list_consumer_groups()] == ["busy"]
            assert admin.list_consumer_group_offsets("idle") == {}
            with pytest.raises(GroupIdNotFoundError):
                admin.delete_consumer_groups(["idle"])
    finally:
        consumer.close(autocommit=False)


@needs_hmb(ApiKey.OFFSET_DELETE)
def test_delete_group_offsets(in_process_broker: Any) -> None:
    bs = in_process_broker.bootstrap
    produce_n(bs, "events", 5)
    produce_n(bs, "other", 5)
    other = TopicPartition("other", 0)
    with Admin(bs) as admin:
        admin.alter_consumer_group_offsets("g", {TP0: 3, other: 4})
        admin.delete_consumer_group_offsets("g", [TP0])
        assert admin.list_consumer_group_offsets("g") == {other: OffsetAndMetadata(4, "")}


@needs_hmb(ApiKey.DELETE_RECORDS)
def test_delete_records_moves_the_log_start(in_process_broker: Any) -> None:
    bs = in_process_broker.bootstrap
    produce_n(bs, "events", 10)
    with Admin(bs) as admin:
        assert admin.delete_records({TP0: 6}) == {TP0: 6}
        assert admin.list_offsets({TP0: OffsetSpec.EARLIEST})[TP0].offset == 6
        assert admin.describe_topic("events").partitions[0].earliest_offset == 6
        with pytest.raises(OffsetOutOfRangeError):
            admin.delete_records({TP0: 11})  # beyond the high watermark
        assert admin.delete_records({TP0: -1}) == {TP0: 10}  # -1: everything


@needs_hmb(ApiKey.DESCRIBE_PRODUCERS)
def test_describe_producers_names_the_idempotent_producer(in_process_broker: Any) -> None:
    bs = in_process_broker.bootstrap
    from hmb_client.producer import Producer

    with Producer(bs, enable_idempotence=True) as p:
        for i in range(3):
            p.send("events", b"%d" % i, partition=0)
        p.flush(30)
    produce_n(bs, "plain", 2)
    with Admin(bs) as admin:
        found = admin.describe_producers([TP0, TopicPartition("plain", 0)])
    (state,) = found[TP0]
    assert state.producer_id >= 0 and state.last_sequence == 2
    assert state.current_transaction_start_offset == -1
    assert found[TopicPartition("plain", 0)] == []  # a producer without idempotence keeps no state


@needs_hmb(ApiKey.DESCRIBE_CLUSTER)
def test_describe_cluster(in_process_broker: Any) -> None:
    with Admin(in_process_broker.bootstrap) as admin:
        cluster = admin.describe_cluster()
        (node,) = admin.brokers()
        assert [(b.node_id, b.host, b.port) for b in cluster.brokers] == [
            (node.node_id, node.host, node.port)
        ]
        assert cluster.controller_id == node.node_id
        assert cluster.cluster_id


@needs_hmb(ApiKey.DESCRIBE_LOG_DIRS)
def test_describe_log_dirs_sizes_per_partition(in_process_broker: Any) -> None:
    bs = in_process_broker.bootstrap
    produce_n(bs, "events", 50)
    with Admin(bs) as admin:
        (node,) = admin.brokers()
        dirs = admin.describe_log_dirs()[node.node_id]
        assert dirs and all(d.error_code == 0 for d in dirs)
        sizes = {tp: r.size for d in dirs for tp, r in d.partitions.items()}
        assert sizes[TP0] > 50 * len(b"v00")  # the records and their batch headers


# ---------------------------------------------------------------- the same calls against Tansu


def _tansu_serving(tansu: Any, key: ApiKey) -> str:
    if key not in negotiated(tansu.bootstrap):
        pytest.skip(f"this Tansu does not serve {key.name}")
    return str(tansu.bootstrap)


def test_tansu_delete_records(tansu: Any) -> None:
    bs = _tansu_serving(tansu, ApiKey.DELETE_RECORDS)
    produce_n(bs, "events", 10)
    with Admin(bs, request_timeout_ms=10_000) as admin:
        try:
            low = admin.delete_records({TP0: 4})
        except KafkaConnectionError:  # reported at once, not a hang
            pytest.skip("Tansu advertises DeleteRecords but closes the connection on it (librdkafka too)")
        assert low == {TP0: 4}


def test_tansu_delete_groups(tansu: Any) -> None:
    bs = _tansu_serving(tansu, ApiKey.DELETE_GROUPS)
    produce_n(bs, "events", 5)
    with Admin(bs) as admin:
        admin.alter_consumer_group_offsets("idle", {TP0: 3})
        # partitions named: Tansu answers OffsetFetch for "all partitions" (null) with a truncated body
        assert admin.list_consumer_group_offsets("idle", [TP0]) == {TP0: OffsetAndMetadata(3, "")}
        admin.delete_consumer_groups(["idle"])
        assert admin.list_consumer_group_offsets("idle", [TP0]) == {}


def test_tansu_describe_cluster(tansu: Any) -> None:
    bs = _tansu_serving(tansu, ApiKey.DESCRIBE_CLUSTER)
    with Admin(bs) as admin:
        cluster = admin.describe_cluster()
        assert [b.node_id for b in cluster.brokers] == [n.node_id for n in admin.brokers()]


def test_tansu_lists_and_describes_groups(tansu: Any) -> None:
    bs = str(tansu.bootstrap)
    produce_n(bs, "events", 6)
    consumer = consume_and_commit(bs, "events", "treaders", 3)
    try:
        with Admin(bs) as admin:
            assert "treaders" in [g.group_id for g in admin.list_consumer_groups()]
            desc = admin.describe_consumer_groups(["treaders"])["treaders"]
            # Tansu reports the member, but neither its client id nor its assignment bytes
            assert desc.state == "Stable" and len(desc.members) == 1
            assert admin.list_consumer_group_offsets("treaders", [TP0])[TP0].offset == 3
    finally:
        consumer.close(autocommit=False)
