"""Metadata v0-v13 in process: topics, partitions and this broker, at every version boundary.

v0: an empty topic list means every (non-internal) topic; v1+: null means
every topic (internal ones marked), empty means none, and the controller,
rack and is_internal appear; v2 the cluster id (kept in meta.properties);
v3 throttle_time_ms; v4 the client's allow_auto_topic_creation; v5 offline
replicas; v7 leader epochs (-1); v8 authorized operations (INT32_MIN: not
asked for); v9 flexible; v10 topic ids (and topics asked by id); v11 no
cluster operations; v12 a null name for an unknown id; v13 a top-level
error.  What can fail: "all" vs "none" confused, a field missing, the
cluster id changing across a restart, auto-creation ignoring a flag.
"""

from __future__ import annotations

from typing import Any

import pytest

from kproto import ApiKey, ErrorCode

from .harness import InProcessBroker

METADATA = ApiKey.METADATA


@pytest.fixture
def broker(make_broker: Any) -> InProcessBroker:
    return make_broker("num.partitions=3")


async def md(b: InProcessBroker, version: int, topics: list[str] | None, *, auto: bool = True) -> Any:
    body = {
        "topics": None if topics is None else [{"name": t, "topic_id": bytes(16)} for t in topics],
        "allow_auto_topic_creation": auto,
        "include_cluster_authorized_operations": False,
        "include_topic_authorized_operations": False,
    }
    return await b.request(METADATA, version, body)


def by_id_body(topic_id: bytes) -> dict[str, Any]:
    return {
        "topics": [{"name": None, "topic_id": topic_id}],
        "allow_auto_topic_creation": False,
        "include_cluster_authorized_operations": False,
        "include_topic_authorized_operations": False,
    }


def cluster_id_on_disk(b: InProcessBroker) -> str:
    text = (b.data_dir / "meta.properties").read_text()
    return next(line.split("=", 1)[1] for line in text.splitlines() if line.startswith("cluster.id="))


@pytest.mark.parametrize("version", range(14))
async def test_metadata_fields_per_version(broker: InProcessBroker, version: int) -> None:
    topic = f"md-v{version}"
    resp = await md(broker, version, [topic])
    (t,) = resp.topics
    assert (t.error_code, t.name) == (0, topic)
    assert [p.partition_index for p in t.partitions] == [0, 1, 2]  # num.partitions=3
    for p in t.partitions:
        assert (p.error_code, p.leader_id, list(p.replica_nodes), list(p.isr_nodes)) == (0, 0, [0], [0])
        if version >= 5:
            assert list(p.offline_replicas) == []
        if version >= 7:
            assert p.leader_epoch == 0  # the one epoch of a single broker
    (b,) = resp.brokers
    assert (b.node_id, b.host, b.port) == (0, "127.0.0.1", broker.port)
    if version >= 1:
        assert b.rack is None and resp.controller_id == 0 and t.is_internal is False
    if version >= 2:
        assert resp.cluster_id == cluster_id_on_disk(broker) and len(resp.cluster_id) == 22
    if version >= 3:
        assert resp.throttle_time_ms == 0
    if version >= 8:
        assert t.topic_authorized_operations == -(2**31)  # not asked for
        if version <= 10:
            assert resp.cluster_authorized_operations == -(2**31)
        asked = {
            "topics": [{"name": t.name, "topic_id": bytes(16)}],
            "allow_auto_topic_creation": False,
            "include_cluster_authorized_operations": True,
            "include_topic_authorized_operations": True,
        }
        answer = await broker.request(METADATA, version, asked)
        # KIP-430 with no authoriser: every operation a topic and the cluster support
        assert answer.topics[0].topic_authorized_operations == sum(
            1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11)
        )
        if version <= 10:
            assert answer.cluster_authorized_operations == sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))
    if version >= 10:
        topic_id = broker.broker.logs.topic_ids[topic]
        assert t.topic_id == topic_id and topic_id != bytes(16)
        by_id = await broker.request(METADATA, version, by_id_body(topic_id))
        assert (by_id.topics[0].name, by_id.topics[0].error_code) == (topic, 0)
        stranger = bytes(range(16))
        missing = (await broker.request(METADATA, version, by_id_body(stranger))).topics[0]
        assert (missing.error_code, missing.topic_id) == (ErrorCode.UNKNOWN_TOPIC_ID, stranger)
    if version >= 13:
        assert resp.error_code == 0


async def test_topic_ids_survive_restarts_and_change_with_the_topic(make_broker: Any) -> None:
    b = make_broker()
    await md(b, 12, ["kept"])
    first = b.broker.logs.topic_ids["kept"]
    assert "topic_id: " in (b.data_dir / "kept-0" / "partition.metadata").read_text()
    b.restart()
    assert b.broker.logs.topic_ids["kept"] == first
    await b.broker.logs.delete_topic("kept")
    await md(b, 12, ["kept"])  # made again: another topic, another id
    assert b.broker.logs.topic_ids["kept"] != first
    assert first not in b.broker.logs.topics_by_id


async def test_all_topics_vs_no_topics(broker: InProcessBroker) -> None:
    await md(broker, 1, ["md-listed"])
    v0_all = {t.name for t in (await md(broker, 0, [])).topics}
    assert "md-listed" in v0_all and "__consumer_offsets" not in v0_all
    for version in range(1, 9):
        everything = {t.name: t for t in (await md(broker, version, None)).topics}
        assert "md-listed" in everything
        assert everything["__consumer_offsets"].is_internal is True
        assert everything["md-listed"].is_internal is False
        assert list((await md(broker, version, [])).topics) == []  # an empty list means no topics from v1


async def test_auto_creation_flags(broker: InProcessBroker) -> None:
    refused = (await md(broker, 4, ["md-no-auto"], auto=False)).topics[0]
    assert refused.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION and list(refused.partitions) == []
    assert "md-no-auto" not in {t.name for t in (await md(broker, 1, None)).topics}
    assert (await md(broker, 8, ["md-no-auto"], auto=True)).topics[0].error_code == 0
    assert (await md(broker, 3, ["md-v3-auto"], auto=False)).topics[0].error_code == 0  # v1-v3: the broker's
    bad = (await md(broker, 4, ["bad/name"])).topics[0]
    assert bad.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION


async def test_broker_setting_disables_auto_creation(make_broker: Any) -> None:
    b = make_broker("auto.create.topics.enable=false")
    for version in (0, 3, 4, 8):
        assert (await md(b, version, ["md-off"])).topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


async def test_a_topic_being_deleted_is_not_recreated(broker: InProcessBroker) -> None:
    """While a topic is deleted (or created) by another request, clients are told to retry."""
    broker.broker.logs.deleting.add("md-deleting")
    t = (await md(broker, 4, ["md-deleting"])).topics[0]
    assert (t.error_code, list(t.partitions)) == (ErrorCode.LEADER_NOT_AVAILABLE, [])
    assert not list(broker.data_dir.glob("md-deleting-*"))


async def test_cluster_id_stable_across_clean_restarts(make_broker: Any) -> None:
    b = make_broker()
    first = (await md(b, 2, None)).cluster_id
    b.restart()
    assert (await md(b, 8, None)).cluster_id == first
    other = make_broker()
    assert (await md(other, 2, None)).cluster_id != first


async def test_advertised_listener(make_broker: Any) -> None:
    b = make_broker("advertised.listeners=PLAINTEXT://kafka.example:19092")
    (node,) = (await md(b, 1, None)).brokers
    assert (node.host, node.port) == ("kafka.example", 19092)
