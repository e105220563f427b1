"""Transaction markers: the COMMIT or ABORT control batch that ends a producer's transaction
on one partition.

Rules:

* The marker ends the producer's open transaction here (a marker for a
  producer with none is written all the same, as Kafka does); one of an older
  producer epoch than the partition knows is refused and nothing is written.
* An ABORT is entered in the segment's aborted-transaction index before the
  marker is written, and taken out again if the write fails: the index never
  lists an abort the log does not hold.
* The marker carries the leader epoch of the partition, as every append does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from hmb.log.errors import InvalidProducerEpochError, PartitionDeletedError
from hmb.log.txn_index import append_entry, cut, txn_index_path
from kproto.records.control import build_control_batch
from kproto.records.log_append_time import stamp_log_append_time

if TYPE_CHECKING:
    from hmb.log.partition import PartitionLog


async def append_marker(
    plog: PartitionLog, producer_id: int, producer_epoch: int, *, commit: bool, coordinator_epoch: int
) -> int:
    """Write a COMMIT (``commit``) or ABORT marker of the producer; returns its offset.

    The marker ends the producer's open transaction on this partition (a
    marker for a producer with none is written all the same, as Kafka
    does).  A marker of an older epoch than the producer's raises
    :class:`~hmb.log.errors.InvalidProducerEpochError` and writes nothing.
    """
    await trio.lowlevel.checkpoint_if_cancelled()
    async with plog._state.modify() as state:
        if plog.deleted:
            raise PartitionDeletedError(f"{plog.topic}-{plog.partition} was deleted")
        if plog.producers.check_marker(producer_id, producer_epoch) is not None:
            raise InvalidProducerEpochError(
                f"marker of producer {producer_id} epoch {producer_epoch}: the producer is at a newer one"
            )
        offset = plog.active.next_offset
        now = int(plog.wall() * 1000)
        buf = bytearray(
            build_control_batch(
                producer_id,
                producer_epoch,
                commit=commit,
                coordinator_epoch=coordinator_epoch,
                base_offset=offset,
                timestamp=now,
                partition_leader_epoch=plog.leader_epoch,
            )
        )
        if plog.config.message_timestamp_type == "LogAppendTime":
            stamp_log_append_time(buf, now)
        seg = plog.active
        if plog._roll_due(seg, len(buf)):
            seg = await plog._roll(offset)
        aborted = None if commit else plog.txns.aborted_by(producer_id, offset)
        index = txn_index_path(plog.directory, seg.base_offset)
        size_before = append_entry(index, aborted) if aborted is not None else 0
        try:
            seg.append(buf, offset, 2)
        except OSError:
            if aborted is not None:
                cut(index, size_before)
            raise
        plog.producers.end_transaction(producer_id, producer_epoch, coordinator_epoch)
        plog.txns.complete(producer_id, offset, commit=commit)
        state.unflushed_messages += 1
        if plog._flush_due(state):
            await plog._flush_now(state, seg)
    plog._wake_readers()
    if plog.on_leader_append is not None:
        plog.on_leader_append()
    return offset
