"""DescribeTransactions v0 in process: a transactional id's state as Kafka's tools print it.

What can fail: an unknown id described as existing, a state under another
name than Kafka's, the producer or timeout of another id.
"""

from __future__ import annotations

from kproto import ApiKey, ErrorCode

from . import txn
from .harness import InProcessBroker


async def test_describe_states_and_unknown_ids(broker: InProcessBroker) -> None:
    await txn.topic(broker, "d")
    p = await txn.producer(broker, "tx-d", timeout_ms=12_345)
    empty = await txn.describe(broker, "tx-d")
    assert (empty.error_code, empty.transaction_state, empty.transaction_timeout_ms) == (0, "Empty", 12_345)
    assert (empty.producer_id, empty.producer_epoch, empty.transaction_start_time_ms) == (
        p.producer_id,
        0,
        -1,
    )
    await p.add("d")
    ongoing = await txn.describe(broker, "tx-d")
    assert ongoing.transaction_state == "Ongoing" and ongoing.transaction_start_time_ms > 0
    assert [(t.topic, list(t.partitions)) for t in ongoing.topics] == [("d", [0])]
    resp = await broker.request(ApiKey.DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": ["nope", "tx-d"]})
    codes = [(s.transactional_id, s.error_code) for s in resp.transaction_states]
    assert codes == [("nope", ErrorCode.TRANSACTIONAL_ID_NOT_FOUND), ("tx-d", ErrorCode.NONE)]
