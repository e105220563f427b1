"""DescribeConfigs v1-v4 in process: every setting of a topic or the broker, and where it comes from.

v1 adds synonyms and sources, v3 config types and documentation, v4 is
flexible.  What a tool relies on: a topic's override reported with source 1
and the broker's values behind it; a topic without overrides reporting the
broker's values; unknown topics and other brokers refused per resource.
"""

from __future__ import annotations

from typing import Any

import pytest

from kproto import ErrorCode

from .bodies import create, spec
from .configs import BROKER, BROKER_LOGGER, TOPIC, describe, values_of
from .harness import InProcessBroker


@pytest.fixture
def broker(make_broker: Any) -> InProcessBroker:
    return make_broker("log.retention.hours=24")


async def topics(b: InProcessBroker) -> None:
    own = {**spec("own"), "configs": [{"name": "retention.ms", "value": "5000"}]}
    got = await create(b, 4, own, spec("plain"))
    assert {n: t.error_code for n, t in got.items()} == {"own": 0, "plain": 0}


@pytest.mark.parametrize("version", [1, 2, 3, 4])
async def test_a_topic_reports_its_settings_with_their_sources(broker: InProcessBroker, version: int) -> None:
    await topics(broker)
    own = await describe(broker, TOPIC, "own", version=version)
    assert own.error_code == ErrorCode.NONE
    assert values_of(own)["retention.ms"] == ("5000", 1)  # DYNAMIC_TOPIC_CONFIG
    assert values_of(own)["segment.bytes"] == ("1073741824", 5)  # DEFAULT_CONFIG
    retention = next(c for c in own.configs if c.name == "retention.ms")
    assert [(s.name, s.value, s.source) for s in retention.synonyms] == [
        ("retention.ms", "5000", 1),
        ("log.retention.hours", "24", 4),
        ("log.retention.ms", "604800000", 5),
    ]
    assert not retention.read_only and not retention.is_sensitive
    if version >= 3:
        assert retention.config_type == 5  # LONG
        assert retention.documentation
    plain = await describe(broker, TOPIC, "plain", version=version)
    assert values_of(plain)["retention.ms"] == (str(24 * 3_600_000), 4)  # STATIC_BROKER_CONFIG


async def test_keys_synonyms_and_documentation_are_only_sent_when_asked(broker: InProcessBroker) -> None:
    await topics(broker)
    some = await describe(
        broker, TOPIC, "own", ["retention.ms", "cleanup.policy"], synonyms=False, documentation=False
    )
    assert sorted(c.name for c in some.configs) == ["cleanup.policy", "retention.ms"]
    assert all(not c.synonyms and c.documentation is None for c in some.configs)


async def test_the_broker_and_the_cluster_default(broker: InProcessBroker) -> None:
    this = await describe(broker, BROKER, "0")
    assert this.error_code == ErrorCode.NONE
    by_name = {c.name: c for c in this.configs}
    assert (by_name["log.retention.ms"].value, by_name["log.retention.ms"].config_source) == (
        str(24 * 3_600_000),
        4,
    )
    assert by_name["log.dirs"].read_only and not by_name["log.retention.ms"].read_only
    assert (by_name["num.partitions"].value, by_name["num.partitions"].config_source) == ("1", 5)
    default = await describe(broker, BROKER, "")
    assert default.error_code == ErrorCode.NONE and list(default.configs) == []  # nothing set at run time yet


async def test_refusals_are_per_resource(broker: InProcessBroker) -> None:
    missing = await describe(broker, TOPIC, "missing")
    assert missing.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION and list(missing.configs) == []
    other = await describe(broker, BROKER, "7")
    assert other.error_code == ErrorCode.INVALID_REQUEST
    assert "expected 0 or empty string, but received 7" in other.error_message
    logger = await describe(broker, BROKER_LOGGER, "0")
    assert logger.error_code == ErrorCode.INVALID_REQUEST
