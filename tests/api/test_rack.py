"""rAck on one broker: Produce with acks = -2 is not answered, its records are appended,
and each leaves a receipt ``origin;destination;id`` in ``__rack_receipts``
(one record per record set, a line per record).

What can fail here: an answer sent to a rAck Produce, a receipt missing or
naming the wrong origin, topic or id (the ``rack.id`` header first, else the
key), a receipt for a record the log refused, the receipts topic kept longer
than ``rack.receipts.ttl.ms``, acks values other than 0, 1, -1 and -2 accepted.
"""

from __future__ import annotations

from typing import Any

import pytest

from hmb.api.context import CloseConnection
from hmb.control.state import records
from hmb.log.receipt_topic import TOPIC as RECEIPTS
from kproto import ApiKey, ErrorCode
from kproto.records import RecordBatchBuilder, build_message_set

from .bodies import fetch_one, make_topic, produce_body
from .harness import CLIENT_ID, InProcessBroker

PRODUCE = ApiKey.PRODUCE


def _rack_batch(ids: list[str | None], keys: list[bytes | None]) -> bytes:
    b = RecordBatchBuilder()
    for i, (rid, key) in enumerate(zip(ids, keys, strict=True)):
        headers = [("trace", b"x")] + ([("rack.id", rid.encode())] if rid is not None else [])
        b.append(key, b"value-%d" % i, 1_700_000_000_000, headers)
    return b.build()


def _receipts(broker: InProcessBroker) -> list[tuple[bytes | None, bytes]]:
    """(origin, receipt line) in order: a record per record set, a line per record."""
    if broker.broker.logs.get(RECEIPTS, 0) is None:
        return []
    return [
        (r["key"], line)
        for r in records(broker.broker.services, RECEIPTS, 0)
        for line in r["value"].split(b"\n")
    ]


def _receipt_records(broker: InProcessBroker) -> int:
    plog = broker.broker.logs.get(RECEIPTS, 0)
    return 0 if plog is None else plog.high_watermark


@pytest.mark.parametrize("version", [3, 8, 9, 11])
async def test_rack_produce_is_unanswered_appended_and_receipted(
    broker: InProcessBroker, version: int
) -> None:
    topic = f"rack-v{version}"
    await make_topic(broker, topic)
    before = len(_receipts(broker))
    sets_before = _receipt_records(broker)
    records = _rack_batch(["7", None, "id;with;semicolons"], [b"k0", b"key-1", None])
    assert await broker.send(PRODUCE, version, produce_body(topic, records, acks=-2)) is None
    assert (await fetch_one(broker, topic, 0)).high_watermark == 3
    assert _receipt_records(broker) == sets_before + 1  # one receipt record for the record set
    got = _receipts(broker)[before:]
    origin = CLIENT_ID.encode()
    assert got == [
        (origin, f"{CLIENT_ID};{topic};7".encode()),
        (origin, f"{CLIENT_ID};{topic};key-1".encode()),  # no rack.id header: the key is the id
        (origin, f"{CLIENT_ID};{topic};id;with;semicolons".encode()),
    ]


async def test_rack_magic_1_records_use_their_keys(broker: InProcessBroker) -> None:
    await make_topic(broker, "rack-legacy")
    before = len(_receipts(broker))
    records = build_message_set([(b"legacy-key", b"v"), (None, b"w")], magic=1)
    assert await broker.send(PRODUCE, 2, produce_body("rack-legacy", records, acks=-2)) is None
    assert [v for _k, v in _receipts(broker)[before:]] == [
        f"{CLIENT_ID};rack-legacy;legacy-key".encode(),
        f"{CLIENT_ID};rack-legacy;".encode(),  # neither header nor key: an empty id
    ]


async def test_refused_rack_produce_closes_the_connection_and_leaves_no_receipt(
    broker: InProcessBroker,
) -> None:
    before = len(_receipts(broker))
    records = _rack_batch(["1"], [None])
    body = produce_body("rack-no-such-topic-here", records, acks=-2, partition=5)
    with pytest.raises(CloseConnection, match="acks=-2"):
        await broker.send(PRODUCE, 8, body)
    assert len(_receipts(broker)) == before


async def test_receipts_topic_keeps_receipts_for_the_ttl(make_broker: Any) -> None:
    b = make_broker("rack.receipts.ttl.ms=4321")
    await make_topic(b, "rack-ttl")
    assert await b.send(PRODUCE, 8, produce_body("rack-ttl", _rack_batch(["1"], [None]), acks=-2)) is None
    assert b.broker.logs.topic_configs.overrides(RECEIPTS)["retention.ms"] == "4321"
    assert b.broker.logs.get(RECEIPTS, 0).config.retention_ms == 4321


@pytest.mark.parametrize("acks", [2, -3, 100])
async def test_other_acks_are_still_refused(broker: InProcessBroker, acks: int) -> None:
    await make_topic(broker, "rack-bad-acks")
    resp = await broker.request(
        PRODUCE, 8, produce_body("rack-bad-acks", _rack_batch(["1"], [None]), acks=acks)
    )
    assert resp.responses[0].partition_responses[0].error_code == ErrorCode.INVALID_REQUIRED_ACKS
