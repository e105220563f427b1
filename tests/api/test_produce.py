"""Produce v0-v13 in process: every version boundary of the request and the response.

v1 adds throttle_time_ms, v2 log_append_time_ms, v3 the transactional id and
RecordBatches (magic 2), v4 KAFKA_STORAGE_ERROR (older clients get
NOT_LEADER_OR_FOLLOWER for a failed write), v5 log_start_offset, v8 per-record
errors, v9 the flexible layout (a request with tagged fields takes the grammar's
way and is served the same), v10 the tagged current leader (never sent: one
broker leads every partition), v11 TRANSACTION_ABORTABLE (no transactions
here), v12 adds partitions to a transaction itself (``test_transactions_v2.py``)
and answers a plain batch as v11, v13 names topics by id.
What can fail here: a field missing or wrong at some version, magic 2
accepted below v3, a bad partition failing the others, an idempotent retry
appended twice, acks=0 answered.
"""

from __future__ import annotations

from typing import Any

import pytest

from hmb.log.partition import PartitionLog
from kproto import ApiKey, ErrorCode
from kproto.records import build_message_set, read_records

from .bodies import batch, fetch_one, make_topic, new_producer_id, produce, produce_body, produce_one
from .harness import InProcessBroker

PRODUCE = ApiKey.PRODUCE


@pytest.mark.parametrize("version", range(13))
async def test_produce_response_fields_per_version(broker: InProcessBroker, version: int) -> None:
    topic = f"prod-v{version}"
    records = (
        batch([b"a", b"b"]) if version >= 3 else build_message_set([(None, b"a"), (None, b"b")], magic=1)
    )
    resp = await produce(broker, topic, records, version)
    p = resp.responses[0].partition_responses[0]
    assert (p.index, p.error_code, p.base_offset) == (0, ErrorCode.NONE, 0)
    again = await produce_one(broker, topic, records, version)
    assert again.base_offset == 2
    if version >= 1:
        assert resp.throttle_time_ms == 0
    if version >= 2:
        assert p.log_append_time_ms == -1
    else:
        assert "log_append_time_ms" not in p
    if version >= 5:
        assert p.log_start_offset == 0
    else:
        assert "log_start_offset" not in p
    if version >= 8:
        assert list(p.record_errors) == [] and p.error_message is None
    if version >= 9:  # no new leader to point at (absent tagged fields decode as their defaults)
        leader = p.tagged_fields.get("current_leader")
        assert leader is None or (leader.leader_id, leader.leader_epoch) == (-1, -1)
        assert list(resp.tagged_fields.get("node_endpoints") or []) == []


@pytest.mark.parametrize("version", [9, 11])
async def test_a_flexible_request_with_tagged_fields_is_served(broker: InProcessBroker, version: int) -> None:
    await make_topic(broker, "tagged")
    body = produce_body("tagged", batch([b"t"]))
    body["topic_data"][0]["partition_data"][0]["tagged_fields"] = {9: b"\x00"}  # unknown to Kafka 4
    resp = await broker.request(PRODUCE, version, body)
    assert resp.responses[0].partition_responses[0].error_code == ErrorCode.NONE
    assert (await fetch_one(broker, "tagged", 0)).high_watermark == 1


async def test_produce_magic_rules(broker: InProcessBroker) -> None:
    # magic 2 needs Produce v3+ (Kafka refuses it below: old consumers could not read it)
    assert (
        await produce_one(broker, "magic-rules", batch([b"x"]), 2)
    ).error_code == ErrorCode.CORRUPT_MESSAGE
    # ... but magic 0/1 is accepted in any version (lenient, like Kafka)
    assert (await produce_one(broker, "magic-rules", build_message_set([(None, b"m0")]), 8)).error_code == 0
    m1 = build_message_set([(None, b"m1", 5)], magic=1)
    assert (await produce_one(broker, "magic-rules", m1, 0)).error_code == 0
    assert (await produce_one(broker, "magic-rules", batch([b"v2"]), 3)).base_offset == 2
    # a corrupted batch CRC is refused, nothing appended
    bad = bytearray(batch([b"crc"]))
    bad[-1] ^= 0xFF
    assert (await produce_one(broker, "magic-rules", bytes(bad), 8)).error_code == ErrorCode.CORRUPT_MESSAGE
    assert (await produce_one(broker, "magic-rules", batch([b"next"]), 8)).base_offset == 3


async def test_produce_acks_0_no_response_v8(broker: InProcessBroker) -> None:
    await make_topic(broker, "acks0")
    body = produce_body("acks0", batch([b"q"]), acks=0)
    assert await broker.send(PRODUCE, 8, body) is None  # the produce gets no answer ...
    assert (await fetch_one(broker, "acks0", 0)).high_watermark == 1  # ... and is appended


@pytest.mark.parametrize("version", [0, 3, 8, 9, 11])
async def test_errors_are_per_partition(broker: InProcessBroker, version: int) -> None:
    """An unknown partition, invalid acks and null records: each answered on its own."""
    await make_topic(broker, "per-part")
    records = batch([b"ok"]) if version >= 3 else build_message_set([(None, b"ok")])
    body = produce_body("per-part", records)
    body["topic_data"][0]["partition_data"].append({"index": 7, "records": records})
    body["topic_data"].append(
        {"name": "per-part-missing", "partition_data": [{"index": 0, "records": records}]}
    )
    resp = await broker.request(PRODUCE, version, body)
    got = [
        (t.name, p.index, p.error_code, p.base_offset) for t in resp.responses for p in t.partition_responses
    ]
    assert got == [
        ("per-part", 0, ErrorCode.NONE, 0),
        ("per-part", 7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1),
        ("per-part-missing", 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1),
    ]
    for acks in (2, -3):  # -2 is rAck (tests/api/test_rack.py)
        bad = await broker.request(PRODUCE, version, produce_body("per-part", records, acks=acks))
        assert bad.responses[0].partition_responses[0].error_code == ErrorCode.INVALID_REQUIRED_ACKS
    empty = await broker.request(PRODUCE, version, produce_body("per-part", None))
    p = empty.responses[0].partition_responses[0]
    assert (p.error_code, p.base_offset) == (ErrorCode.NONE, -1)  # nothing to append, nothing appended
    assert (await fetch_one(broker, "per-part", 0)).high_watermark == 1


