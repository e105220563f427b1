"""Injected faults drive real clients' retry paths; the request log shows what they sent."""

from __future__ import annotations

import json
import time

import pytest
from wire import WireClient, metadata_body

import kproto
from hmb.embedded import EmbeddedBroker
from kproto import ApiKey, ErrorCode

pytestmark = pytest.mark.interop


def _produce_requests(broker: EmbeddedBroker) -> int:
    return sum(1 for r in broker.requests() if r["api_key"] == ApiKey.PRODUCE)


def test_librdkafka_retries_not_leader_and_delivers_exactly_once(
    hmb_fresh_broker: EmbeddedBroker,
) -> None:
    from confluent_kafka import Producer

    broker = hmb_fresh_broker
    topic = broker.create_topic("retry-rd")
    broker.inject("PRODUCE", count=3, error="NOT_LEADER_OR_FOLLOWER", topic=topic)
    producer = Producer(
        {"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True, "linger.ms": 0}
    )
    errors: list[object] = []
    for i in range(5):
        producer.produce(topic, value=b"v%d" % i, on_delivery=lambda err, _m: errors.append(err))
    assert producer.flush(30) == 0
    assert errors == [None] * 5
    assert [r["value"] for r in broker.records(topic)] == [b"v%d" % i for i in range(5)]
    assert _produce_requests(broker) >= 4  # three refused, then accepted
    assert len(broker.producers(topic)) == 1


def test_kafka_python_retries_not_leader_and_delivers_exactly_once(hmb_fresh_broker: EmbeddedBroker) -> None:
    from kafka import KafkaProducer

    broker = hmb_fresh_broker
    topic = broker.create_topic("retry-kp")
    broker.inject("produce", count=3, error=int(ErrorCode.NOT_LEADER_OR_FOLLOWER), topic=topic, partition=0)
    producer = KafkaProducer(
        bootstrap_servers=broker.bootstrap_servers, enable_idempotence=True, retries=10, retry_backoff_ms=10
    )
    futures = [producer.send(topic, b"k%d" % i, partition=0) for i in range(4)]
    offsets = [f.get(timeout=30).offset for f in futures]
    producer.close()
    assert offsets == [0, 1, 2, 3]
    assert [r["value"] for r in broker.records(topic)] == [b"k%d" % i for i in range(4)]
    assert _produce_requests(broker) >= 4


def test_a_fault_for_another_topic_leaves_this_one_alone(hmb_fresh_broker: EmbeddedBroker) -> None:
    broker = hmb_fresh_broker
    broker.create_topic("a")
    broker.create_topic("b")
    broker.inject("METADATA", error="UNKNOWN_TOPIC_OR_PARTITION", topic="b")
    with WireClient(broker.bootstrap_servers) as c:
        ok = c.request(ApiKey.METADATA, 1, metadata_body("a"))
        refused = c.request(ApiKey.METADATA, 1, metadata_body("b"))
        again = c.request(ApiKey.METADATA, 1, metadata_body("b"))
    assert ok.topics[0].error_code == 0
    assert refused.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert again.topics[0].error_code == 0  # count=1: used up


def test_delay_drop_and_unavailable(hmb_fresh_broker: EmbeddedBroker) -> None:
    broker = hmb_fresh_broker
    broker.inject("API_VERSIONS", delay=0.3)
    with WireClient(broker.bootstrap_servers) as c:
        started = time.monotonic()
        c.request(ApiKey.API_VERSIONS, 0, {})
        assert time.monotonic() - started >= 0.3
    broker.inject("API_VERSIONS", drop=True)
    with WireClient(broker.bootstrap_servers) as c:
        c.send(ApiKey.API_VERSIONS, 0, {})
        assert c.read_frame() is None
    broker.make_unavailable(60)
    with WireClient(broker.bootstrap_servers) as c:
        c.send(ApiKey.METADATA, 1, metadata_body())
        assert c.read_frame() is None
    broker.clear_faults()
    with WireClient(broker.bootstrap_servers) as c:
        assert c.request(ApiKey.METADATA, 1, metadata_body()).brokers


def test_librdkafka_reconnects_after_a_dropped_connection(hmb_fresh_broker: EmbeddedBroker) -> None:
    from confluent_kafka import Producer

    broker = hmb_fresh_broker
    topic = broker.create_topic("drop")
    broker.inject("PRODUCE", count=2, drop=True)
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True})
    producer.produce(topic, value=b"once")
    assert producer.flush(30) == 0
    assert [r["value"] for r in broker.records(topic)] == [b"once"]


def test_librdkafka_rides_out_a_broker_unavailable_for_a_while(hmb_fresh_broker: EmbeddedBroker) -> None:
    from confluent_kafka import Producer

    broker = hmb_fresh_broker
    topic = broker.create_topic("down")
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True})
    producer.produce(topic, value=b"before")
    assert producer.flush(30) == 0
    broker.make_unavailable(0.5)
    producer.produce(topic, value=b"during")
    assert producer.flush(30) == 0  # reconnects until the broker answers again
    assert [r["value"] for r in broker.records(topic)] == [b"before", b"during"]


