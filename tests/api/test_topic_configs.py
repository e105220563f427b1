"""Per-topic settings, in process: given at CreateTopics, checked, stored, honoured per topic.

A topic created with ``retention.bytes``, ``segment.bytes`` or
``max.message.bytes`` obeys its own values while other topics keep the
broker's defaults; ``message.timestamp.type=LogAppendTime`` stamps appends
with the broker's clock; the settings survive a restart; a change takes
effect without one; a bad setting (unknown, malformed, null, out of range) is
INVALID_CONFIG and nothing is created.  message.timestamp.before/after.max.ms:
a CreateTime record too far from the broker's clock is INVALID_TIMESTAMP for
its partition and nothing of its batch is written; LogAppendTime topics are
exempt; the broker-wide setting is every topic's default.
"""

from __future__ import annotations

from typing import Any

import kafka.record as kafka_records
import pytest

from hmb.config import ConfigError
from kproto import ErrorCode
from kproto.records import Compression, build_message_set

from .bodies import batch, create, fetch_one, partitions_of, produce_one, spec
from .harness import InProcessBroker


def with_configs(name: str, partitions: int = 1, **configs: str | None) -> dict[str, Any]:
    return {
        **spec(name, partitions),
        "configs": [{"name": k.replace("_", "."), "value": v} for k, v in configs.items()],
    }


def segment_files(b: InProcessBroker, topic: str) -> list[str]:
    return sorted(p.name for p in (b.data_dir / f"{topic}-0").glob("*.log"))


async def test_a_topic_obeys_its_own_settings_and_others_keep_the_defaults(broker: InProcessBroker) -> None:
    got = await create(
        broker, 4, with_configs("small", segment_bytes="2048", max_message_bytes="600"), spec("plain")
    )
    assert {n: t.error_code for n, t in got.items()} == {"small": 0, "plain": 0}
    logs = broker.broker.logs
    assert (logs.config_of("small").segment_bytes, logs.config_of("small").max_message_bytes) == (2048, 600)
    assert logs.config_of("plain") == logs.config

    big = batch([b"x" * 1000])
    assert (await produce_one(broker, "small", big)).error_code == ErrorCode.MESSAGE_TOO_LARGE
    assert (await produce_one(broker, "plain", big)).error_code == ErrorCode.NONE
    for _ in range(6):  # ~450-byte batches: a 2 KiB segment rolls every few appends
        assert (await produce_one(broker, "small", batch([b"y" * 300]))).error_code == ErrorCode.NONE
        assert (await produce_one(broker, "plain", batch([b"y" * 300]))).error_code == ErrorCode.NONE
    assert len(segment_files(broker, "small")) >= 2
    assert len(segment_files(broker, "plain")) == 1


async def test_settings_survive_a_restart_and_leave_with_the_topic(broker: InProcessBroker) -> None:
    await create(broker, 4, with_configs("kept", retention_ms="3600000", cleanup_policy="delete"))
    broker.restart()
    assert broker.broker.logs.config_of("kept").retention_ms == 3_600_000
    assert broker.broker.logs.topic_configs.overrides("kept") == {
        "retention.ms": "3600000",
        "cleanup.policy": "delete",
    }
    await broker.broker.logs.delete_topic("kept")
    assert not (broker.data_dir / "topic-configs" / "kept.properties").exists()
    await create(broker, 4, spec("kept"))  # the same name again: the defaults, not the old settings
    assert broker.broker.logs.config_of("kept") == broker.broker.logs.config


async def test_retention_bytes_per_topic(broker: InProcessBroker) -> None:
    await create(
        broker, 4, with_configs("bounded", segment_bytes="1024", retention_bytes="1024"), spec("free")
    )
    for _ in range(12):
        for topic in ("bounded", "free"):
            assert (await produce_one(broker, topic, batch([b"z" * 200]))).error_code == ErrorCode.NONE
    logs = broker.broker.logs
    for topic in ("bounded", "free"):
        await logs.get(topic, 0).apply_retention()
    assert logs.get("bounded", 0).log_start_offset > 0
    assert logs.get("free", 0).log_start_offset == 0


