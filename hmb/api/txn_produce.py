"""Produce's transactional check: a transactional batch only to a partition of its transaction.

Rule (KIP-890's server-side verification, which Kafka applies to every
Produce version): a RecordBatch with the transactional bit is accepted
only when its producer id is a transactional id's current one, its
transaction is open and the partition was added to it (AddPartitionsToTxn).
Otherwise nothing is written and the partition is answered INVALID_TXN_STATE
(INVALID_PRODUCER_EPOCH for an epoch older than the id's: a fenced
producer).  Non-transactional data costs one byte comparison.
"""

from __future__ import annotations

from hmb.api.context import RequestContext
from kproto.records.entry import MAGIC_OFFSET, V2_ATTRIBUTES_OFFSET, V2_HEADER_SIZE, producer_fields

_TRANSACTIONAL = 0x10  # RecordBatch attributes bit 4


def refusal(ctx: RequestContext, topic: str, partition: int, records: bytes | bytearray) -> int:
    """The error code refusing this partition's records (0: they may be appended)."""
    if len(records) < V2_HEADER_SIZE or records[MAGIC_OFFSET] != 2:
        return 0
    if not records[V2_ATTRIBUTES_OFFSET + 1] & _TRANSACTIONAL:
        return 0
    producer_id, epoch, _seq, _count = producer_fields(records)
    return ctx.services.transactions.check_produce(producer_id, epoch, topic, partition)
