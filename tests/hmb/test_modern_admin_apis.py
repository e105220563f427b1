"""CreateTopics 0-4 and DeleteTopics 0-3 on the wire and through both admin clients.

What can fail: Kafka's per-topic error codes (a client maps them to exceptions),
``validate_only`` creating anyway, the v4 "-1 = broker default" rule, partition logs
left on disk (or coming back after a restart) when a topic is deleted, a fetch waiting
on a deleted partition until its timeout.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from broker_process import BrokerProcess
from wire import WireClient

from kproto import ApiKey, ErrorCode
from kproto.records import RecordBatchBuilder, read_records

CREATE, DELETE = ApiKey.CREATE_TOPICS, ApiKey.DELETE_TOPICS


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path_factory.mktemp("admin") / "data", "num.partitions=2") as b:
        yield b


@pytest.fixture
def wc(shared: BrokerProcess) -> Iterator[WireClient]:
    with WireClient(shared.bootstrap) as c:
        yield c


def spec(
    name: str, partitions: int = 1, rf: int = 1, assignments: list[list[int]] | None = None
) -> dict[str, Any]:
    return {
        "name": name,
        "num_partitions": partitions,
        "replication_factor": rf,
        "assignments": [{"partition_index": i, "broker_ids": b} for i, b in enumerate(assignments or [])],
        "configs": [],
    }


def create(
    c: WireClient, version: int, *topics: dict[str, Any], validate_only: bool = False
) -> dict[str, Any]:
    body = {"topics": list(topics), "timeout_ms": 5000, "validate_only": validate_only}
    resp = c.request(CREATE, version, body)
    if version >= 2:
        assert resp.throttle_time_ms == 0
    return {t.name: t for t in resp.topics}


def delete(c: WireClient, version: int, *names: str) -> dict[str, int]:
    resp = c.request(DELETE, version, {"topic_names": list(names), "timeout_ms": 5000})
    if version >= 1:
        assert resp.throttle_time_ms == 0
    return {r.name: r.error_code for r in resp.responses}


def partitions_of(c: WireClient, topic: str) -> int | None:
    body = {"topics": [{"name": topic}], "allow_auto_topic_creation": False}
    t = c.request(ApiKey.METADATA, 4, body).topics[0]
    return None if t.error_code else len(t.partitions)


def produce(c: WireClient, topic: str, value: bytes, partition: int = 0) -> Any:
    b = RecordBatchBuilder()
    b.append(None, value)
    body = {
        "transactional_id": None,
        "acks": 1,
        "timeout_ms": 1000,
        "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": b.build()}]}],
    }
    return c.request(ApiKey.PRODUCE, 8, body).responses[0].partition_responses[0]


@pytest.mark.parametrize("version", range(5))
def test_create_topics_per_version(shared: BrokerProcess, wc: WireClient, version: int) -> None:
    ok, dup = f"ct{version}-ok", f"ct{version}-exists"
    create(wc, version, spec(dup))
    got = create(
        wc,
        version,
        spec(ok, 4),
        spec(dup),
        spec("bad name!"),
        spec(f"ct{version}-zero", 0),
        spec(f"ct{version}-rf3", 1, 3),
        spec(f"ct{version}-rf0", 1, 0),
    )
    codes = {name: t.error_code for name, t in got.items()}
    assert codes == {
        ok: ErrorCode.NONE,
        dup: ErrorCode.TOPIC_ALREADY_EXISTS,
        "bad name!": ErrorCode.INVALID_TOPIC_EXCEPTION,
        f"ct{version}-zero": ErrorCode.INVALID_PARTITIONS,
        f"ct{version}-rf3": ErrorCode.INVALID_REPLICATION_FACTOR,
        f"ct{version}-rf0": ErrorCode.INVALID_REPLICATION_FACTOR,
    }
    if version >= 1:
        assert got[ok].error_message is None
        assert "already exists" in got[dup].error_message
    assert partitions_of(wc, ok) == 4
    assert sorted(p.name for p in shared.data_dir.iterdir() if p.name.startswith(ok)) == [
        f"{ok}-{p}" for p in range(4)
    ]
    for refused in ("zero", "rf3", "rf0"):
        assert partitions_of(wc, f"ct{version}-{refused}") is None
    # -1/-1 means "the broker's defaults" from v4; before, it is simply invalid
    default = create(wc, version, spec(f"ct{version}-default", -1, -1))[f"ct{version}-default"]
    if version >= 4:
        assert default.error_code == 0 and partitions_of(wc, f"ct{version}-default") == 2
    else:
        assert default.error_code == ErrorCode.INVALID_PARTITIONS


def test_create_topics_validate_only_duplicates_and_assignments(wc: WireClient) -> None:
    got = create(wc, 1, spec("ct-validate", 3), validate_only=True)
    assert got["ct-validate"].error_code == 0 and partitions_of(wc, "ct-validate") is None
    assert create(wc, 1, spec("ct-exists-v", 1))["ct-exists-v"].error_code == 0
    again = create(wc, 1, spec("ct-exists-v"), validate_only=True)["ct-exists-v"]
    assert again.error_code == ErrorCode.TOPIC_ALREADY_EXISTS
    resp = wc.request(
        CREATE,
        3,
        {"topics": [spec("ct-twice"), spec("ct-twice", 2)], "timeout_ms": 1000, "validate_only": False},
    )
    assert [t.error_code for t in resp.topics] == [ErrorCode.INVALID_REQUEST] * 2
    assert partitions_of(wc, "ct-twice") is None
    assigned = create(wc, 4, spec("ct-assigned", -1, -1, [[0], [0], [0]]))["ct-assigned"]
    assert assigned.error_code == 0 and partitions_of(wc, "ct-assigned") == 3
    elsewhere = create(wc, 4, spec("ct-elsewhere", -1, -1, [[0], [7]]))["ct-elsewhere"]
    assert elsewhere.error_code == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    both = create(wc, 4, spec("ct-both", 2, 1, [[0]]))["ct-both"]
    assert both.error_code == ErrorCode.INVALID_REQUEST


@pytest.mark.parametrize("version", range(4))
def test_delete_topics_per_version(shared: BrokerProcess, wc: WireClient, version: int) -> None:
    topic = f"dt{version}"
    assert create(wc, 0, spec(topic, 2))[topic].error_code == 0
    assert produce(wc, topic, b"before").base_offset == 0
    assert delete(wc, version, topic, f"{topic}-unknown", "__consumer_offsets") == {
        topic: ErrorCode.NONE,
        f"{topic}-unknown": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        "__consumer_offsets": ErrorCode.INVALID_TOPIC_EXCEPTION,
    }
    assert partitions_of(wc, topic) is None
    assert not [p for p in shared.data_dir.iterdir() if p.name.startswith(f"{topic}-")]
    assert produce(wc, topic, b"gone").error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    # the name is free again: a new, empty topic
    assert create(wc, 0, spec(topic, 1))[topic].error_code == 0
    p = produce(wc, topic, b"after")
    assert (p.error_code, p.base_offset) == (0, 0)


def test_deleted_topic_stays_deleted_after_restart(make_broker: Any, tmp_path: Path) -> None:
    data = tmp_path / "del-restart"
    b = make_broker(data_dir=data)
    with WireClient(b.bootstrap) as c:
        create(c, 4, spec("dr-keep", 1), spec("dr-drop", 3))
        produce(c, "dr-keep", b"kept")
        assert delete(c, 3, "dr-drop") == {"dr-drop": 0}
    # a deletion interrupted between rename and removal is finished at the next start
    leftover = data / "dr-crash-0.0123456789abcdef-delete"
    leftover.mkdir()
    (leftover / "00000000000000000000.log").write_bytes(b"junk")
    b.kill()
    b.restart()
    with WireClient(b.bootstrap) as c:
        assert partitions_of(c, "dr-drop") is None
        assert partitions_of(c, "dr-keep") == 1
    assert not leftover.exists()
    assert sorted(p.name for p in data.iterdir() if p.is_dir()) == ["__consumer_offsets-0", "dr-keep-0"]


def test_delete_wakes_a_waiting_fetch(shared: BrokerProcess, wc: WireClient) -> None:
    create(wc, 4, spec("dt-wait", 1))
    result: dict[str, Any] = {}

    def poll() -> None:
        body = {
            "replica_id": -1, "max_wait_ms": 30000, "min_bytes": 1, "max_bytes": 1 << 20,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": "dt-wait", "partitions": [
                {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "log_start_offset": -1,
                 "partition_max_bytes": 1 << 20}]}],
            "forgotten_topics_data": [], "rack_id": "",
        }  # fmt: skip
        with WireClient(shared.bootstrap, timeout=40) as c:
            started = time.monotonic()
            result["p"] = c.request(ApiKey.FETCH, 11, body).responses[0].partitions[0]
            result["elapsed"] = time.monotonic() - started

    t = threading.Thread(target=poll)
    t.start()
    assert delete(wc, 3, "dt-wait") == {"dt-wait": 0}  # before or during the wait
    t.join(20)
    assert not t.is_alive() and result["elapsed"] < 15
    assert result["p"].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


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
