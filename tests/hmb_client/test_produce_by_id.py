"""hmb_client's producer names topics by id (Produce v13, KIP-516) when it knows every id.

Against hmb, which serves Produce v13 and Metadata v13, a producer must send
v13 (read back from the broker's request log) and its records must land
where a consumer reads them; plain, idempotent and transactional alike (the
transactional one on transaction version 2, where v13 is a v12 by id).  A
client whose metadata carries no ids (Metadata before v10) falls back to
v12 by name (a transactional one stays on version 2: no AddPartitionsToTxn),
and a request naming one topic of unknown id goes as v12 as a whole.  A
topic deleted and made again under its name has a new id: the producer's
stale one is answered UNKNOWN_TOPIC_ID, and the producer must
look the topic up again and deliver to the new topic.  What can fail: v13
never sent, an answer's ids not mapped back (every batch then waits for an
answer that never matches), a fallback that sends zero ids.
"""

from __future__ import annotations

import time

import pytest
from broker_process import InProcessBroker

from hmb_client import Consumer, Producer
from hmb_client.cluster import NO_TOPIC_ID, TopicInfo
from hmb_client.connection import CLIENT_VERSIONS, BrokerConnection
from hmb_client.producer.idempotence import Idempotence
from hmb_client.producer.topic_ids import acks_decoder, produce_version
from hmb_client.producer.transactions import TransactionManager
from hmb_client.structs import TopicPartition
from kproto import ApiKey
from kproto.produce_fast import FIRST_TOPIC_ID, PartitionAck, encode_produce_response


def _values(
    bootstrap: str, topic: str, expected: int, partition: int = 0, isolation: str = "read_uncommitted"
) -> list[bytes]:
    """What a consumer reads from ``topic``, until ``expected`` values came (or 20 s)."""
    with Consumer(bootstrap, auto_offset_reset="earliest", isolation_level=isolation) as c:
        c.assign([TopicPartition(topic, partition)])
        got: list[bytes] = []
        deadline = time.monotonic() + 20
        while len(got) < expected and time.monotonic() < deadline:
            got += [r.value for r in c.poll(0.2) if r.value is not None]
        return got


def _versions(broker: InProcessBroker, api_key: int) -> list[int]:
    return [r["version"] for r in broker.requests() if r["api_key"] == api_key]


@pytest.mark.parametrize("kind", ["plain", "idempotent"])
def test_the_producer_sends_v13_and_the_records_land(in_process_broker: InProcessBroker, kind: str) -> None:
    b = in_process_broker
    topic = f"by-id-{kind}"
    b.create_topic(topic, 2)
    b.clear_requests()
    sent = [b"v%d" % i for i in range(30)]
    with Producer(b.bootstrap, enable_idempotence=kind == "idempotent", linger_ms=2) as p:
        metas = [p.send(topic, v, partition=i % 2) for i, v in enumerate(sent)]
        offsets = [m.get(10) for m in metas]
    assert [(m.topic, m.partition) for m in offsets] == [(topic, i % 2) for i in range(30)]
    assert [m.offset for m in offsets if m.partition == 0] == list(range(15))
    assert set(_versions(b, ApiKey.PRODUCE)) == {FIRST_TOPIC_ID}
    assert set(_versions(b, ApiKey.METADATA)) == {CLIENT_VERSIONS[ApiKey.METADATA][1]}
    assert _values(b.bootstrap, topic, 15, 0) == sent[0::2]
    assert _values(b.bootstrap, topic, 15, 1) == sent[1::2]


