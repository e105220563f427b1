"""``__consumer_offsets`` is compacted and never deleted by retention, as Kafka's is: a
group's latest commits survive any retention setting, and cleaning keeps them while the
commits they replaced go."""

from __future__ import annotations

from typing import Any

from hmb.groups.offsets import TOPIC, CommitEntry

from .harness import InProcessBroker

FAR_FUTURE_S = 10**10


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
