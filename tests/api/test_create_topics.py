"""CreateTopics v0-v7 in process: Kafka's per-topic error codes, at every version boundary.

v1 adds validate_only and error messages, v2 throttle_time_ms, v4 "-1 means
the broker's default" for the partition count and replication factor.  What
can fail: a client maps these codes to exceptions, so a wrong one is a wrong
exception; validate_only creating anyway; an unbounded request making
directories until the disk is full.
"""

from __future__ import annotations

from typing import Any

import pytest

from hmb.api.create_topics import EXCESSIVE_BATCH
from kproto import ApiKey, ErrorCode

from .bodies import create, partitions_of, spec
from .harness import InProcessBroker

CREATE = ApiKey.CREATE_TOPICS


@pytest.fixture
def broker(make_broker: Any) -> InProcessBroker:
    return make_broker("num.partitions=2")


@pytest.mark.parametrize("version", range(5))
async def test_create_topics_per_version(broker: InProcessBroker, version: int) -> None:
    ok, dup = f"ct{version}-ok", f"ct{version}-exists"
    await create(broker, version, spec(dup))
    got = await create(
        broker,
        version,
        spec(ok, 4),
        spec(dup),
        spec("bad name!"),
        spec(f"ct{version}-zero", 0),
        spec(f"ct{version}-rf3", 1, 3),
        spec(f"ct{version}-rf0", 1, 0),
    )
    codes = {name: t.error_code for name, t in got.items()}
    assert codes == {
        ok: ErrorCode.NONE,
        dup: ErrorCode.TOPIC_ALREADY_EXISTS,
        "bad name!": ErrorCode.INVALID_TOPIC_EXCEPTION,
        f"ct{version}-zero": ErrorCode.INVALID_PARTITIONS,
        f"ct{version}-rf3": ErrorCode.INVALID_REPLICATION_FACTOR,
        f"ct{version}-rf0": ErrorCode.INVALID_REPLICATION_FACTOR,
    }
    if version >= 1:
        assert got[ok].error_message is None
        assert "already exists" in got[dup].error_message
    assert await partitions_of(broker, ok) == 4
    assert sorted(p.name for p in broker.data_dir.iterdir() if p.name.startswith(ok)) == [
        f"{ok}-{p}" for p in range(4)
    ]
    for refused in ("zero", "rf3", "rf0"):
        assert await partitions_of(broker, f"ct{version}-{refused}") is None
    # -1 means "the broker's default" in every version (Kafka 4.x; KafkaJS sends it with v3)
    default = (await create(broker, version, spec(f"ct{version}-default", -1, -1)))[f"ct{version}-default"]
    assert default.error_code == 0 and await partitions_of(broker, f"ct{version}-default") == 2
    factor_only = (await create(broker, version, spec(f"ct{version}-rf-1", 3, -1)))[f"ct{version}-rf-1"]
    assert factor_only.error_code == 0 and await partitions_of(broker, f"ct{version}-rf-1") == 3


async def test_create_topics_validate_only_duplicates_and_assignments(broker: InProcessBroker) -> None:
    got = await create(broker, 1, spec("ct-validate", 3), validate_only=True)
    assert got["ct-validate"].error_code == 0 and await partitions_of(broker, "ct-validate") is None
    assert (await create(broker, 1, spec("ct-exists-v", 1)))["ct-exists-v"].error_code == 0
    again = (await create(broker, 1, spec("ct-exists-v"), validate_only=True))["ct-exists-v"]
    assert again.error_code == ErrorCode.TOPIC_ALREADY_EXISTS
    resp = await broker.request(
        CREATE,
        3,
        {"topics": [spec("ct-twice"), spec("ct-twice", 2)], "timeout_ms": 1000, "validate_only": False},
    )
    assert [t.error_code for t in resp.topics] == [ErrorCode.INVALID_REQUEST] * 2
    assert await partitions_of(broker, "ct-twice") is None
    assigned = (await create(broker, 4, spec("ct-assigned", -1, -1, [[0], [0], [0]])))["ct-assigned"]
    assert assigned.error_code == 0 and await partitions_of(broker, "ct-assigned") == 3
    elsewhere = (await create(broker, 4, spec("ct-elsewhere", -1, -1, [[0], [7]])))["ct-elsewhere"]
    assert elsewhere.error_code == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    numbered_from_1 = {**spec("ct-gap", -1, -1), "assignments": [{"partition_index": 1, "broker_ids": [0]}]}
    gap = (await create(broker, 4, numbered_from_1))["ct-gap"]
    assert gap.error_code == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    both = (await create(broker, 4, spec("ct-both", 2, 1, [[0]])))["ct-both"]
    assert both.error_code == ErrorCode.INVALID_REQUEST


async def test_validate_only_is_ignored_before_v1(broker: InProcessBroker) -> None:
    """v0 has no validate_only field: the topic is created."""
    got = await create(broker, 0, spec("ct-v0-validate", 1), validate_only=True)
    assert got["ct-v0-validate"].error_code == 0 and await partitions_of(broker, "ct-v0-validate") == 1


async def test_create_topics_bounded_like_kafka(broker: InProcessBroker) -> None:
    """More than Kafka's 10 000 records per request: every topic refused, nothing created."""
    got = await create(broker, 4, spec("ct-huge", 2**31 - 1), spec("ct-small", 1))
    for name in ("ct-huge", "ct-small"):
        assert (got[name].error_code, got[name].error_message) == (
            ErrorCode.POLICY_VIOLATION,
            EXCESSIVE_BATCH,
        )
        assert await partitions_of(broker, name) is None


async def test_a_failed_create_is_a_storage_error(broker: InProcessBroker) -> None:
    (broker.data_dir / "ct-blocked-0").write_text("a file where the partition directory goes")
    got = (await create(broker, 4, spec("ct-blocked", 1)))["ct-blocked"]
    assert got.error_code == ErrorCode.KAFKA_STORAGE_ERROR and got.error_message


@pytest.mark.parametrize("version", [5, 6, 7])
async def test_v5_answers_what_the_topic_was_made_with(broker: InProcessBroker, version: int) -> None:
    with_config = {**spec(f"ct{version}-made", 3), "configs": [{"name": "retention.ms", "value": "5000"}]}
    got = await create(broker, version, with_config, spec(f"ct{version}-bad", 0))
    made = got[f"ct{version}-made"]
    assert (made.error_code, made.num_partitions, made.replication_factor) == (0, 3, 1)
    configs = {c.name: (c.value, c.config_source, c.read_only) for c in made.configs}
    assert configs["retention.ms"] == ("5000", 1, False)  # the topic's own setting
    assert configs["segment.bytes"][1] == 5  # the broker's default
    bad = got[f"ct{version}-bad"]
    assert (bad.num_partitions, bad.replication_factor, list(bad.configs)) == (-1, -1, [])
    if version >= 7:
        assert made.topic_id == broker.broker.logs.topic_ids[f"ct{version}-made"] != bytes(16)
    dry = (await create(broker, version, spec(f"ct{version}-dry", 2), validate_only=True))[f"ct{version}-dry"]
    assert (dry.error_code, dry.num_partitions) == (0, 2) and dry.configs
    if version >= 7:
        assert dry.topic_id == bytes(16)  # only validated: no topic, no id
