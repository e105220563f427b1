"""AddPartitionsToTxn v0-v5 in process: partitions join a transaction, or nothing does.

v0-v3 carry one transaction (v2: PRODUCER_FENCED for a stale epoch, older
versions INVALID_PRODUCER_EPOCH; v3 flexible); v4+ batch transactions and
add ``verify_only`` (the brokers' API).  What can fail: a partition added
for a stale epoch or an unknown producer, a request with one bad partition
half applied, verify-only changing the transaction.
"""

from __future__ import annotations

import pytest

from kproto import ApiKey, ErrorCode

from . import txn
from .harness import InProcessBroker

ADD = ApiKey.ADD_PARTITIONS_TO_TXN


@pytest.mark.parametrize("version", [0, 1, 2, 3])
async def test_partitions_join_and_the_transaction_is_ongoing(broker: InProcessBroker, version: int) -> None:
    await txn.topic(broker, "a", partitions=2)
    p = await txn.producer(broker, "tx-add")
    assert await p.add("a", 0, 1, version=version) == {("a", 0): 0, ("a", 1): 0}
    assert await p.add("a", 1, version=version) == {("a", 1): 0}  # again: still fine
    state = await txn.describe(broker, "tx-add")
    assert state.transaction_state == "Ongoing" and state.transaction_start_time_ms > 0
    assert [(t.topic, list(t.partitions)) for t in state.topics] == [("a", [0, 1])]


@pytest.mark.parametrize(
    ("version", "fenced"), [(1, ErrorCode.INVALID_PRODUCER_EPOCH), (2, ErrorCode.PRODUCER_FENCED)]
)
async def test_a_stale_epoch_or_unknown_producer_adds_nothing(
    broker: InProcessBroker, version: int, fenced: int
) -> None:
    await txn.topic(broker, "a")
    old = await txn.producer(broker, "tx-stale")
    new = await txn.producer(broker, "tx-stale")
    assert await old.add("a", version=version) == {("a", 0): fenced}
    codes = await txn.add_partitions(broker, "tx-none", new.producer_id, 0, "a", [0], version)
    assert codes == {("a", 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}
    codes = await txn.add_partitions(broker, "tx-stale", new.producer_id + 1, new.epoch, "a", [0], version)
    assert codes == {("a", 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}
    assert (await txn.describe(broker, "tx-stale")).transaction_state == "Empty"


async def test_an_unknown_partition_fails_the_request_whole(broker: InProcessBroker) -> None:
    await txn.topic(broker, "a")
    p = await txn.producer(broker, "tx-unknown")
    codes = await p.add("a", 0, 7)
    assert codes == {
        ("a", 0): ErrorCode.OPERATION_NOT_ATTEMPTED,
        ("a", 7): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    }
    state = await txn.describe(broker, "tx-unknown")
    assert (state.transaction_state, list(state.topics)) == ("Empty", [])


def _batched(tid: str, pid: int, epoch: int, topic: str, verify_only: bool) -> dict[str, object]:
    return {
        "transactions": [
            {
                "transactional_id": tid,
                "producer_id": pid,
                "producer_epoch": epoch,
                "verify_only": verify_only,
                "topics": [{"name": topic, "partitions": [0, 1]}],
            }
        ]
    }


@pytest.mark.parametrize("version", [4, 5])
async def test_batched_and_verify_only(broker: InProcessBroker, version: int) -> None:
    await txn.topic(broker, "b", partitions=2)
    p = await txn.producer(broker, "tx-v")
    await p.add("b", 0)
    resp = await broker.request(ADD, version, _batched("tx-v", p.producer_id, p.epoch, "b", True))
    assert resp.error_code == ErrorCode.NONE
    [result] = resp.results_by_transaction
    codes = {r.partition_index: r.partition_error_code for r in result.topic_results[0].results_by_partition}
    assert codes == {0: ErrorCode.NONE, 1: ErrorCode.INVALID_TXN_STATE}
    assert [list(t.partitions) for t in (await txn.describe(broker, "tx-v")).topics] == [[0]]
    resp = await broker.request(ADD, version, _batched("tx-v", p.producer_id, p.epoch, "b", False))
    codes = {
        r.partition_index: r.partition_error_code
        for r in resp.results_by_transaction[0].topic_results[0].results_by_partition
    }
    assert codes == {0: ErrorCode.NONE, 1: ErrorCode.NONE}
    assert [list(t.partitions) for t in (await txn.describe(broker, "tx-v")).topics] == [[0, 1]]
