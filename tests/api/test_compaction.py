"""Log compaction as the API shows it, across keys: Produce to a compacted topic refuses a
record without a key with INVALID_RECORD (and, from v8, a message saying why) for its
partition only, writing nothing of its batch; ``__consumer_offsets`` is compacted and never
deleted by retention, as Kafka's is, so a group's latest commits survive any retention
setting and cleaning keeps them while the commits they replaced go."""

from __future__ import annotations

from typing import Any

import pytest

from hmb.groups.offsets import TOPIC, CommitEntry
from kproto import ApiKey, ErrorCode
from kproto.records import RecordBatchBuilder, build_message_set

from .bodies import create, fetch_one, produce_body
from .harness import InProcessBroker
from .test_topic_configs import with_configs

FAR_FUTURE_S = 10**10


def _keyed(*keys: bytes | None) -> bytes:
    b = RecordBatchBuilder()
    for key in keys:
        b.append(key, b"value", 1_700_000_000_000)
    return b.build()


@pytest.mark.parametrize("version", [0, 3, 7, 8])
async def test_a_keyless_record_fails_its_partition_only(broker: InProcessBroker, version: int) -> None:
    await create(broker, 4, with_configs("changelog", 2, cleanup_policy="compact"))
    if version >= 3:
        bad, good = _keyed(b"a", None, b"c"), _keyed(b"a")
    else:
        bad = build_message_set([(b"a", b"1"), (None, b"2")], magic=1)
        good = build_message_set([(b"a", b"1")], magic=1)
    body = produce_body("changelog", bad)
    body["topic_data"][0]["partition_data"].append({"index": 1, "records": good})
    resp = await broker.request(ApiKey.PRODUCE, version, body)
    p0, p1 = resp.responses[0].partition_responses
    assert (p0.error_code, p0.base_offset) == (ErrorCode.INVALID_RECORD, -1)
    assert (p1.error_code, p1.base_offset) == (ErrorCode.NONE, 0)
    if version >= 8:
        assert p0.error_message == "record 1 has no key: changelog is compacted"
        assert p1.error_message is None
    assert (await fetch_one(broker, "changelog", 0)).high_watermark == 0  # nothing of it written


async def test_a_deleting_topic_takes_keyless_records(broker: InProcessBroker) -> None:
    await create(broker, 4, with_configs("events", cleanup_policy="delete"))
    resp = await broker.request(ApiKey.PRODUCE, 8, produce_body("events", _keyed(None)))
    assert resp.responses[0].partition_responses[0].error_code == ErrorCode.NONE


async def _commit_many(b: InProcessBroker, n: int) -> None:
    for i in range(n):
        entries = [CommitEntry("orders", p, 1000 * i + p) for p in range(3)]
        await b.broker.offsets.commit("billing", entries)


async def test_offsets_topic_is_compacted_and_outlives_retention(make_broker: Any) -> None:
    b: InProcessBroker = make_broker("log.retention.ms=1", "log.retention.bytes=1")
    logs = b.broker.logs
    assert logs.config_of(TOPIC).cleanup_policy == ("compact",)
    assert logs.topic_configs.overrides(TOPIC)["segment.bytes"] == "104857600"
    logs.set_topic_overrides(TOPIC, {**logs.topic_configs.overrides(TOPIC), "segment.bytes": "1024"})
    await _commit_many(b, 200)
    plog = logs.get(TOPIC, 0)
    assert plog is not None and len(plog.segments) > 5
    await logs.apply_retention(FAR_FUTURE_S)  # every segment is "old" and "too big"
    assert plog.log_start_offset == 0
    size = plog.size_bytes
    assert await b.broker.cleaner.clean_all() == 1
    assert plog.size_bytes < size / 10
    b.restart()  # the commits are read back from the cleaned log
    committed = b.broker.offsets.of_group("billing")
    assert {tp: c.offset for tp, c in committed.items()} == {("orders", p): 199_000 + p for p in range(3)}
