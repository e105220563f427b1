"""The two ways a follower's copy of a partition changes: its leader's batches, and truncation.

Rules:

* A follower appends what its leader sent exactly as it is: offsets, leader
  epochs, producer ids and sequences, control batches.  Nothing is
  re-numbered or re-stamped, so the replicas hold the same bytes.  The
  batches must start at this log's end; a gap is refused (the fetcher asked
  for the wrong offset).
* What an append means beyond the bytes is replayed from the batch headers
  as a start-up replay would: producer state, open and aborted transactions,
  and a leader epoch the log had not seen begins at its batch's offset.
* A follower so far behind that its leader no longer has what it would
  fetch next starts again, empty, at the leader's log start
  (:func:`restart_at`).
* Truncation cuts the log back to end at an offset (a follower's divergent
  tail after a leader change): whole segments past it go, the segment
  holding it is cut at the entry boundary and its indexes rebuilt, the
  aborted-transaction index and the leader epochs lose what lay past it, and
  producer state and transactions are rebuilt from the log that is left.
"""

from __future__ import annotations

import logging
import os
import struct
from typing import TYPE_CHECKING

from hmb.log.errors import LogError, PartitionDeletedError
from hmb.log.producer_persistence import rebuild_from_log, replay_entries
from hmb.log.producer_state import ProducerStateManager
from hmb.log.scan import Entry
from hmb.log.transactions import PartitionTransactions
from hmb.log.txn_index import ENTRY_SIZE, cut, txn_index_path
from kproto import CorruptRecordError
from kproto.records.entry import ENTRY_HEAD, LOG_OVERHEAD, MAGIC_OFFSET, check_entry

if TYPE_CHECKING:
    from hmb.log.partition import PartitionLog

log = logging.getLogger(__name__)

_EPOCH = struct.Struct(">i")  # a RecordBatch's partitionLeaderEpoch, right after offset and size


class ReplicaOffsetError(LogError):
    """The leader's batches do not start at this log's end."""


def whole_entries(data: bytes | bytearray | memoryview) -> int:
    """How many bytes of ``data`` are whole entries (a fetch's size limit may cut the last)."""
    pos = 0
    while len(data) - pos >= LOG_OVERHEAD:
        size = LOG_OVERHEAD + ENTRY_HEAD.unpack_from(data, pos)[1]
        if size <= LOG_OVERHEAD or pos + size > len(data):
            break
        pos += size
    return pos


async def append_replicated(plog: PartitionLog, records: bytes | bytearray | memoryview) -> int:
    """Append the whole entries of ``records`` at their own offsets; returns the new log end.

    Raises :class:`ReplicaOffsetError` when they do not start at the log end,
    :class:`kproto.CorruptRecordError` for an entry whose checksum fails (nothing
    of it or after it is written), ``OSError`` from the disk.
    """
    data = memoryview(records)[: whole_entries(records)]
    async with plog.exclusive():
        if plog.deleted:
            raise PartitionDeletedError(f"{plog.topic}-{plog.partition} was deleted")
        pos = 0
        while pos < len(data):
            base, size = ENTRY_HEAD.unpack_from(data, pos)
            entry = data[pos : pos + LOG_OVERHEAD + size]
            checked = check_entry(entry, True)
            if isinstance(checked, str):
                raise CorruptRecordError(f"replicated entry at offset {base}: {checked}")
            last, magic, max_timestamp = checked
            if base != plog.log_end_offset and not (magic < 2 and last >= plog.log_end_offset):
                raise ReplicaOffsetError(
                    f"{plog.topic}-{plog.partition}: leader sent offset {base}, the log ends at "
                    f"{plog.log_end_offset}"
                )
            seg = plog.active
            if plog._roll_due(seg, len(entry)):
                seg = await plog._roll(plog.log_end_offset)
            position = seg.append(entry, last, magic, max_timestamp)
            if magic >= 2:
                epoch = _EPOCH.unpack_from(entry, MAGIC_OFFSET - 4)[0]
                if epoch > plog.epochs.latest_epoch:
                    plog.epochs.assign(epoch, base)
            replay_entries(
                seg, [Entry(position, last, len(entry), magic, max_timestamp)], plog.producers, plog.txns
            )
            pos += len(entry)
    plog._wake_readers()
    return plog.log_end_offset


async def truncate_to(plog: PartitionLog, offset: int) -> None:
    """Cut the log back so that it ends at ``offset`` (a batch boundary); no-op past its end."""
    async with plog.exclusive():
        if plog.deleted or offset >= plog.log_end_offset:
            return
        before = plog.log_end_offset
        segments = plog.segments
        while len(segments) > 1 and segments.last.base_offset >= offset:
            segments.popitem(-1)[1].delete()
        seg = segments.last
        if seg.base_offset >= offset:  # the whole log goes: start again, empty, at offset
            segments.popitem(-1)
            seg.delete()
            seg = plog._new_segment(offset, new=True)
            seg.next_offset = offset
            segments[offset] = seg
        else:
            position = seg.find_position(offset)
            if position is not None:
                os.ftruncate(seg.fd, position)
                seg.size = position
                cfg = plog.config
                seg.recover(cfg.max_message_bytes + 1024 * 1024 + cfg.segment_bytes)
        old_aborted = plog.txns.aborted
        kept_in_segment = [e for e in old_aborted if seg.base_offset <= e.last_offset < offset]
        if any(e.last_offset >= offset for e in old_aborted if e.last_offset >= seg.base_offset):
            cut(txn_index_path(plog.directory, seg.base_offset), len(kept_in_segment) * ENTRY_SIZE)
        producers, txns = ProducerStateManager(), PartitionTransactions()
        replayed_from = rebuild_from_log(segments, producers, txns)
        first_replayed = segments.values()[replayed_from].base_offset
        txns.aborted = [e for e in old_aborted if e.last_offset < first_replayed] + txns.aborted
        plog.producers = producers
        plog._txns = txns
        plog.epochs.truncate_from_end(offset)
        if plog._high_watermark is not None:
            plog._high_watermark = min(plog._high_watermark, offset)
    log.info("truncated %s-%d from %d to %d", plog.topic, plog.partition, before, offset)


async def restart_at(plog: PartitionLog, offset: int) -> None:
    """Empty the log and let it start at ``offset``: a follower so far behind that the leader
    deleted what it would fetch next (retention) starts again at the leader's log start."""
    async with plog.exclusive():
        if plog.deleted:
            return
        segments = plog.segments
        while len(segments):
            segments.popitem(-1)[1].delete()
        seg = plog._new_segment(offset, new=True)
        seg.next_offset = offset
        segments[offset] = seg
        plog.deleted_before = offset
        plog.producers = ProducerStateManager()
        plog._txns = PartitionTransactions()
        plog.epochs.entries = []
        plog.epochs.write()
        if plog._high_watermark is not None:
            plog._high_watermark = offset
    log.info("%s-%d: emptied, starting again at offset %d", plog.topic, plog.partition, offset)
