"""Option parsing and range planning: pure functions, no broker, no Spark."""

from __future__ import annotations

import pytest

from hmb_client.spark.options import OptionError, SinkOptions, SourceOptions, offsets_from_json, offsets_json
from hmb_client.spark.plan import OffsetRange, rate_limit, resolve, split
from hmb_client.structs import TopicPartition

TP = TopicPartition

BOOT = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


def test_spark_kafka_option_names_and_defaults() -> None:
    batch = SourceOptions.parse(
        {**BOOT, "subscribe": "a, b", "kafka.max.partition.fetch.bytes": "65536"}, streaming=False
    )
    assert batch.subscribe == ("a", "b")
    assert (batch.starting, batch.ending) == ("earliest", "latest")
    assert batch.consumer == {"max_partition_fetch_bytes": 65536}
    stream = SourceOptions.parse(
        {**BOOT, "assign": '{"a": [0, 2]}', "maxOffsetsPerTrigger": "10"}, streaming=True
    )
    assert stream.assign == (TP("a", 0), TP("a", 2))
    assert stream.starting == "latest" and stream.max_offsets_per_trigger == 10
    spec = SourceOptions.parse(
        {**BOOT, "subscribe": "a", "startingOffsets": '{"a": {"0": 5, "1": -2}}'}, streaming=False
    )
    assert spec.starting == {TP("a", 0): 5, TP("a", 1): -2}


@pytest.mark.parametrize(
    ("options", "streaming"),
    [
        ({"subscribe": "a"}, False),  # no bootstrap servers
        ({**BOOT}, False),  # no subscribe/assign
        ({**BOOT, "subscribe": "a", "assign": '{"a": [0]}'}, False),  # two strategies
        ({**BOOT, "subscribe": "a", "startingOffsets": "latest"}, False),
        ({**BOOT, "subscribe": "a", "endingOffsets": "earliest"}, False),
        ({**BOOT, "subscribe": "a", "endingOffsets": "latest"}, True),
        ({**BOOT, "subscribe": "a", "startingOffsets": "{oops"}, False),
        ({**BOOT, "subscribe": "a", "maxOffsetsPerTrigger": "0"}, True),
    ],
)
def test_spark_rejects_what_spark_rejects(options: dict[str, str], streaming: bool) -> None:
    with pytest.raises(OptionError):
        SourceOptions.parse(options, streaming=streaming)


def test_sink_options() -> None:
    assert SinkOptions.parse({**BOOT, "topic": "t", "kafka.linger.ms": "20"}) == SinkOptions(
        "127.0.0.1:9092", "t", {"linger_ms": 20}
    )


def test_offsets_json_round_trip() -> None:
    offsets = {TP("a", 0): 3, TP("a", 1): 7, TP("b", 0): 0}
    assert offsets_json(offsets) == {"a": {"0": 3, "1": 7}, "b": {"0": 0}}
    assert offsets_from_json(offsets_json(offsets)) == offsets


def test_resolve_codes_and_completeness() -> None:
    tps = [TP("a", 0), TP("a", 1)]
    earliest, latest = {TP("a", 0): 2, TP("a", 1): 0}, {TP("a", 0): 10, TP("a", 1): 4}
    assert resolve("earliest", tps, earliest, latest, name="s") == earliest
    assert resolve({TP("a", 0): -2, TP("a", 1): -1}, tps, earliest, latest, name="s") == {
        TP("a", 0): 2,
        TP("a", 1): 4,
    }
    assert resolve({TP("a", 0): 5, TP("a", 1): 1}, tps, earliest, latest, name="s") == {
        TP("a", 0): 5,
        TP("a", 1): 1,
    }
    with pytest.raises(OptionError):
        resolve({TP("a", 0): 5}, tps, earliest, latest, name="s")


def test_split_caps_size_and_honours_min_partitions() -> None:
    ranges = [OffsetRange("a", 0, 0, 1000), OffsetRange("a", 1, 10, 10), OffsetRange("a", 2, 0, 100)]
    capped = split(ranges, None, 300)
    assert [r.size for r in capped] == [250, 250, 250, 250, 100]
    assert capped[0].start == 0 and capped[3].end == 1000
    spread = split(ranges, 11, None)
    assert [r.partition for r in spread].count(0) == 10 and sum(r.size for r in spread) == 1100
    assert split(ranges, None, None) == [ranges[0], ranges[2]]  # empty ranges make no task


def test_rate_limit_shares_by_backlog() -> None:
    start = {TP("a", 0): 0, TP("a", 1): 0, TP("a", 2): 5}
    latest = {TP("a", 0): 900, TP("a", 1): 100, TP("a", 2): 5}
    assert rate_limit(start, latest, 100) == {TP("a", 0): 90, TP("a", 1): 10, TP("a", 2): 5}
    assert rate_limit(start, latest, 10_000) == latest
    small = rate_limit({TP("a", 0): 0, TP("a", 1): 0}, {TP("a", 0): 1000, TP("a", 1): 1}, 10)
    assert small[TP("a", 1)] == 1  # a share below one still moves
