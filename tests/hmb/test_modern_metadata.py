"""Metadata 0-8, FindCoordinator 0-2 and the advertised table, on the wire and through clients.

What can fail: "all topics" vs "no topics" confused between v0 and v1+, a field of a
newer version missing, the cluster id changing across a restart (clients treat that as
a different cluster), auto-creation ignoring the v4 client flag or the broker setting.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from broker_process import BrokerProcess
from wire import WireClient

from kproto import ApiKey, ErrorCode

METADATA, FIND_COORDINATOR = ApiKey.METADATA, ApiKey.FIND_COORDINATOR


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path_factory.mktemp("md") / "data", "num.partitions=3") as b:
        yield b


@pytest.fixture
def wc(shared: BrokerProcess) -> Iterator[WireClient]:
    with WireClient(shared.bootstrap) as c:
        yield c


def md(c: WireClient, version: int, topics: list[str] | None, *, auto: bool = True) -> Any:
    body = {
        "topics": None if topics is None else [{"name": t} for t in topics],
        "allow_auto_topic_creation": auto,
        "include_cluster_authorized_operations": False,
        "include_topic_authorized_operations": False,
    }
    return c.request(METADATA, version, body)


def cluster_id_on_disk(broker: BrokerProcess) -> str:
    text = (broker.data_dir / "meta.properties").read_text()
    return next(line.split("=", 1)[1] for line in text.splitlines() if line.startswith("cluster.id="))


@pytest.mark.parametrize("version", range(9))
def test_metadata_fields_per_version(shared: BrokerProcess, wc: WireClient, version: int) -> None:
    topic = f"md-v{version}"
    resp = md(wc, version, [topic])
    (t,) = resp.topics
    assert (t.error_code, t.name) == (0, topic)
    assert [p.partition_index for p in t.partitions] == [0, 1, 2]  # num.partitions=3
    for p in t.partitions:
        assert (p.error_code, p.leader_id, list(p.replica_nodes), list(p.isr_nodes)) == (0, 0, [0], [0])
        if version >= 5:
            assert list(p.offline_replicas) == []
        if version >= 7:
            assert p.leader_epoch == -1
    (b,) = resp.brokers
    assert (b.node_id, b.host, b.port) == (0, "127.0.0.1", shared.port)
    if version >= 1:
        assert b.rack is None and resp.controller_id == 0 and t.is_internal is False
    if version >= 2:
        assert resp.cluster_id == cluster_id_on_disk(shared) and len(resp.cluster_id) == 22
    if version >= 3:
        assert resp.throttle_time_ms == 0
    if version >= 8:
        assert t.topic_authorized_operations == -(2**31)
        assert resp.cluster_authorized_operations == -(2**31)


def test_all_topics_vs_no_topics(wc: WireClient) -> None:
    md(wc, 1, ["md-listed"])
    v0_all = {t.name for t in md(wc, 0, []).topics}
    assert "md-listed" in v0_all and "__consumer_offsets" not in v0_all
    for version in range(1, 9):
        everything = {t.name: t for t in md(wc, version, None).topics}
        assert "md-listed" in everything
        assert everything["__consumer_offsets"].is_internal is True
        assert everything["md-listed"].is_internal is False
        assert list(md(wc, version, []).topics) == []  # an empty list means no topics from v1


def test_auto_creation_flags(wc: WireClient) -> None:
    refused = md(wc, 4, ["md-no-auto"], auto=False).topics[0]
    assert refused.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION and list(refused.partitions) == []
    assert md(wc, 1, None).topics and "md-no-auto" not in {t.name for t in md(wc, 1, None).topics}
    assert md(wc, 8, ["md-no-auto"], auto=True).topics[0].error_code == 0
    assert md(wc, 3, ["md-v3-auto"]).topics[0].error_code == 0  # v1-v3: the broker setting alone
    bad = md(wc, 4, ["bad/name"]).topics[0]
    assert bad.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION


def test_broker_setting_disables_auto_creation(make_broker: Any) -> None:
    b = make_broker("auto.create.topics.enable=false")
    with WireClient(b.bootstrap) as c:
        for version in (0, 3, 4, 8):
            assert md(c, version, ["md-off"]).topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_cluster_id_stable_across_restarts(make_broker: Any, tmp_path: Any) -> None:
    b = make_broker(data_dir=tmp_path / "cid")
    with WireClient(b.bootstrap) as c:
        first = md(c, 2, None).cluster_id
    b.stop()
    b.restart()
    with WireClient(b.bootstrap) as c:
        assert md(c, 8, None).cluster_id == first
    b.kill()
    b.restart()
    with WireClient(b.bootstrap) as c:
        assert md(c, 5, None).cluster_id == first
    other = make_broker(data_dir=tmp_path / "other")
    with WireClient(other.bootstrap) as c:
        assert md(c, 2, None).cluster_id != first


def test_find_coordinator_versions(shared: BrokerProcess, wc: WireClient) -> None:
    v0 = wc.request(FIND_COORDINATOR, 0, {"key": "g"})
    assert (v0.error_code, v0.node_id, v0.host, v0.port) == (0, 0, "127.0.0.1", shared.port)
    for version in (1, 2):
        group = wc.request(FIND_COORDINATOR, version, {"key": "g", "key_type": 0})
        assert (group.error_code, group.error_message, group.node_id, group.port) == (0, None, 0, shared.port)
        assert group.throttle_time_ms == 0
        txn = wc.request(FIND_COORDINATOR, version, {"key": "tx", "key_type": 1})
        assert txn.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE and txn.error_message


def test_advertised_table(wc: WireClient) -> None:
    resp = wc.request(ApiKey.API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
    table = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    expected = {
        ApiKey.PRODUCE: (0, 8),
        ApiKey.FETCH: (0, 11),
        ApiKey.LIST_OFFSETS: (0, 5),
        ApiKey.METADATA: (0, 8),
        ApiKey.FIND_COORDINATOR: (0, 2),
        ApiKey.INIT_PRODUCER_ID: (0, 1),
        ApiKey.CREATE_TOPICS: (0, 4),
        ApiKey.DELETE_TOPICS: (0, 3),
    }
    assert {k: table.get(k) for k in expected} == expected


def test_clients_see_cluster_and_topics(shared: BrokerProcess, wc: WireClient) -> None:
    ck_admin = pytest.importorskip("confluent_kafka.admin")
    kafka_admin = pytest.importorskip("kafka.admin")
    md(wc, 1, ["md-clients"])
    meta = ck_admin.AdminClient({"bootstrap.servers": shared.bootstrap, "log_level": 3}).list_topics(
        timeout=10
    )
    assert meta.cluster_id == cluster_id_on_disk(shared) and meta.controller_id == 0
    assert len(meta.topics["md-clients"].partitions) == 3
    admin = kafka_admin.KafkaAdminClient(bootstrap_servers=shared.bootstrap)
    try:
        assert admin.describe_cluster()["cluster_id"] == meta.cluster_id
        assert "md-clients" in admin.list_topics()
    finally:
        admin.close()
