"""Both admin clients (confluent-kafka, kafka-python) against hmb: topics created, listed, deleted.

The per-version codes behind these calls are tested in process
(``tests/api/test_create_topics.py``, ``test_delete_topics.py``,
``test_metadata.py``); here the clients must map them to their own
exceptions and see the cluster as Kafka's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from broker_process import BrokerProcess
from wire import WireClient, partitions_of
from wire import metadata as md
from wire import produce_value as produce

from kproto import ApiKey
from kproto.records import read_records

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path_factory.mktemp("admin") / "data", "num.partitions=2") as b:
        yield b


@pytest.fixture
def wc(shared: BrokerProcess) -> Iterator[WireClient]:
    with WireClient(shared.bootstrap) as c:
        yield c


def cluster_id_on_disk(broker: BrokerProcess) -> str:
    text = (broker.data_dir / "meta.properties").read_text()
    return next(line.split("=", 1)[1] for line in text.splitlines() if line.startswith("cluster.id="))


def test_confluent_admin_client(shared: BrokerProcess, wc: WireClient) -> None:
    ck = pytest.importorskip("confluent_kafka")
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": shared.bootstrap, "log_level": 3})
    futures = admin.create_topics([NewTopic("ck-admin-a", 3, 1), NewTopic("ck-admin-b", num_partitions=-1)])
    for f in futures.values():
        assert f.result(15) is None
    assert partitions_of(wc, "ck-admin-a") == 3 and partitions_of(wc, "ck-admin-b") == 2
    again = admin.create_topics([NewTopic("ck-admin-a", 1, 1)])["ck-admin-a"]
    with pytest.raises(ck.KafkaException) as exc:
        again.result(15)
    assert exc.value.args[0].code() == ck.KafkaError.TOPIC_ALREADY_EXISTS
    rf = admin.create_topics([NewTopic("ck-admin-rf", 1, 3)])["ck-admin-rf"]
    with pytest.raises(ck.KafkaException) as exc:
        rf.result(15)
    assert exc.value.args[0].code() == ck.KafkaError.INVALID_REPLICATION_FACTOR
    validated = admin.create_topics([NewTopic("ck-admin-v", 2, 1)], validate_only=True)["ck-admin-v"]
    assert validated.result(15) is None and partitions_of(wc, "ck-admin-v") is None
    for f in admin.delete_topics(["ck-admin-a", "ck-admin-b"], operation_timeout=10).values():
        assert f.result(15) is None
    assert partitions_of(wc, "ck-admin-a") is None and partitions_of(wc, "ck-admin-b") is None
    missing = admin.delete_topics(["ck-admin-missing"])["ck-admin-missing"]
    with pytest.raises(ck.KafkaException) as exc:
        missing.result(15)
    assert exc.value.args[0].code() == ck.KafkaError.UNKNOWN_TOPIC_OR_PART


def test_kafka_python_admin_client(shared: BrokerProcess, wc: WireClient) -> None:
    pytest.importorskip("kafka")
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import TopicAlreadyExistsError, UnknownTopicOrPartitionError

    admin = KafkaAdminClient(bootstrap_servers=shared.bootstrap)
    try:
        admin.create_topics([NewTopic("kp-admin", 2, 1)])
        assert partitions_of(wc, "kp-admin") == 2
        with pytest.raises(TopicAlreadyExistsError):
            admin.create_topics([NewTopic("kp-admin", 2, 1)])
        produce(wc, "kp-admin", b"x", partition=1)
        admin.delete_topics(["kp-admin"])
        assert partitions_of(wc, "kp-admin") is None
        with pytest.raises(UnknownTopicOrPartitionError):
            admin.delete_topics(["kp-admin"])
        admin.create_topics([NewTopic("kp-admin", 1, 1)])  # recreated: empty
        assert produce(wc, "kp-admin", b"again").base_offset == 0
        partition = {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}
        body = {
            "replica_id": -1,
            "max_wait_ms": 0,
            "min_bytes": 0,
            "max_bytes": 1 << 20,
            "isolation_level": 0,
            "topics": [{"topic": "kp-admin", "partitions": [partition]}],
        }
        fetched = wc.request(ApiKey.FETCH, 4, body).responses[0].partitions[0]
        assert [r.value for r in read_records(fetched.records)] == [b"again"]
    finally:
        admin.close()


def test_clients_see_cluster_and_topics(make_broker: Callable[..., BrokerProcess]) -> None:
    ck_admin = pytest.importorskip("confluent_kafka.admin")
    kafka_admin = pytest.importorskip("kafka.admin")
    shared = make_broker("num.partitions=3")
    with WireClient(shared.bootstrap) as wc:
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
