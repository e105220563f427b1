"""Removing a partition's oldest records: retention by age and size, and DeleteRecords.

Rules of this module:

* Only whole segments go, never the active one; a segment goes under the
  partition's lock (:meth:`hmb.log.partition.PartitionLog.exclusive`), so no
  append, cleaning swap or deletion runs meanwhile.
* Age is a segment's largest record timestamp (its file time only when no
  record has one), as Kafka judges it; size is the partition's total.  A
  topic whose ``cleanup.policy`` lacks ``delete`` is never trimmed here:
  only the log cleaner removes its records.
* DeleteRecords moves the log start offset up to an offset (never back);
  the segments wholly below it go, and a read below it finds nothing.
* What leaves with a segment leaves everywhere: the aborted transactions
  whose markers it held, and the leader-epoch entries before the new start.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from hmb.log.errors import OffsetOutOfRangeError, PartitionDeletedError

if TYPE_CHECKING:
    from hmb.log.partition import PartitionLog

log = logging.getLogger("hmb.log.partition")  # the lines a reader of the partition's log expects


async def apply_retention(plog: PartitionLog, now: float) -> list[int]:
    """Delete whole old segments past log.retention.ms / log.retention.bytes.

    The active segment is never deleted.  Returns deleted base offsets.
    """
    cfg = plog.config
    deleted: list[int] = []
    if not cfg.delete:  # cleanup.policy=compact alone: only the cleaner removes records
        return deleted
    async with plog.exclusive():
        if plog.deleted:  # DeleteTopics got here first: the files are gone
            return deleted
        total = plog.size_bytes
        while len(plog.segments) > 1:
            seg = plog.segments.peekitem(0)[1]
            too_old = cfg.retention_ms >= 0 and now * 1000 - seg.largest_timestamp > cfg.retention_ms
            too_big = cfg.retention_bytes >= 0 and total - seg.size >= cfg.retention_bytes
            if not (too_old or too_big):
                break
            plog.segments.popitem(0)
            total -= seg.size
            seg.delete()
            deleted.append(seg.base_offset)
        plog.txns.forget_before(plog.segments.first.base_offset)
    if deleted:
        plog.epochs.truncate_from_start(plog.log_start_offset)
        log.info(
            "retention deleted %d segment(s) of %s-%d; log starts at %d",
            len(deleted),
            plog.topic,
            plog.partition,
            plog.log_start_offset,
        )
    return deleted


async def delete_records(plog: PartitionLog, before: int) -> int:
    """Delete every record below ``before`` (DeleteRecords); returns the new log start offset.

    ``-1`` means the high watermark.  The start moves to ``before`` (never
    back), whole segments below it are deleted (never the active one) and a
    record below the start is no longer read.  An offset beyond the high
    watermark raises :class:`OffsetOutOfRangeError` and changes nothing.
    The caller persists the new start (the log dir's checkpoint).
    """
    async with plog.exclusive():
        if plog.deleted:
            raise PartitionDeletedError(f"{plog.topic}-{plog.partition} was deleted")
        hw = plog.high_watermark
        target = hw if before == -1 else before
        if not 0 <= target <= hw:
            raise OffsetOutOfRangeError(
                f"cannot delete records below {before}: {plog.topic}-{plog.partition} ends at {hw}"
            )
        if target <= plog.log_start_offset:
            return plog.log_start_offset
        plog.deleted_before = target
        while len(plog.segments) > 1 and plog.segments.peekitem(1)[0] <= target:
            _base, seg = plog.segments.popitem(0)
            seg.delete()
        plog.txns.forget_before(plog.segments.first.base_offset)
    plog.epochs.truncate_from_start(plog.log_start_offset)
    log.info("deleted records of %s-%d below %d", plog.topic, plog.partition, target)
    return plog.log_start_offset