def test_without_topic_ids_the_producer_falls_back_to_v12(
    in_process_broker: InProcessBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Metadata v9 gives no topic ids: Produce goes by name, v12, though the broker serves v13."""
    monkeypatch.setitem(CLIENT_VERSIONS, ApiKey.METADATA, (0, 9))
    b = in_process_broker
    b.create_topic("by-name")
    b.clear_requests()
    with Producer(b.bootstrap, enable_idempotence=True) as p:
        assert [p.send("by-name", v).get(10).offset for v in (b"a", b"b")] == [0, 1]
    assert set(_versions(b, ApiKey.METADATA)) == {9}
    assert set(_versions(b, ApiKey.PRODUCE)) == {FIRST_TOPIC_ID - 1}
    assert _values(b.bootstrap, "by-name", 2) == [b"a", b"b"]


@pytest.mark.parametrize("metadata", [13, 9])
def test_a_transaction_by_id_or_by_name_stays_on_version_2(
    in_process_broker: InProcessBroker, monkeypatch: pytest.MonkeyPatch, metadata: int
) -> None:
    """With ids, Produce v13; without (Metadata v9), v12: both transaction version 2, so the
    broker adds the partitions itself and no AddPartitionsToTxn is sent."""
    monkeypatch.setitem(CLIENT_VERSIONS, ApiKey.METADATA, (0, metadata))
    b = in_process_broker
    b.create_topic("txn-by-id")
    b.clear_requests()
    with Producer(b.bootstrap, transactional_id=f"by-id-{metadata}") as p:
        p.init_transactions()
        p.begin_transaction()
        for v in (b"t1", b"t2", b"t3"):
            p.send("txn-by-id", v, partition=0)
        p.commit_transaction()
    assert set(_versions(b, ApiKey.PRODUCE)) == {FIRST_TOPIC_ID if metadata >= 10 else FIRST_TOPIC_ID - 1}
    assert _versions(b, ApiKey.ADD_PARTITIONS_TO_TXN) == []
    assert _values(b.bootstrap, "txn-by-id", 3, isolation="read_committed") == [b"t1", b"t2", b"t3"]


def test_a_stale_topic_id_is_looked_up_again(in_process_broker: InProcessBroker) -> None:
    """A topic deleted and made again: the old id is refused, the producer finds the new one."""
    b = in_process_broker
    b.create_topic("reborn")
    with Producer(b.bootstrap, retry_backoff_ms=10) as p:
        assert p.send("reborn", b"first life").get(10).offset == 0
        b.delete_topic("reborn")
        b.create_topic("reborn")
        b.clear_requests()
        assert p.send("reborn", b"second life").get(20).offset == 0
    produced = _versions(b, ApiKey.PRODUCE)
    assert set(produced) == {FIRST_TOPIC_ID} and len(produced) >= 2, "refused by the old id, then sent again"
    assert ApiKey.METADATA in {r["api_key"] for r in b.requests()}
    assert _values(b.bootstrap, "reborn", 1) == [b"second life"]


def test_one_unknown_id_sends_the_whole_request_by_name() -> None:
    known, unknown = TopicInfo("a", [0], topic_id=b"\x01" * 16), TopicInfo("b", [0])
    topics = {"a": known, "b": unknown}
    assert produce_version(13, topics, ["a"]) == (13, {"a": b"\x01" * 16})
    assert produce_version(13, topics, ["a", "b"]) == (12, None)
    assert produce_version(13, topics, ["a", "gone"]) == (12, None)  # not in the metadata at all
    assert unknown.topic_id == NO_TOPIC_ID
    assert produce_version(11, topics, ["a"]) == (11, None)  # below v13 nothing changes


def test_the_answer_is_read_back_under_the_request_names() -> None:
    ids = {"a": b"\x01" * 16, "b": b"\x02" * 16}
    frame = encode_produce_response(13, 1, [(ids["b"], [(3, 0, 7, 0)]), (b"\x09" * 16, [(0, 0, 1, 0)])])
    assert acks_decoder(13, ids)(frame) == [
        PartitionAck("b", 3, 0, 7, -1, None, ids["b"]),
        PartitionAck("", 0, 0, 1, -1, None, b"\x09" * 16),  # an id not asked about: no batch's
    ]
    assert acks_decoder(12, None)(encode_produce_response(12, 1, [("a", [(0, 0, 5, 0)])])) == [
        PartitionAck("a", 0, 0, 5, -1, None)
    ]


@pytest.mark.parametrize(("version_2", "expected"), [(False, 11), (True, 13)])
def test_transactions_keep_their_protocol(version_2: bool, expected: int) -> None:
    """The first transaction protocol stops at Produce v11, before topic ids; version 2 reaches
    v13, and its fallback (v12) is still version 2 (the broker adds partitions itself from v12)."""
    conn = BrokerConnection("127.0.0.1", 9, client_id="t", request_timeout_s=1)
    conn.versions = {ApiKey.PRODUCE: (0, 13)}
    txn = TransactionManager("t", 60_000, Idempotence(), 1000)
    txn.version_2 = version_2
    version = txn.version_of(conn, ApiKey.PRODUCE)
    assert version == expected
    fallback, _ = produce_version(version, {}, ["t"])
    assert fallback == (12 if version_2 else 11)
