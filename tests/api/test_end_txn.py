"""EndTxn v0-v4 in process: the transaction ends only when there is one, for its current epoch.

v2 may answer PRODUCER_FENCED (older versions INVALID_PRODUCER_EPOCH), v3
is flexible.  Commit and abort with their markers are
``test_transactions.py``'s.  What can fail: an EndTxn without a transaction
accepted, a zombie ending its successor's transaction.
"""

from __future__ import annotations

import pytest

from kproto import ErrorCode

from . import txn
from .harness import InProcessBroker


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("commit", [True, False])
async def test_end_without_a_transaction_is_invalid_txn_state(
    broker: InProcessBroker, version: int, commit: bool
) -> None:
    p = await txn.producer(broker, "tx-none")
    assert await p.end(commit, version) == ErrorCode.INVALID_TXN_STATE
    assert (await txn.describe(broker, "tx-none")).transaction_state == "Empty"


@pytest.mark.parametrize(
    ("version", "fenced"), [(1, ErrorCode.INVALID_PRODUCER_EPOCH), (2, ErrorCode.PRODUCER_FENCED)]
)
async def test_a_stale_epoch_or_an_unknown_id_ends_nothing(
    broker: InProcessBroker, version: int, fenced: int
) -> None:
    await txn.topic(broker, "e")
    old = await txn.producer(broker, "tx-e")
    new = await txn.producer(broker, "tx-e")
    assert await new.add("e") == {("e", 0): 0}
    assert await old.end(True, version) == fenced
    assert await txn.end_txn(broker, "tx-unknown", new.producer_id, 0, True, version) == (
        ErrorCode.INVALID_PRODUCER_ID_MAPPING
    )
    assert (await txn.describe(broker, "tx-e")).transaction_state == "Ongoing"
