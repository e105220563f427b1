"""Transactions written straight through the log, for the read_committed handler tests.

The coordinator's APIs are not needed to test what Fetch and ListOffsets
answer: the tests write transactional batches and markers through the
partition's log, exactly what the coordinator's markers end up as.
"""

from __future__ import annotations

from hmb.log.partition import PartitionLog
from kproto.records import RecordBatchBuilder

from .bodies import batch, produce_one
from .harness import InProcessBroker


def txn_batch(values: list[bytes], pid: int, seq: int, *, timestamp: int = 1_700_000_000_000) -> bytes:
    b = RecordBatchBuilder(producer_id=pid, producer_epoch=0, base_sequence=seq, is_transactional=True)
    for v in values:
        b.append(None, v, timestamp)
    return b.build()


async def partition_log(broker: InProcessBroker, topic: str) -> PartitionLog:
    """Partition 0 of ``topic``, created (and given one plain record, ``plain-0``) by a produce."""
    await produce_one(broker, topic, batch([b"plain-0"]))
    plog = broker.broker.logs.get(topic, 0)
    assert plog is not None
    return plog