def test_consumers_retry_refused_fetches(hmb_fresh_broker: EmbeddedBroker) -> None:
    """Fetch refused per partition (the reply echoes the topic and partition): consumers go on."""
    from confluent_kafka import Consumer
    from kafka import KafkaConsumer

    broker = hmb_fresh_broker
    topic = broker.create_topic("refetch")
    broker.seed([json.dumps({"topic": topic, "partition": 0, "value": f"m{i}"}) for i in range(3)])
    broker.inject("FETCH", count=3, error="NOT_LEADER_OR_FOLLOWER", topic=topic, partition=0)
    rd = Consumer(
        {"bootstrap.servers": broker.bootstrap_servers, "group.id": "rd", "auto.offset.reset": "earliest"}
    )
    rd.subscribe([topic])
    got: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(got) < 3 and time.monotonic() < deadline:
        msg = rd.poll(0.5)
        if msg is not None and msg.error() is None:
            got.append(msg.value())
    rd.close()
    assert got == [b"m0", b"m1", b"m2"]
    fetches = [r for r in broker.requests() if r["api_name"] == "FETCH"]
    assert len(fetches) >= 4  # three refused, then served
    broker.inject("FETCH", count=2, error="NOT_LEADER_OR_FOLLOWER", topic=topic)
    kp = KafkaConsumer(
        topic,
        bootstrap_servers=broker.bootstrap_servers,
        auto_offset_reset="earliest",
        consumer_timeout_ms=20_000,
    )
    assert [next(kp).value for _ in range(3)] == [b"m0", b"m1", b"m2"]
    kp.close()


def test_request_log_names_api_version_and_client(hmb_fresh_broker: EmbeddedBroker) -> None:
    with WireClient(hmb_fresh_broker.bootstrap_servers) as c:
        c.send(ApiKey.METADATA, 1, metadata_body(), client_id="my-app")
        assert c.read_frame() is not None
    log = hmb_fresh_broker.requests()
    assert {"api_name": "METADATA", "version": 1, "client_id": "my-app"}.items() <= log[-1].items()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"api": "NO_SUCH_API", "error": 6}, "no API key"),
        ({"api": "PRODUCE", "error": "NO_SUCH_ERROR"}, "no error code"),
        ({"api": "PRODUCE"}, "needs an error"),
        ({"api": "PRODUCE", "error": 6, "drop": True}, "not both"),
        ({"api": "PRODUCE", "error": 6, "count": 0}, "at least 1"),
        ({"api": "PRODUCE", "error": 6, "partition": 0}, "needs its topic"),
    ],
)
def test_a_bad_fault_is_refused_and_changes_nothing(
    hmb_broker: EmbeddedBroker, kwargs: dict[str, object], message: str
) -> None:
    api = kwargs.pop("api")
    with pytest.raises(ValueError, match=message):
        hmb_broker.inject(api, **kwargs)  # type: ignore[arg-type]
    assert hmb_broker.control.interceptor.faults == []


def test_error_replies_decode_for_every_key_and_version(hmb_broker: EmbeddedBroker) -> None:
    """Every API the broker serves, at every version, gets an error reply its grammar encodes."""
    from hmb.api import HANDLERS
    from hmb.control.error_replies import error_reply

    for key, handler in HANDLERS.items():
        for version in range(handler.min_version, handler.max_version + 1):
            request = kproto.Request(key, version, 1, "t", _empty_request(key, version))
            body = error_reply(request, ErrorCode.NOT_COORDINATOR)
            frame = kproto.encode_response(key, version, 1, body)
            assert kproto.decode_response(key, version, frame).correlation_id == 1


def _empty_request(key: int, version: int) -> object:
    class Empty:
        def __getattr__(self, name: str) -> list[object]:
            return []

    return Empty()


def test_a_fault_named_by_topic_refuses_a_request_naming_it_by_id() -> None:
    """Fetch v13+ (librdkafka sends v16) names the topic by id: a fault armed with the topic's name
    still matches it, and the reply echoes the id, which the client's grammar reads."""
    from hmb.control.error_replies import error_reply
    from hmb.control.faults import Fault

    topic_id = b"\x07" * 16
    partition = {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1}
    body = {
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": 1,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [
            {
                "topic_id": topic_id,
                "partitions": [{**partition, "log_start_offset": -1, "partition_max_bytes": 1}],
            }
        ],
        "forgotten_topics_data": [],
        "rack_id": "",
    }
    request = kproto.decode_request(kproto.encode_request(ApiKey.FETCH, 16, 5, body, client_id="c"))
    fault = Fault(ApiKey.FETCH, error=ErrorCode.NOT_LEADER_OR_FOLLOWER, topic="refetch", partition=0)
    assert fault.matches(request, {topic_id: "refetch"})
    assert not fault.matches(request, {topic_id: "another"})
    reply = error_reply(request, ErrorCode.NOT_LEADER_OR_FOLLOWER)
    decoded = kproto.decode_response(
        ApiKey.FETCH, 16, kproto.encode_response(ApiKey.FETCH, 16, 5, reply)
    ).body
    [t] = decoded.responses
    assert (t.topic_id, [(p.partition_index, p.error_code) for p in t.partitions]) == (
        topic_id,
        [(0, ErrorCode.NOT_LEADER_OR_FOLLOWER)],
    )
