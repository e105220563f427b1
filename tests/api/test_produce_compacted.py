"""Produce to a compacted topic: a record without a key is refused with INVALID_RECORD (and,
from v8, a message saying why) for its partition only, and nothing of its batch is written."""

from __future__ import annotations

import pytest

from kproto import ApiKey, ErrorCode
from kproto.records import RecordBatchBuilder, build_message_set

from .bodies import create, fetch_one, produce_body
from .harness import InProcessBroker
from .test_topic_configs import with_configs


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
