"""AddOffsetsToTxn v0-v4 in process: a group's offsets join the transaction.

v2 may answer PRODUCER_FENCED (older versions INVALID_PRODUCER_EPOCH), v3
is flexible.  What can fail: a stale epoch or unknown producer accepted,
the offsets partition missing from the transaction.
"""

from __future__ import annotations

import pytest

from kproto import ErrorCode

from . import txn
from .harness import InProcessBroker


@pytest.mark.parametrize(
    ("version", "fenced"),
    [
        (0, ErrorCode.INVALID_PRODUCER_EPOCH),
        (1, ErrorCode.INVALID_PRODUCER_EPOCH),
        (2, ErrorCode.PRODUCER_FENCED),
        (3, ErrorCode.PRODUCER_FENCED),
        (4, ErrorCode.PRODUCER_FENCED),
    ],
)
async def test_offsets_join_the_transaction(broker: InProcessBroker, version: int, fenced: int) -> None:
    old = await txn.producer(broker, "tx-ao")
    p = await txn.producer(broker, "tx-ao")
    assert await old.add_offsets("g", version) == fenced
    assert await txn.Txn(broker, "tx-none", p.producer_id, 0).add_offsets("g", version) == (
        ErrorCode.INVALID_PRODUCER_ID_MAPPING
    )
    assert await p.add_offsets("g", version) == ErrorCode.NONE
    state = await txn.describe(broker, "tx-ao")
    assert state.transaction_state == "Ongoing"
    assert [(t.topic, list(t.partitions)) for t in state.topics] == [("__consumer_offsets", [0])]