async def test_a_change_takes_effect_without_a_restart(broker: InProcessBroker) -> None:
    await create(broker, 4, spec("changing"))
    record = batch([b"v" * 800])
    assert (await produce_one(broker, "changing", record)).error_code == ErrorCode.NONE
    broker.broker.logs.set_topic_overrides("changing", {"max.message.bytes": "500"})
    assert (await produce_one(broker, "changing", record)).error_code == ErrorCode.MESSAGE_TOO_LARGE
    with pytest.raises(ConfigError):
        broker.broker.logs.set_topic_overrides("changing", {"max.message.bytes": "lots"})
    assert broker.broker.logs.config_of("changing").max_message_bytes == 500  # unchanged by the refusal
    broker.restart()
    assert (await produce_one(broker, "changing", record)).error_code == ErrorCode.MESSAGE_TOO_LARGE


@pytest.mark.parametrize(
    ("configs", "words"),
    [
        ({"retention_bytez": "1"}, "retention.bytez"),
        ({"segment_bytes": "lots"}, "segment.bytes"),
        ({"segment_bytes": "1"}, "segment.bytes"),
        ({"cleanup_policy": "foo"}, "cleanup.policy"),
        ({"delete_retention_ms": "-1"}, "delete.retention.ms"),
        ({"file_delete_delay_ms": "-1"}, "file.delete.delay.ms"),
        ({"min_cleanable_dirty_ratio": "1.5"}, "min.cleanable.dirty.ratio"),
        ({"max_compaction_lag_ms": "0"}, "max.compaction.lag.ms"),
        ({"min_compaction_lag_ms": "10", "max_compaction_lag_ms": "5"}, "max.compaction.lag.ms"),
        ({"retention_ms": None}, "Null value"),
    ],
)
@pytest.mark.parametrize("validate_only", [False, True])
async def test_a_bad_setting_is_invalid_config_and_nothing_is_created(
    broker: InProcessBroker, configs: dict[str, str | None], words: str, validate_only: bool
) -> None:
    got = (await create(broker, 4, with_configs("refused", **configs), validate_only=validate_only))[
        "refused"
    ]
    assert got.error_code == ErrorCode.INVALID_CONFIG
    assert words in got.error_message
    assert await partitions_of(broker, "refused") is None
    assert not (broker.data_dir / "refused-0").exists()
    assert not (broker.data_dir / "topic-configs" / "refused.properties").exists()


async def test_validate_only_checks_settings_and_stores_nothing(broker: InProcessBroker) -> None:
    got = (await create(broker, 4, with_configs("dry", retention_ms="1000"), validate_only=True))["dry"]
    assert got.error_code == ErrorCode.NONE
    assert await partitions_of(broker, "dry") is None
    assert broker.broker.logs.topic_configs.overrides("dry") == {}


async def test_log_append_time_stamps_appends_on_the_brokers_clock(broker: InProcessBroker) -> None:
    got = await create(
        broker, 4, with_configs("stamped", message_timestamp_type="LogAppendTime"), spec("own")
    )
    assert {n: t.error_code for n, t in got.items()} == {"stamped": 0, "own": 0}
    clock = broker.broker.clock
    first = await produce_one(broker, "stamped", batch([b"a"], timestamps=[1_000]))
    assert first.error_code == 0 and abs(first.log_append_time_ms - clock.wall_ms()) < 5_000
    clock.advance(3600)  # an hour later, by the broker's clock
    second = await produce_one(broker, "stamped", batch([b"b"], timestamps=[2_000]))
    assert second.log_append_time_ms - first.log_append_time_ms >= 3_600_000
    own = await produce_one(broker, "own", batch([b"c"], timestamps=[3_000]))
    assert own.log_append_time_ms == -1  # CreateTime: the producer's timestamp stays
    fetched = await fetch_one(broker, "stamped", 0)
    stamped = [r for b in kafka_records.MemoryRecords(bytes(fetched.records)) for r in b]
    assert [(r.value, r.timestamp) for r in stamped] == [
        (b"a", first.log_append_time_ms),
        (b"b", second.log_append_time_ms),
    ]
    kept = await fetch_one(broker, "own", 0)
    assert [r.timestamp for b in kafka_records.MemoryRecords(bytes(kept.records)) for r in b] == [3_000]


# --------------------------------------------------------------------------- timestamp bounds

HOUR_MS = 3_600_000


def named_configs(name: str, **configs: str) -> dict[str, Any]:
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
    got = await create(broker, 4, named_configs("recent", **{"message.timestamp.before.max.ms": "60000"}))
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
    await create(broker, 4, named_configs("stamped", **configs))
    ancient = await produce_one(broker, "stamped", batch([b"a"], timestamps=[1_000]))
    assert ancient.error_code == ErrorCode.NONE
    future = await produce_one(broker, "stamped", batch([b"b"], timestamps=[2**62]))
    assert future.error_code == ErrorCode.NONE


