"""Transactions across keys, in process: produce, commit, abort, offsets, timeouts, restarts.

The coordinator's APIs one by one are in their own modules; here is what
only several keys together show.  What can fail: a transactional batch
written to a partition its transaction does not hold, a zombie's batch
accepted after it was fenced.
"""

from __future__ import annotations

from typing import Any

import pytest

from kproto import ErrorCode

from . import txn
from .bodies import fetch_one
from .harness import InProcessBroker


@pytest.mark.parametrize("version", [3, 8])
async def test_a_transactional_batch_to_a_partition_not_added_is_refused(
    broker: InProcessBroker, version: int
) -> None:
    await txn.topic(broker, "t", partitions=2)
    p = await txn.producer(broker, "tx-p")
    refused = await p.produce("t", [b"x"], version=version)
    assert (refused.error_code, refused.base_offset) == (ErrorCode.INVALID_TXN_STATE, -1)
    await p.add("t", 1)
    p.sequence = 0
    refused = await p.produce("t", [b"x"], partition=0, version=version)
    assert refused.error_code == ErrorCode.INVALID_TXN_STATE
    assert (await fetch_one(broker, "t", 0)).high_watermark == 0  # nothing written


async def test_a_fenced_producer_cannot_write(broker: InProcessBroker) -> None:
    await txn.topic(broker, "t")
    zombie = await txn.producer(broker, "tx-fence")
    successor = await txn.producer(broker, "tx-fence")
    await successor.add("t")
    refused = await zombie.produce("t", [b"late"])
    assert refused.error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    stranger = txn.Txn(broker, "none", successor.producer_id + 100, 0)
    assert (await stranger.produce("t", [b"x"])).error_code == ErrorCode.INVALID_TXN_STATE
    assert (await fetch_one(broker, "t", 0)).high_watermark == 0


def _plog(b: InProcessBroker, topic: str, partition: int = 0):  # type: ignore[no-untyped-def]
    plog = b.broker.logs.get(topic, partition)
    assert plog is not None
    return plog


@pytest.mark.parametrize("commit", [True, False])
async def test_end_writes_a_marker_to_every_partition(broker: InProcessBroker, commit: bool) -> None:
    await txn.topic(broker, "m", partitions=2)
    p = await txn.producer(broker, "tx-m")
    assert await p.add("m", 0, 1) == {("m", 0): 0, ("m", 1): 0}
    assert (await p.produce("m", [b"a", b"b"], partition=0)).error_code == ErrorCode.NONE
    p.sequence = 0
    assert (await p.produce("m", [b"c"], partition=1)).error_code == ErrorCode.NONE
    assert _plog(broker, "m").last_stable_offset == 0  # open: read_committed stops before it
    assert await p.end(commit) == ErrorCode.NONE
    assert [_plog(broker, "m", i).high_watermark for i in (0, 1)] == [3, 2]  # data + one marker each
    assert [_plog(broker, "m", i).last_stable_offset for i in (0, 1)] == [3, 2]
    aborted = _plog(broker, "m").aborted_transactions(0, 3)
    assert aborted == ([] if commit else [(p.producer_id, 0)])
    state = await txn.describe(broker, "tx-m")
    assert state.transaction_state == ("CompleteCommit" if commit else "CompleteAbort")
    assert await p.end(commit) == ErrorCode.NONE  # a retry of the same end is fine
    assert await p.end(not commit) == ErrorCode.INVALID_TXN_STATE


async def test_the_next_transaction_starts_after_a_commit(broker: InProcessBroker) -> None:
    await txn.topic(broker, "n")
    p = await txn.producer(broker, "tx-n")
    for round_ in range(3):
        await p.add("n")
        assert (await p.produce("n", [b"r%d" % round_])).error_code == ErrorCode.NONE
        assert await p.end(True) == ErrorCode.NONE
    assert _plog(broker, "n").high_watermark == 6
    assert (await txn.describe(broker, "tx-n")).producer_epoch == p.epoch  # no bump between transactions


async def test_init_aborts_the_open_transaction_of_a_crashed_producer(broker: InProcessBroker) -> None:
    await txn.topic(broker, "c")
    crashed = await txn.producer(broker, "tx-c")
    await crashed.add("c")
    assert (await crashed.produce("c", [b"half"])).error_code == ErrorCode.NONE
    restarted = await txn.producer(broker, "tx-c")
    assert restarted.epoch == crashed.epoch + 2  # one bump fences and aborts, one is the new instance's
    assert _plog(broker, "c").aborted_transactions(0, 2) == [(crashed.producer_id, 0)]
    assert _plog(broker, "c").last_stable_offset == 2
    assert (await crashed.produce("c", [b"zombie"])).error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    assert await crashed.end(True) == ErrorCode.PRODUCER_FENCED


