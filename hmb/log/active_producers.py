"""The idempotent producers a partition knows, as DescribeProducers reports them.

For every producer in the partition's producer state: its id, epoch, the
sequence of its last record, the timestamp of its last batch, the
coordinator epoch of its last transaction marker (-1: none) and the first
offset of its transaction open on the partition (-1: none).  The state
keeps each producer's recent batches by offset, not their timestamps, so
the timestamp is read from the header of the last batch in the log
(MaxTimestamp of its RecordBatch header, Kafka's ``lastTimestamp``); when
that batch is gone (retention) or unreadable it is -1, "unknown".
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from hmb.log.errors import OffsetOutOfRangeError
from hmb.log.partition import PartitionLog
from kproto.records.entry import ENTRY_HEAD, NO_TIMESTAMP, V2_HEADER_SIZE
from kproto.records.entry import V2_MAX_TIMESTAMP_OFFSET as MAX_TIMESTAMP_AT

_I64 = struct.Struct(">q")


@dataclass(frozen=True)
class ActiveProducer:
    """One producer as DescribeProducers shows it: epoch, last sequence and open transaction."""

    producer_id: int
    epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int = -1
    current_txn_start_offset: int = -1


def _batch_max_timestamp(plog: PartitionLog, base_offset: int) -> int:
    """MaxTimestamp of the batch that starts at ``base_offset`` (-1: not in the log any more)."""
    try:
        with plog.read(base_offset, V2_HEADER_SIZE) as region:
            head = region.read() if region is not None else b""
    except (OffsetOutOfRangeError, OSError):
        return NO_TIMESTAMP
    if len(head) < V2_HEADER_SIZE or ENTRY_HEAD.unpack_from(head, 0)[0] != base_offset:
        return NO_TIMESTAMP
    return int(_I64.unpack_from(head, MAX_TIMESTAMP_AT)[0])


def active_producers(plog: PartitionLog) -> list[ActiveProducer]:
    """Every producer of ``plog``'s producer state, by producer id."""
    out = []
    plog.load()  # after a clean start the producer state is read with the partition's files
    ongoing = plog.ongoing_transactions()
    for pid, entry in sorted(plog.producers.producers.items()):
        last = entry.batches[-1] if entry.batches else None
        ts = _batch_max_timestamp(plog, last.first_offset) if last is not None else NO_TIMESTAMP
        txn_start = ongoing.get(pid, -1)
        out.append(ActiveProducer(pid, entry.epoch, entry.last_seq, ts, entry.coordinator_epoch, txn_start))
    return out
