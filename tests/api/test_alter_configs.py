"""AlterConfigs v0-v2 in process: a resource's settings replaced as a whole.

v1 adds nothing a broker answers differently, v2 is flexible.  What a tool
relies on: the change takes effect at once and survives a restart; a
setting left out goes back to the layer below; a refused resource (an
unknown topic config, a bad value, a setting that cannot change at run time)
changes nothing.
"""

from __future__ import annotations

import pytest

from kproto import ErrorCode

from .bodies import create, spec
from .configs import BROKER, TOPIC, alter, describe, values_of
from .harness import InProcessBroker


@pytest.mark.parametrize("version", [0, 1, 2])
async def test_a_topic_change_applies_at_once_and_replaces_the_whole_set(
    broker: InProcessBroker, version: int
) -> None:
    await create(broker, 4, {**spec("t"), "configs": [{"name": "retention.ms", "value": "5000"}]})
    changed = await alter(broker, TOPIC, "t", {"max.message.bytes": "500"}, version=version)
    assert (changed.error_code, changed.error_message) == (ErrorCode.NONE, None)
    now = values_of(await describe(broker, TOPIC, "t"))
    assert now["max.message.bytes"] == ("500", 1)
    assert now["retention.ms"][1] == 5  # not listed: back to the broker's value
    assert broker.broker.logs.get("t", 0).config.max_message_bytes == 500
    broker.restart()
    assert values_of(await describe(broker, TOPIC, "t"))["max.message.bytes"] == ("500", 1)


async def test_validate_only_and_refusals_change_nothing(broker: InProcessBroker) -> None:
    await create(broker, 4, spec("t"))
    dry = await alter(broker, TOPIC, "t", {"retention.ms": "1"}, validate_only=True)
    assert dry.error_code == ErrorCode.NONE
    for configs, code in [
        ({"retention.msx": "1"}, ErrorCode.INVALID_CONFIG),
        ({"retention.ms": "soon"}, ErrorCode.INVALID_CONFIG),
        ({"retention.ms": None}, ErrorCode.INVALID_REQUEST),
    ]:
        refused = await alter(broker, TOPIC, "t", configs)
        assert refused.error_code == code and refused.error_message
    assert all(source == 5 for _v, source in values_of(await describe(broker, TOPIC, "t")).values())
    missing = await alter(broker, TOPIC, "missing", {"retention.ms": "1"})
    assert missing.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


async def test_the_broker_takes_only_what_can_change_at_run_time(broker: InProcessBroker) -> None:
    await create(broker, 4, spec("t"))
    fixed = await alter(broker, BROKER, "0", {"log.dirs": "/x", "log.retention.ms": "1000"})
    assert fixed.error_code == ErrorCode.INVALID_REQUEST
    assert "Cannot update these configs dynamically: Set(log.dirs)" in fixed.error_message
    ok = await alter(broker, BROKER, "", {"log.retention.ms": "1000"})
    assert ok.error_code == ErrorCode.NONE
    assert values_of(await describe(broker, TOPIC, "t"))["retention.ms"] == ("1000", 3)
    assert broker.broker.logs.get("t", 0).config.retention_ms == 1000
