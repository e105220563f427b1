"""Transactions across keys, in process: produce, commit, abort, offsets, timeouts, restarts.

The coordinator's APIs one by one are in their own modules; here is what
only several keys together show.  What can fail: a transactional batch
written to a partition its transaction does not hold, a zombie's batch
accepted after it was fenced.
"""

from __future__ import annotations

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
