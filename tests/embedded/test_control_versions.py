"""Version caps: a broker that answers as an older one, and real clients that fall back to it."""

from __future__ import annotations

import collections

import pytest
from wire import WireClient

import kproto
from hmb.embedded import EmbeddedBroker
from kproto import ApiKey, ErrorCode

pytestmark = pytest.mark.interop

CLASSIC = {"PRODUCE": 8, "FETCH": 11}  # the newest versions before the flexible layouts
MD = {"topics": [], "allow_auto_topic_creation": False}  # Metadata v4 and v5
AV3 = {"client_software_name": "t", "client_software_version": "1"}


def _versions(broker: EmbeddedBroker) -> collections.Counter[tuple[str, int]]:
    return collections.Counter((r["api_name"], r["version"]) for r in broker.requests())


def _produce_and_read(broker: EmbeddedBroker, topic: str, n: int) -> list[bytes]:
    import confluent_kafka as ck

    producer = ck.Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0})
    failed: list[object] = []
    for i in range(n):
        producer.produce(topic, b"v%d" % i, on_delivery=lambda err, _m: err and failed.append(err))
    assert producer.flush(30) == 0 and not failed
    consumer = ck.Consumer(
        {"bootstrap.servers": broker.bootstrap_servers, "group.id": f"g-{topic}", "enable.auto.commit": False}
    )
    consumer.assign([ck.TopicPartition(topic, 0, 0)])
    values: list[bytes] = []
    for _ in range(100):
        if len(values) >= n:
            break
        values += [m.value() for m in consumer.consume(n, 0.5) if m.error() is None]
    consumer.close()
    return values


def test_librdkafka_falls_back_to_the_classic_versions_and_back(hmb_fresh_broker: EmbeddedBroker) -> None:
    broker = hmb_fresh_broker
    topic = broker.create_topic("capped")
    assert broker.limit_versions(CLASSIC) == {ApiKey.PRODUCE: 8, ApiKey.FETCH: 11}
    assert _produce_and_read(broker, topic, 5) == [b"v%d" % i for i in range(5)]
    seen = _versions(broker)
    produce = {v for (name, v) in seen if name == "PRODUCE"}
    fetch = {v for (name, v) in seen if name == "FETCH"}
    assert produce == {8} and fetch == {11}, seen

    broker.limit_versions({})  # lifted: a new client negotiates the flexible layouts again
    broker.clear_requests()
    assert _produce_and_read(broker, topic, 5)[-5:] == [b"v%d" % i for i in range(5)]
    seen = _versions(broker)
    assert min(v for (name, v) in seen if name == "PRODUCE") >= 9, seen
    assert min(v for (name, v) in seen if name == "FETCH") >= 12, seen


def test_apiversions_lists_the_caps_and_a_request_above_one_closes_the_connection(
    hmb_fresh_broker: EmbeddedBroker,
) -> None:
    broker = hmb_fresh_broker
    broker.limit_versions({"METADATA": 4, int(ApiKey.API_VERSIONS): 3})
    with WireClient(broker.bootstrap_servers) as c:
        table = {k.api_key: k.max_version for k in c.request(ApiKey.API_VERSIONS, 3, AV3).api_keys}
        assert table[ApiKey.METADATA] == 4 and table[ApiKey.API_VERSIONS] == 3
        assert table[ApiKey.PRODUCE] >= 13  # an uncapped key keeps its served range
        assert c.request(ApiKey.METADATA, 4, MD).brokers  # at the cap: served
        c.send(ApiKey.METADATA, 5, MD)
        assert c.read_frame() is None and c.is_closed_by_peer()
    with WireClient(broker.bootstrap_servers) as c:  # everyone else is still served
        c.send(ApiKey.API_VERSIONS, 4, AV3)
        frame = c.read_frame()
        assert frame is not None
        body = kproto.decode_response(ApiKey.API_VERSIONS, 0, frame).body
        assert body.error_code == ErrorCode.UNSUPPORTED_VERSION
        assert {k.api_key: k.max_version for k in body.api_keys}[ApiKey.API_VERSIONS] == 3


def test_a_bad_cap_is_refused_and_changes_nothing(hmb_fresh_broker: EmbeddedBroker) -> None:
    broker = hmb_fresh_broker
    broker.limit_versions({"FETCH": 11})
    with pytest.raises(ValueError, match="no API key named"):
        broker.limit_versions({"NOPE": 1})
    with pytest.raises(ValueError, match="oldest served version"):
        broker.limit_versions({"API_VERSIONS": -1})
    with WireClient(broker.bootstrap_servers) as c:
        table = {k.api_key: k.max_version for k in c.request(ApiKey.API_VERSIONS, 3, AV3).api_keys}
    assert table[ApiKey.FETCH] == 11
