"""IncrementalAlterConfigs v0-v1 in process: SET, DELETE, APPEND and SUBTRACT on a resource.

v1 is flexible.  What a tool relies on: the settings not named keep their
values; APPEND and SUBTRACT work on list settings, starting from the value in
force; everything else about a change is refused whole, with Kafka's codes.
"""

from __future__ import annotations

import pytest

from kproto import ErrorCode

from .bodies import create, spec
from .configs import APPEND, BROKER, DELETE, SET, SUBTRACT, TOPIC, describe, incremental, values_of
from .harness import InProcessBroker


@pytest.mark.parametrize("version", [0, 1])
async def test_set_delete_append_subtract(broker: InProcessBroker, version: int) -> None:
    await create(broker, 4, {**spec("t"), "configs": [{"name": "retention.ms", "value": "5000"}]})
    done = await incremental(broker, TOPIC, "t", [("segment.bytes", SET, "4096")], version=version)
    assert done.error_code == ErrorCode.NONE
    now = values_of(await describe(broker, TOPIC, "t"))
    assert now["segment.bytes"] == ("4096", 1) and now["retention.ms"] == ("5000", 1)  # kept
    await incremental(broker, TOPIC, "t", [("retention.ms", DELETE, None)], version=version)
    assert values_of(await describe(broker, TOPIC, "t"))["retention.ms"][1] == 5
    await incremental(broker, TOPIC, "t", [("cleanup.policy", APPEND, "compact")], version=version)
    assert values_of(await describe(broker, TOPIC, "t"))["cleanup.policy"] == ("delete,compact", 1)
    await incremental(broker, TOPIC, "t", [("cleanup.policy", SUBTRACT, "delete")], version=version)
    assert values_of(await describe(broker, TOPIC, "t"))["cleanup.policy"] == ("compact", 1)
    assert broker.broker.logs.get("t", 0).config.segment_bytes == 4096


async def test_refusals_change_nothing(broker: InProcessBroker) -> None:
    await create(broker, 4, spec("t"))
    cases = [
        ([("segment.bytes", APPEND, "1")], ErrorCode.INVALID_REQUEST, "append is not allowed"),
        ([("segment.bytes", SET, "1"), ("segment.bytes", SET, "2")], ErrorCode.INVALID_REQUEST, "duplicate"),
        ([("segment.bytes", 9, "1")], ErrorCode.INVALID_REQUEST, "Unknown config operation"),
        (
            [("retention.ms", SET, "x"), ("segment.bytes", SET, "4096")],
            ErrorCode.INVALID_CONFIG,
            "retention.ms",
        ),
        ([("cleanup.policy", SET, "foo")], ErrorCode.INVALID_CONFIG, "cleanup.policy"),
    ]
    for ops, code, words in cases:
        refused = await incremental(broker, TOPIC, "t", ops)
        assert refused.error_code == code and words in refused.error_message, refused.error_message
    assert all(source == 5 for _v, source in values_of(await describe(broker, TOPIC, "t")).values())
    dry = await incremental(broker, TOPIC, "t", [("segment.bytes", SET, "4096")], validate_only=True)
    assert dry.error_code == ErrorCode.NONE
    assert values_of(await describe(broker, TOPIC, "t"))["segment.bytes"][1] == 5


async def test_a_dynamic_broker_default_and_its_removal(broker: InProcessBroker) -> None:
    await create(broker, 4, spec("t"))
    assert (await incremental(broker, BROKER, "0", [("log.segment.bytes", SET, "8192")])).error_code == 0
    assert values_of(await describe(broker, TOPIC, "t"))["segment.bytes"] == ("8192", 2)
    assert (await incremental(broker, BROKER, "0", [("log.segment.bytes", DELETE, None)])).error_code == 0
    assert values_of(await describe(broker, TOPIC, "t"))["segment.bytes"][1] == 5
    fixed = await incremental(broker, BROKER, "0", [("num.partitions", SET, "3")])
    assert fixed.error_code == ErrorCode.INVALID_REQUEST
