"""Per-topic settings, in process: given at CreateTopics, checked, stored, honoured per topic.

A topic created with ``retention.bytes``, ``segment.bytes`` or
``max.message.bytes`` obeys its own values while other topics keep the
broker's defaults; ``message.timestamp.type=LogAppendTime`` stamps appends
with the broker's clock; the settings survive a restart; a change takes
effect without one; a bad setting (unknown, malformed, null, out of range) is
INVALID_CONFIG and nothing is created.
"""

from __future__ import annotations

from typing import Any

import kafka.record as kafka_records
import pytest

from hmb.config import ConfigError
from kproto import ErrorCode

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
