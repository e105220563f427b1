"""Transaction version 2 (KIP-890 part 2) in process: Produce v12, EndTxn v5, TxnOffsetCommit v5.

A client of the second transaction protocol never sends AddPartitionsToTxn
or AddOffsetsToTxn: its first write to a partition (or its first offsets of
a group) adds them, and every EndTxn bumps the epoch and answers the
producer id and epoch of the next transaction.  What can fail: a v12 batch
refused where v11 needs an explicit add, a late batch of the previous
transaction accepted under the same epoch, a retried EndTxn answered as an
error, a zombie adding partitions, offsets committed outside their
transaction.
"""

from __future__ import annotations

from typing import Any

import pytest

from kproto import ApiKey, ErrorCode

from . import txn
from .bodies import fetch_one
from .groups import fetch_offset
from .harness import InProcessBroker
from .test_txn_offset_commit import commit_body, commit_code

PRODUCE_V2 = 12
END_V2 = 5


async def end_v2(p: txn.Txn, commit: bool, epoch: int | None = None, producer_id: int | None = None) -> Any:
    """EndTxn v5 as ``p`` (or with another epoch/id): the whole answer."""
    body = {
        "transactional_id": p.tid,
        "producer_id": p.producer_id if producer_id is None else producer_id,
        "producer_epoch": p.epoch if epoch is None else epoch,
        "committed": commit,
    }
    return await p.b.request(ApiKey.END_TXN, END_V2, body)


async def next_transaction(p: txn.Txn, commit: bool) -> None:
    """End ``p``'s transaction with EndTxn v5 and take the epoch it answers, as a client does."""
    resp = await end_v2(p, commit)
    assert resp.error_code == ErrorCode.NONE, ErrorCode(resp.error_code).name
    p.producer_id, p.epoch, p.sequence = int(resp.producer_id), int(resp.producer_epoch), 0


def _plog(b: InProcessBroker, topic: str, partition: int = 0) -> Any:
    plog = b.broker.logs.get(topic, partition)
    assert plog is not None
    return plog


async def test_produce_v12_adds_the_partition_to_the_transaction(broker: InProcessBroker) -> None:
    await txn.topic(broker, "v2", partitions=2)
    p = await txn.producer(broker, "tx-v2")
    old = await p.produce("v2", [b"no add"], version=11)
    assert old.error_code == ErrorCode.INVALID_TXN_STATE  # v11: the client must add it itself
    p.sequence = 0
    for partition in (0, 1):
        answer = await p.produce("v2", [b"a", b"b"], partition=partition, version=PRODUCE_V2)
        assert (answer.error_code, answer.base_offset) == (ErrorCode.NONE, 0)
        p.sequence = 0
    state = await txn.describe(broker, "tx-v2")
    assert state.transaction_state == "Ongoing"
    assert sorted((t.topic, sorted(t.partitions)) for t in state.topics) == [("v2", [0, 1])]
    assert _plog(broker, "v2").last_stable_offset == 0  # open: read_committed stops before it


async def test_produce_v12_of_an_unknown_or_fenced_producer_adds_nothing(broker: InProcessBroker) -> None:
    await txn.topic(broker, "z")
    zombie = await txn.producer(broker, "tx-z")
    await txn.producer(broker, "tx-z")
    late = await zombie.produce("z", [b"late"], version=PRODUCE_V2)
    assert late.error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    other = await txn.producer(broker, "tx-other")
    stranger = txn.Txn(broker, "tx-z", other.producer_id, other.epoch)  # another id's producer
    refused = await stranger.produce("z", [b"x"], version=PRODUCE_V2)
    assert refused.error_code == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert (await txn.describe(broker, "tx-z")).transaction_state == "Empty"
    assert (await fetch_one(broker, "z", 0)).high_watermark == 0


@pytest.mark.parametrize("commit", [True, False])
async def test_end_txn_v5_bumps_the_epoch_and_the_markers_carry_it(
    broker: InProcessBroker, commit: bool
) -> None:
    await txn.topic(broker, "e")
    p = await txn.producer(broker, "tx-e")
    first = p.epoch
    assert (await p.produce("e", [b"one"], version=PRODUCE_V2)).error_code == ErrorCode.NONE
    resp = await end_v2(p, commit)
    answer = (resp.error_code, resp.producer_id, resp.producer_epoch)
    assert answer == (ErrorCode.NONE, p.producer_id, first + 1)
    plog = _plog(broker, "e")
    assert (plog.high_watermark, plog.last_stable_offset) == (2, 2)  # the record and its marker
    assert plog.aborted_transactions(0, 2) == ([] if commit else [(p.producer_id, 0)])
    state = await txn.describe(broker, "tx-e")
    assert (state.transaction_state, state.producer_epoch) == (
        "CompleteCommit" if commit else "CompleteAbort",
        first + 1,
    )
    # the previous transaction's epoch is fenced: a late batch of it is not taken into the next one
    p.sequence = 1
    late = await p.produce("e", [b"late"], version=PRODUCE_V2)
    assert late.error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    p.epoch, p.sequence = first + 1, 0
    assert (await p.produce("e", [b"two"], version=PRODUCE_V2)).error_code == ErrorCode.NONE
    assert (await txn.describe(broker, "tx-e")).transaction_state == "Ongoing"