async def test_offsets_are_committed_with_the_transaction_only(broker: InProcessBroker) -> None:
    from .groups import fetch_offset
    from .test_txn_offset_commit import commit_body, commit_code

    await txn.topic(broker, "src")
    for commit, offset in ((False, 5), (True, 9)):
        p = await txn.producer(broker, "tx-off")
        assert await p.add_offsets("grp") == ErrorCode.NONE
        assert await commit_code(broker, commit_body(p, "grp", "src", offset)) == ErrorCode.NONE
        assert (await fetch_offset(broker, "grp", "src")).committed_offset == (
            -1 if not commit else 5 * 0 - 1
        )
        assert await p.end(commit) == ErrorCode.NONE
        assert (await fetch_offset(broker, "grp", "src")).committed_offset == (9 if commit else -1)
    broker.restart()
    assert (await fetch_offset(broker, "grp", "src")).committed_offset == 9


async def test_offsets_of_an_open_transaction_survive_a_restart_until_it_ends(
    broker: InProcessBroker,
) -> None:
    from .groups import fetch_offset
    from .test_txn_offset_commit import commit_body, commit_code

    await txn.topic(broker, "src")
    p = await txn.producer(broker, "tx-open")
    assert await p.add_offsets("g2") == ErrorCode.NONE
    assert await commit_code(broker, commit_body(p, "g2", "src", 4)) == ErrorCode.NONE
    broker.restart()
    assert (await fetch_offset(broker, "g2", "src")).committed_offset == -1
    assert (await txn.describe(broker, "tx-open")).transaction_state == "Ongoing"
    assert await p.end(True) == ErrorCode.NONE
    assert (await fetch_offset(broker, "g2", "src")).committed_offset == 4
    broker.restart()
    assert (await fetch_offset(broker, "g2", "src")).committed_offset == 4


async def test_a_transaction_in_prepare_commit_is_completed_after_a_restart(broker: InProcessBroker) -> None:
    """A crash between logging PrepareCommit and writing the markers: the restart finishes the commit."""
    from hmb.txn.states import TxnEvent

    await txn.topic(broker, "r")
    p = await txn.producer(broker, "tx-r")
    await p.add("r")
    assert (await p.produce("r", [b"x"])).error_code == ErrorCode.NONE
    coordinator = broker.broker.services.transactions
    meta = coordinator.transactions["tx-r"]
    meta.fire(TxnEvent.END_COMMIT)
    await coordinator.state_log.write(meta)  # logged, then "crash" before the markers
    broker.restart()
    assert (await txn.describe(broker, "tx-r")).transaction_state == "PrepareCommit"
    assert await broker.broker.services.transactions.expire() is False  # the timer's first pass
    assert (await txn.describe(broker, "tx-r")).transaction_state == "CompleteCommit"
    assert _plog(broker, "r").high_watermark == 2 and _plog(broker, "r").aborted_transactions(0, 2) == []


async def test_a_transaction_past_its_timeout_is_aborted_when_the_clock_moves(
    broker: InProcessBroker,
) -> None:
    await txn.topic(broker, "to")
    p = await txn.producer(broker, "tx-to", timeout_ms=10_000)
    await p.add("to")
    assert (await p.produce("to", [b"slow"])).error_code == ErrorCode.NONE
    coordinator = broker.broker.services.transactions
    broker.broker.clock.advance(9)
    await coordinator.expire()
    assert (await txn.describe(broker, "tx-to")).transaction_state == "Ongoing"
    broker.broker.clock.advance(2)
    await coordinator.expire()
    state = await txn.describe(broker, "tx-to")
    assert (state.transaction_state, state.producer_epoch) == ("CompleteAbort", p.epoch + 1)
    assert _plog(broker, "to").aborted_transactions(0, 2) == [(p.producer_id, 0)]
    assert await p.end(True) == ErrorCode.PRODUCER_FENCED


async def test_an_idle_transactional_id_expires(make_broker: Any) -> None:
    b = make_broker("transactional.id.expiration.ms=60000")
    p = await txn.producer(b, "tx-old")
    b.broker.clock.advance(61)
    await b.broker.services.transactions.expire()
    assert (await txn.describe(b, "tx-old")).error_code == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
    b.restart()  # the tombstone keeps it forgotten
    assert (await txn.describe(b, "tx-old")).error_code == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
    fresh = await txn.producer(b, "tx-old")
    assert fresh.epoch == 0 and fresh.producer_id != p.producer_id


async def test_a_topic_deleted_during_the_transaction_does_not_block_its_end(broker: InProcessBroker) -> None:
    await txn.topic(broker, "gone")
    await txn.topic(broker, "kept")
    p = await txn.producer(broker, "tx-del")
    await p.add("gone")
    await p.add("kept")
    assert (await p.produce("gone", [b"x"])).error_code == ErrorCode.NONE
    p.sequence = 0
    assert (await p.produce("kept", [b"y"])).error_code == ErrorCode.NONE
    await broker.broker.logs.delete_topic("gone")
    assert await p.end(True) == ErrorCode.NONE
    assert (await txn.describe(broker, "tx-del")).transaction_state == "CompleteCommit"
    assert _plog(broker, "kept").last_stable_offset == 2
