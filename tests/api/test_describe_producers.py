"""DescribeProducers v0 in process: each partition's active idempotent producers.

What can fail: a producer missing or with a stale epoch or sequence, a
timestamp that is not its last batch's, an open transaction's start offset
or the last marker's coordinator epoch not reported, state that is not
rebuilt after a restart, an unknown partition answered NONE.
"""

from __future__ import annotations

from typing import Any

from kproto import ApiKey, ErrorCode

from .bodies import batch, create, new_producer_id, produce_one, spec
from .harness import InProcessBroker

DESCRIBE_PRODUCERS = ApiKey.DESCRIBE_PRODUCERS
T0 = 1_700_000_000_000


async def describe(b: InProcessBroker, topics: dict[str, list[int]]) -> dict[tuple[str, int], Any]:
    body = {"topics": [{"name": t, "partition_indexes": ps} for t, ps in topics.items()]}
    resp = await b.request(DESCRIBE_PRODUCERS, 0, body)
    assert resp.throttle_time_ms == 0
    return {(t.name, p.partition_index): p for t in resp.topics for p in t.partitions}


def producers(p: Any) -> list[tuple[int, int, int, int, int, int]]:
    assert (p.error_code, p.error_message) == (ErrorCode.NONE, None)
    return [
        (
            a.producer_id,
            a.producer_epoch,
            a.last_sequence,
            a.last_timestamp,
            a.coordinator_epoch,
            a.current_txn_start_offset,
        )
        for a in p.active_producers
    ]


async def test_active_producers_per_partition(broker: InProcessBroker) -> None:
    await create(broker, 0, spec("idem", 2))
    first, second = await new_producer_id(broker), await new_producer_id(broker)
    sends = [
        (first, 0, [b"a", b"b"], [T0, T0 + 5]),
        (first, 2, [b"c"], [T0 + 9]),
        (second, 0, [b"d", b"e", b"f"], [T0 + 1, T0 + 20, T0 + 3]),
    ]
    for pid, seq, values, stamps in sends:
        rec = batch(values, timestamps=stamps, producer_id=pid, epoch=0, sequence=seq)
        assert (await produce_one(broker, "idem", rec)).error_code == 0
    plain = batch([b"plain"])  # not idempotent: not a producer of the partition
    assert (await produce_one(broker, "idem", plain, partition=1)).error_code == 0
    expected = [(first, 0, 2, T0 + 9, -1, -1), (second, 0, 2, T0 + 20, -1, -1)]
    out = await describe(broker, {"idem": [0, 1, 5], "ghost": [0]})
    assert producers(out[("idem", 0)]) == expected
    assert producers(out[("idem", 1)]) == []
    for key in (("idem", 5), ("ghost", 0)):
        assert out[key].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert list(out[key].active_producers) == []
    broker.restart()  # the state comes back from the log's batch headers
    assert producers((await describe(broker, {"idem": [0]}))[("idem", 0)]) == expected


async def test_transactional_producers_report_their_transaction(broker: InProcessBroker) -> None:
    """current_txn_start_offset while a transaction is open, the marker's coordinator epoch after."""
    await produce_one(broker, "txn-desc", batch([b"plain"]))  # offset 0
    plog = broker.broker.logs.get("txn-desc", 0)
    assert plog is not None
    pid, other = await new_producer_id(broker), await new_producer_id(broker)
    await plog.append(
        batch([b"t"], timestamps=[T0], producer_id=pid, epoch=0, sequence=0, transactional=True)
    )
    await plog.append(
        batch([b"u"], timestamps=[T0], producer_id=other, epoch=0, sequence=0, transactional=True)
    )
    await plog.append_marker(other, 0, commit=True, coordinator_epoch=7)
    expected = [(pid, 0, 0, T0, -1, 1), (other, 0, 0, T0, 7, -1)]
    assert producers((await describe(broker, {"txn-desc": [0]}))[("txn-desc", 0)]) == expected
    broker.restart()  # both come back from the clean-shutdown snapshot
    assert producers((await describe(broker, {"txn-desc": [0]}))[("txn-desc", 0)]) == expected