async def test_a_retried_end_txn_v5_gets_the_same_answer(broker: InProcessBroker) -> None:
    await txn.topic(broker, "r")
    p = await txn.producer(broker, "tx-r")
    assert (await p.produce("r", [b"x"], version=PRODUCE_V2)).error_code == ErrorCode.NONE
    first = await end_v2(p, True)
    again = await end_v2(p, True)  # the answer was lost: the client sends it again, same epoch
    assert (again.error_code, again.producer_id, again.producer_epoch) == (
        ErrorCode.NONE,
        first.producer_id,
        first.producer_epoch,
    )
    assert (await end_v2(p, False)).error_code == ErrorCode.INVALID_TXN_STATE  # not what was done
    assert _plog(broker, "r").high_watermark == 2  # one marker, not two
    assert (await end_v2(p, True, epoch=p.epoch - 1)).error_code == ErrorCode.PRODUCER_FENCED
    assert (await end_v2(p, True, producer_id=p.producer_id + 7)).error_code == (
        ErrorCode.INVALID_PRODUCER_ID_MAPPING
    )


async def test_end_txn_v5_aborts_a_transaction_that_wrote_nothing(broker: InProcessBroker) -> None:
    p = await txn.producer(broker, "tx-empty")
    assert (await end_v2(p, True)).error_code == ErrorCode.INVALID_TXN_STATE  # nothing to commit
    resp = await end_v2(p, False)
    assert (resp.error_code, resp.producer_epoch) == (ErrorCode.NONE, p.epoch + 1)
    state = await txn.describe(broker, "tx-empty")
    assert (state.transaction_state, state.producer_epoch) == ("CompleteAbort", p.epoch + 1)
    assert list(state.topics) == []


async def test_transactions_run_one_after_another_each_with_its_epoch(broker: InProcessBroker) -> None:
    await txn.topic(broker, "seq")
    p = await txn.producer(broker, "tx-seq")
    start = p.epoch
    for round_ in range(3):
        assert (await p.produce("seq", [b"r%d" % round_], version=PRODUCE_V2)).error_code == ErrorCode.NONE
        await next_transaction(p, commit=round_ != 1)
    assert p.epoch == start + 3
    plog = _plog(broker, "seq")
    assert (plog.high_watermark, plog.last_stable_offset) == (6, 6)
    assert plog.aborted_transactions(0, 6) == [(p.producer_id, 2)]  # the second one, at offset 2


async def test_end_txn_v5_moves_to_a_new_producer_id_when_the_epochs_run_out(broker: InProcessBroker) -> None:
    from hmb.txn.coordinator import MAX_EPOCH

    await txn.topic(broker, "x")
    p = await txn.producer(broker, "tx-x")
    coordinator = broker.broker.services.transactions
    coordinator.transactions["tx-x"].producer_epoch = p.epoch = MAX_EPOCH - 1  # as after 32766 transactions
    old_id = p.producer_id
    assert (await p.produce("x", [b"last"], version=PRODUCE_V2)).error_code == ErrorCode.NONE
    resp = await end_v2(p, True)
    assert resp.error_code == ErrorCode.NONE
    assert resp.producer_id != old_id and resp.producer_epoch == 0
    again = await end_v2(p, True)  # a retry under the old id is still recognised
    answer = (again.error_code, again.producer_id, again.producer_epoch)
    assert answer == (ErrorCode.NONE, resp.producer_id, 0)
    assert _plog(broker, "x").last_stable_offset == 2
    p.producer_id, p.epoch, p.sequence = int(resp.producer_id), 0, 0
    assert (await p.produce("x", [b"next"], version=PRODUCE_V2)).error_code == ErrorCode.NONE


async def test_txn_offset_commit_v5_adds_the_group_itself(broker: InProcessBroker) -> None:
    await txn.topic(broker, "src")
    p = await txn.producer(broker, "tx-off")
    assert await commit_code(broker, commit_body(p, "g5", "src", 7), version=4) == ErrorCode.INVALID_TXN_STATE
    assert await commit_code(broker, commit_body(p, "g5", "src", 7), version=5) == ErrorCode.NONE
    state = await txn.describe(broker, "tx-off")
    assert state.transaction_state == "Ongoing"
    assert [t.topic for t in state.topics] == ["__consumer_offsets"]
    assert (await fetch_offset(broker, "g5", "src")).committed_offset == -1  # not before the commit
    await next_transaction(p, commit=True)
    assert (await fetch_offset(broker, "g5", "src")).committed_offset == 7
    fenced = commit_body(p, "g5", "src", 9, producer_epoch=p.epoch - 1)
    assert await commit_code(broker, fenced, version=5) == ErrorCode.INVALID_PRODUCER_EPOCH
    assert (await txn.describe(broker, "tx-off")).transaction_state == "CompleteCommit"
