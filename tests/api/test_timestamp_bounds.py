"""message.timestamp.before.max.ms / after.max.ms, in process: a CreateTime record too far
from the broker's clock is INVALID_TIMESTAMP for its partition and nothing of its batch
is written; LogAppendTime topics are exempt; the broker-wide setting is every topic's
default; the broker's clock (not the machine's) is the reference.
"""

from __future__ import annotations

from typing import Any

import kafka.record as kafka_records

from kproto import ErrorCode
from kproto.records import Compression, build_message_set

from .bodies import batch, create, fetch_one, produce_one, spec
from .harness import InProcessBroker

HOUR_MS = 3_600_000


def with_configs(name: str, **configs: str) -> dict[str, Any]:
    return {**spec(name, 1), "configs": [{"name": k, "value": v} for k, v in configs.items()]}


async def offsets_of(b: InProcessBroker, topic: str) -> list[int]:
    fetched = await fetch_one(b, topic, 0)
    return [r.offset for bt in kafka_records.MemoryRecords(bytes(fetched.records)) for r in bt]


async def test_a_record_from_the_far_future_is_refused_by_default(broker: InProcessBroker) -> None:
    now = broker.broker.clock.wall_ms()
    await create(broker, 4, spec("future"))
    ok = await produce_one(broker, "future", batch([b"a"], timestamps=[now + HOUR_MS // 2]))
    assert ok.error_code == ErrorCode.NONE
    # one record of three two hours ahead: the whole batch is refused
    late = batch([b"b", b"c", b"d"], timestamps=[now, now + 2 * HOUR_MS, now])
    refused = await produce_one(broker, "future", late)
    assert refused.error_code == ErrorCode.INVALID_TIMESTAMP
    assert await offsets_of(broker, "future") == [0]
    broker.broker.clock.advance(2 * 3600)  # the broker's clock catches up: the same batch is taken
    assert (await produce_one(broker, "future", late)).error_code == ErrorCode.NONE
    assert await offsets_of(broker, "future") == [0, 1, 2, 3]


async def test_before_max_ms_refuses_old_records_even_inside_a_batch(broker: InProcessBroker) -> None:
    now = broker.broker.clock.wall_ms()
    got = await create(broker, 4, with_configs("recent", **{"message.timestamp.before.max.ms": "60000"}))
    assert got["recent"].error_code == ErrorCode.NONE
    fresh = await produce_one(broker, "recent", batch([b"a"], timestamps=[now - 30_000]))
    assert fresh.error_code == ErrorCode.NONE
    # the old record is not the batch's first: only decoding the records finds it
    for codec in (Compression.NONE, Compression.GZIP):
        mixed = batch([b"b", b"c"], timestamps=[now, now - 120_000], compression=codec)
        assert (await produce_one(broker, "recent", mixed)).error_code == ErrorCode.INVALID_TIMESTAMP
    legacy = build_message_set([(None, b"m", now - 120_000)], magic=1)
    assert (await produce_one(broker, "recent", legacy, 2)).error_code == ErrorCode.INVALID_TIMESTAMP
    unstamped = build_message_set([(None, b"m0")], magic=0)  # magic 0 has no timestamp to check
    assert (await produce_one(broker, "recent", unstamped, 2)).error_code == ErrorCode.NONE
    assert await offsets_of(broker, "recent") == [0, 1]


async def test_log_append_time_topics_are_exempt(broker: InProcessBroker) -> None:
    configs = {"message.timestamp.type": "LogAppendTime", "message.timestamp.before.max.ms": "0"}
    await create(broker, 4, with_configs("stamped", **configs))
    ancient = await produce_one(broker, "stamped", batch([b"a"], timestamps=[1_000]))
    assert ancient.error_code == ErrorCode.NONE
    future = await produce_one(broker, "stamped", batch([b"b"], timestamps=[2**62]))
    assert future.error_code == ErrorCode.NONE


async def test_the_broker_setting_is_every_topics_default(make_broker: Any) -> None:
    b = make_broker("log.message.timestamp.after.max.ms=0", "log.message.timestamp.before.max.ms=600000")
    now = b.broker.clock.wall_ms()
    lenient = with_configs("lenient", **{"message.timestamp.after.max.ms": "86400000"})
    await create(b, 4, spec("strict"), lenient)
    ahead = batch([b"a"], timestamps=[now + 60_000])
    assert (await produce_one(b, "strict", ahead)).error_code == ErrorCode.INVALID_TIMESTAMP
    assert (await produce_one(b, "lenient", ahead)).error_code == ErrorCode.NONE
    old = batch([b"a"], timestamps=[now - 3_600_000])
    assert (await produce_one(b, "lenient", old)).error_code == ErrorCode.INVALID_TIMESTAMP
    assert (await produce_one(b, "strict", batch([b"a"], timestamps=[now - 1000]))).error_code == 0


async def test_an_out_of_range_setting_is_invalid_config(broker: InProcessBroker) -> None:
    got = await create(broker, 4, with_configs("neg", **{"message.timestamp.after.max.ms": "-5"}))
    assert got["neg"].error_code == ErrorCode.INVALID_CONFIG
