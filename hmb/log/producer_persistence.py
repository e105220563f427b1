"""Where a partition's producer state comes from at start, and goes at a clean shutdown.

Rules of this module:

* A clean shutdown writes the state at the log end offset to
  ``producer-state.json`` in the partition's directory (empty, no disk
  block, when there is no producer), as Kafka keeps ``.snapshot`` files: a
  clean start then reads no segment through.  The snapshot holds every
  producer's epoch and last batches, and the first offset of every open
  transaction (``"transactions"``: producer id -> first offset).
* The snapshot is taken only when it is of this very log (same log end
  offset) and readable; otherwise the state is rebuilt from the batch
  headers of the last segments, as after a crash.  A producer idle for
  longer than those segments is unknown afterwards and may continue at any
  sequence, as Kafka treats a producer whose state has expired.  The
  rebuild replays transactions too: a transactional batch opens its
  producer's transaction, a marker ends it (an ABORT is recorded as
  aborted).  A transaction still open at the crash stays open: the
  transaction coordinator completes or aborts it.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path

from hmb.log.producer_state import ProducerStateManager
from hmb.log.scan import BadEntry, Entry, producer_info
from hmb.log.segment import LogSegment
from hmb.log.segment_map import SegmentMap
from hmb.log.transactions import PartitionTransactions
from kproto import CorruptRecordError
from kproto.records.control import parse_control_batch
from kproto.records.default import CONTROL_MASK, TRANSACTIONAL_MASK

log = logging.getLogger(__name__)

PRODUCER_SNAPSHOT = "producer-state.json"
#: how many of the last segments a rebuild reads
REBUILD_SEGMENTS = 2


def restore_snapshot(
    directory: Path, log_end_offset: int, txns: PartitionTransactions
) -> ProducerStateManager | None:
    """The state of the clean-shutdown snapshot in ``directory`` if it is of this log, else None.

    Its open transactions go into ``txns`` (only when the snapshot is taken).
    """
    path = directory / PRODUCER_SNAPSHOT
    try:
        text = path.read_text()
        if not text:
            return ProducerStateManager()  # no producer at all when the log was closed
        data = json.loads(text)
        if data["log_end_offset"] != log_end_offset:
            return None
        producers = ProducerStateManager.restore(data["producers"])
        ongoing = {int(pid): int(first) for pid, first in data.get("transactions", {}).items()}
        txns.ongoing.update(ongoing)
        return producers
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, KeyError) as exc:
        log.warning("ignoring %s (%s): producer state rebuilt from the log", path, exc)
        return None


def write_snapshot(
    directory: Path, producers: ProducerStateManager, txns: PartitionTransactions, log_end_offset: int
) -> None:
    """Write the snapshot of ``producers`` and open transactions at ``log_end_offset``
    (``OSError`` when it cannot)."""
    state = producers.snapshot()
    data = {"log_end_offset": log_end_offset, "producers": state}
    if txns.ongoing:
        data["transactions"] = {str(pid): first for pid, first in txns.ongoing.items()}
    text = json.dumps(data) if state or txns.ongoing else ""
    (directory / PRODUCER_SNAPSHOT).write_text(text)


def rebuild_from_log(
    segments: SegmentMap, producers: ProducerStateManager, txns: PartitionTransactions
) -> int:
    """Replay into ``producers`` and ``txns`` the batches of the last
    :data:`REBUILD_SEGMENTS` segments, in order; returns the index of the first one replayed."""
    first = max(0, len(segments) - REBUILD_SEGMENTS)
    replay_segments(segments.values()[first:], producers, txns)
    return first


def replay_segments(
    segments: list[LogSegment], producers: ProducerStateManager, txns: PartitionTransactions
) -> None:
    """Replay into ``producers`` and ``txns`` the batches of ``segments``, in order."""
    for seg in segments:
        replay_entries(seg, seg.entries(), producers, txns)


def replay_entries(
    seg: LogSegment,
    entries: Iterable[Entry | BadEntry],
    producers: ProducerStateManager,
    txns: PartitionTransactions,
) -> None:
    """Replay the batches ``entries`` of ``seg`` (up to the first bad one): a follower's
    appended batches, or a whole segment at load."""
    for entry in entries:
        if isinstance(entry, BadEntry):
            break
        info = producer_info(seg.fd, entry)
        if info is None:
            continue
        if info.attributes & CONTROL_MASK:
            try:
                marker = parse_control_batch(os.pread(seg.fd, entry.size, entry.position))
            except CorruptRecordError as exc:  # its CRC held: a control record we cannot read
                log.warning("unreadable marker at offset %d of %s: %s", info.base_offset, seg, exc)
                continue
            if marker.commit is not None:
                producers.end_transaction(info.producer_id, info.producer_epoch, marker.coordinator_epoch)
                txns.complete(info.producer_id, info.base_offset, commit=marker.commit)
            continue
        producers.record(
            info.producer_id,
            info.producer_epoch,
            info.base_sequence,
            info.record_count,
            info.base_offset,
            info.last_offset,
        )
        if info.attributes & TRANSACTIONAL_MASK:
            txns.begin(info.producer_id, info.base_offset)