async def test_message_max_bytes(make_broker: Any) -> None:
    b = make_broker("message.max.bytes=1000")
    assert (await produce_one(b, "max", batch([b"x" * 2000]))).error_code == ErrorCode.MESSAGE_TOO_LARGE
    assert (await produce_one(b, "max", batch([b"x" * 100]))).base_offset == 0


@pytest.mark.parametrize(
    ("version", "code"), [(3, ErrorCode.NOT_LEADER_OR_FOLLOWER), (4, ErrorCode.KAFKA_STORAGE_ERROR)]
)
async def test_a_failed_write_before_and_from_v4(
    broker: InProcessBroker, monkeypatch: pytest.MonkeyPatch, version: int, code: int
) -> None:
    """Produce < v4 clients do not know KAFKA_STORAGE_ERROR: Kafka sends them NOT_LEADER_OR_FOLLOWER."""
    await make_topic(broker, "disk-error")

    async def failing_append(self: PartitionLog, records: bytes, **kw: Any) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(PartitionLog, "append", failing_append)
    p = await produce_one(broker, "disk-error", batch([b"lost"]), version)
    assert (p.error_code, p.base_offset) == (code, -1)


async def test_idempotent_retry_acknowledged_with_original_offset(broker: InProcessBroker) -> None:
    topic = "idem-wire"
    pid = await new_producer_id(broker)
    await produce_one(broker, topic, batch([b"other"]))  # offset 0 from a plain producer
    first = batch([b"a", b"b", b"c"], producer_id=pid, epoch=0, sequence=0)
    r1 = await produce_one(broker, topic, first)
    assert (r1.error_code, r1.base_offset) == (0, 1)
    await produce_one(broker, topic, batch([b"plain"]))  # offset 4
    r2 = await produce_one(broker, topic, first)  # the retry of a batch the broker already has
    assert (r2.error_code, r2.base_offset) == (0, 1)
    assert (await fetch_one(broker, topic, 0)).high_watermark == 5  # not appended again
    r3 = await produce_one(broker, topic, batch([b"d"], producer_id=pid, epoch=0, sequence=3))
    assert (r3.error_code, r3.base_offset) == (0, 5)
    gap = await produce_one(broker, topic, batch([b"e"], producer_id=pid, epoch=0, sequence=7))
    assert gap.error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    values = [r.value for r in read_records((await fetch_one(broker, topic, 0)).records)]
    assert values == [b"other", b"a", b"b", b"c", b"plain", b"d"]


async def test_plain_batch_inside_an_open_transaction_refused(broker: InProcessBroker) -> None:
    """A producer whose transaction is open on the partition may not write outside it."""
    pid = await new_producer_id(broker)
    await produce_one(broker, "txn-open", batch([b"plain"]))
    plog = broker.broker.logs.get("txn-open", 0)
    assert plog is not None
    await plog.append(batch([b"t"], producer_id=pid, epoch=0, sequence=0, transactional=True))
    r = await produce_one(broker, "txn-open", batch([b"u"], producer_id=pid, epoch=0, sequence=1))
    assert r.error_code == ErrorCode.INVALID_TXN_STATE
    assert (plog.high_watermark, plog.last_stable_offset) == (2, 1), "nothing written"


async def test_v13_names_topics_by_id(broker: InProcessBroker) -> None:
    await produce_one(broker, "by-id", batch([b"first"]))
    topic_id = broker.broker.logs.topic_ids["by-id"]
    body = produce_body("by-id", batch([b"a", b"b"]))
    body["topic_data"][0]["topic_id"] = topic_id
    resp = await broker.request(PRODUCE, 13, body)
    [t] = resp.responses
    [p] = t.partition_responses
    assert (t.topic_id, p.error_code, p.base_offset, p.log_start_offset) == (topic_id, ErrorCode.NONE, 1, 0)
    assert (await fetch_one(broker, "by-id", 0)).high_watermark == 3


async def test_v13_an_unknown_or_stale_topic_id_writes_nothing(broker: InProcessBroker) -> None:
    await produce_one(broker, "reborn", batch([b"old"]))
    old_id = broker.broker.logs.topic_ids["reborn"]
    deleted = await broker.request(ApiKey.DELETE_TOPICS, 4, {"topic_names": ["reborn"], "timeout_ms": 1000})
    assert deleted.responses[0].error_code == ErrorCode.NONE
    await make_topic(broker, "reborn")
    for stale in (old_id, b"\x07" * 16):
        body = produce_body("reborn", batch([b"lost"]))
        body["topic_data"][0]["topic_id"] = stale
        [t] = (await broker.request(PRODUCE, 13, body)).responses
        assert (t.topic_id, t.partition_responses[0].error_code) == (stale, ErrorCode.UNKNOWN_TOPIC_ID)
    assert (await fetch_one(broker, "reborn", 0)).high_watermark == 0
