"""Produce's transactional check: a transactional batch only to a partition of its transaction.

Rule (KIP-890's server-side verification, which Kafka applies to every
Produce version): a RecordBatch with the transactional bit is accepted
only when its producer id is a transactional id's current one, its
transaction is open and the partition was added to it (AddPartitionsToTxn).
Otherwise nothing is written and the partition is answered INVALID_TXN_STATE
(INVALID_PRODUCER_EPOCH for an epoch older than the id's: a fenced
producer).  Non-transactional data costs one byte comparison.

From Produce v12 (transaction version 2, KIP-890 part 2) the client adds no
partition itself: a batch for a partition not yet in the transaction makes
the broker add it, through the coordinator's usual checks (the request's
transactional id must map to the batch's producer id and epoch), and a
transaction starts when none is open.  The coordinator's refusals become
Produce's codes: CONCURRENT_TRANSACTIONS (markers of the previous
transaction still being written) the retriable NOT_ENOUGH_REPLICAS, as
Kafka answers it, PRODUCER_FENCED the INVALID_PRODUCER_EPOCH of a fenced
producer.  In a cluster, when another broker coordinates the transactional
id, that coordinator is asked to add the partition
(:mod:`hmb.txn.remote_adds`); a coordinator that cannot be asked is the
retriable NOT_ENOUGH_REPLICAS too.
"""

from __future__ import annotations

import logging

from hmb.api.context import RequestContext
from kproto import ErrorCode
from kproto.records.entry import MAGIC_OFFSET, V2_ATTRIBUTES_OFFSET, V2_HEADER_SIZE, producer_fields

log = logging.getLogger(__name__)

_TRANSACTIONAL = 0x10  # RecordBatch attributes bit 4
IMPLICIT_ADD_SINCE = 12
"""The first Produce version whose transactional batches add their partition themselves."""

_AS_PRODUCE_CODE: dict[int, int] = {
    ErrorCode.CONCURRENT_TRANSACTIONS: int(ErrorCode.NOT_ENOUGH_REPLICAS),
    ErrorCode.PRODUCER_FENCED: int(ErrorCode.INVALID_PRODUCER_EPOCH),
    # the coordinator of a transactional id led by another broker could not be asked (or moved)
    ErrorCode.COORDINATOR_NOT_AVAILABLE: int(ErrorCode.NOT_ENOUGH_REPLICAS),
    ErrorCode.NOT_COORDINATOR: int(ErrorCode.NOT_ENOUGH_REPLICAS),
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS: int(ErrorCode.NOT_ENOUGH_REPLICAS),
}


async def refusal(ctx: RequestContext, topic: str, partition: int, records: bytes | bytearray) -> int:
    """The error code refusing this partition's records (0: they may be appended)."""
    if len(records) < V2_HEADER_SIZE or records[MAGIC_OFFSET] != 2:
        return 0
    if not records[V2_ATTRIBUTES_OFFSET + 1] & _TRANSACTIONAL:
        return 0
    producer_id, epoch, _seq, _count = producer_fields(records)
    coordinator = ctx.services.transactions
    tid = ctx.request.body.transactional_id
    implicit = ctx.request.version >= IMPLICIT_ADD_SINCE and tid is not None
    if implicit and coordinator.remote_adds is not None and not coordinator.coordinates(tid):
        added = await coordinator.remote_adds.add(tid, producer_id, epoch, (topic, partition))
        return _AS_PRODUCE_CODE.get(added, added)
    code = coordinator.check_produce(producer_id, epoch, topic, partition)
    if code != ErrorCode.INVALID_TXN_STATE or not implicit:
        return code
    try:
        added = await coordinator.add_partitions(tid, producer_id, epoch, [(topic, partition)])
    except OSError as exc:
        log.error("adding %s-%d to the transaction of %s failed: %s", topic, partition, tid, exc)
        return int(ErrorCode.NOT_ENOUGH_REPLICAS)
    if added != ErrorCode.NONE:
        return _AS_PRODUCE_CODE.get(added, added)
    return coordinator.check_produce(producer_id, epoch, topic, partition)