async def test_the_broker_setting_is_every_topics_default(make_broker: Any) -> None:
    b = make_broker("log.message.timestamp.after.max.ms=0", "log.message.timestamp.before.max.ms=600000")
    now = b.broker.clock.wall_ms()
    lenient = named_configs("lenient", **{"message.timestamp.after.max.ms": "86400000"})
    await create(b, 4, spec("strict"), lenient)
    ahead = batch([b"a"], timestamps=[now + 60_000])
    assert (await produce_one(b, "strict", ahead)).error_code == ErrorCode.INVALID_TIMESTAMP
    assert (await produce_one(b, "lenient", ahead)).error_code == ErrorCode.NONE
    old = batch([b"a"], timestamps=[now - 3_600_000])
    assert (await produce_one(b, "lenient", old)).error_code == ErrorCode.INVALID_TIMESTAMP
    assert (await produce_one(b, "strict", batch([b"a"], timestamps=[now - 1000]))).error_code == 0


async def test_file_delete_delay_is_accepted_and_kept(broker: InProcessBroker) -> None:
    """Kafka's tools set it; hmb deletes at once (readers keep their descriptors) but keeps the value."""
    got = await create(broker, 4, named_configs("delayed", **{"file.delete.delay.ms": "1000"}))
    assert got["delayed"].error_code == ErrorCode.NONE
    assert broker.broker.logs.config_of("delayed").segment_delete_delay_ms == 1000
    assert broker.broker.logs.topic_configs.overrides("delayed") == {"file.delete.delay.ms": "1000"}


async def test_an_out_of_range_setting_is_invalid_config(broker: InProcessBroker) -> None:
    got = await create(broker, 4, named_configs("neg", **{"message.timestamp.after.max.ms": "-5"}))
    assert got["neg"].error_code == ErrorCode.INVALID_CONFIG


# --------------------------------------------------------------------------- compression.type


def stored_codecs(records: bytes) -> list[int]:
    return [b.compression_type for b in kafka_records.MemoryRecords(records)]


async def test_compression_type_recompresses_batches_and_keeps_what_they_say(broker: InProcessBroker) -> None:
    topics = [
        named_configs(f"c-{t}", **{"compression.type": t}) for t in ("zstd", "uncompressed", "producer")
    ]
    got = await create(broker, 4, *topics)
    assert {t.error_code for t in got.values()} == {ErrorCode.NONE}
    stamps = [1_700_000_000_000 + d for d in (5, 0, 9)]
    for name in ("c-zstd", "c-uncompressed", "c-producer"):
        await produce_one(broker, name, batch([b"a", b"b"], compression=Compression.GZIP))
        sent = batch(
            [b"x", b"y", b"z"],
            timestamps=stamps,
            compression=Compression.LZ4,
            producer_id=9,
            epoch=0,
            sequence=0,
        )
        answer = await produce_one(broker, name, sent)
        assert (answer.error_code, answer.base_offset) == (ErrorCode.NONE, 2)
    expected = {"c-zstd": [4, 4], "c-uncompressed": [0, 0], "c-producer": [1, 3]}
    for name, codecs in expected.items():
        fetched = bytes((await fetch_one(broker, name, 0)).records)
        assert stored_codecs(fetched) == codecs, name
        batches = list(kafka_records.MemoryRecords(fetched))
        assert [(b.producer_id, b.base_sequence) for b in batches] == [(-1, -1), (9, 0)]
        records = [r for b in batches for r in b]
        assert [(r.offset, r.value, r.timestamp) for r in records[2:]] == [
            (2, b"x", stamps[0]),
            (3, b"y", stamps[1]),
            (4, b"z", stamps[2]),
        ]
        assert [r.headers for r in records] == [[("h", b"v")]] * 5


async def test_a_batch_recompressed_past_max_message_bytes_is_refused(broker: InProcessBroker) -> None:
    configs = {"compression.type": "uncompressed", "max.message.bytes": "3000"}
    await create(broker, 4, named_configs("c-small", **configs))
    packed = batch([b"z" * 1000] * 10, compression=Compression.GZIP)
    assert len(packed) < 3000
    answer = await produce_one(broker, "c-small", packed)
    assert answer.error_code == ErrorCode.MESSAGE_TOO_LARGE
    assert (await produce_one(broker, "c-small", batch([b"ok"]))).base_offset == 0
