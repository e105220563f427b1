"""The aborted-transaction index: one ``.txnindex`` file per segment, in Kafka's layout.

Each entry is one aborted transaction, written when its ABORT marker is,
into the index of the segment that holds the marker::

    AbortedTxn =>                    34 bytes, big-endian
      version => int16               (0)
      producer_id => int64
      first_offset => int64          the transaction's first offset on this partition
      last_offset => int64           its ABORT marker's offset
      last_stable_offset => int64    the partition's LSO once the marker was written

Rules of this module:

* A segment with no aborted transaction has no file (Kafka creates it at the
  first entry too); a file goes with its segment (retention, DeleteRecords,
  DeleteTopics) and one without a segment is removed at load.
* An entry is written before its marker and cut off again if the marker's
  write fails: the file never lists an abort the log does not hold.
* A file that is torn (a size that is not a multiple of 34) or holds an
  entry that cannot be right (another version, a marker outside its
  segment, a first offset after the last) is rebuilt from the log, as is
  every file of a segment the producer state was rebuilt from after a crash.
  A rebuild replays the segment and the one before it; a transaction begun
  before those (which Kafka's transaction timeout makes unlikely) keeps the
  first offset the old file gave it, else starts at its marker.
"""

from __future__ import annotations

import logging
import os
import struct
from collections.abc import Iterable
from pathlib import Path

from hmb.log.producer_persistence import replay_segments
from hmb.log.producer_state import ProducerStateManager
from hmb.log.segment import LogSegment, segment_name
from hmb.log.segment_map import SegmentMap
from hmb.log.transactions import AbortedTxn, PartitionTransactions

log = logging.getLogger(__name__)

SUFFIX = ".txnindex"
VERSION = 0
ENTRY = struct.Struct(">hqqqq")  # version, producer_id, first, last, last_stable_offset
ENTRY_SIZE = ENTRY.size  # 34


def txn_index_path(directory: Path, base_offset: int) -> Path:
    return directory / (segment_name(base_offset) + SUFFIX)


def read_txn_index(path: Path, seg: LogSegment) -> tuple[list[AbortedTxn], str | None]:
    """The entries of ``seg``'s index file, and what is wrong with it (None: nothing).

    A missing file is an empty index.  With a problem, the entries are
    those read before it.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], None
    entries: list[AbortedTxn] = []
    whole = len(data) - len(data) % ENTRY_SIZE
    for pos in range(0, whole, ENTRY_SIZE):
        version, pid, first, last, lso = ENTRY.unpack_from(data, pos)
        if version != VERSION:
            return entries, f"entry {pos // ENTRY_SIZE} has version {version}"
        if not (seg.base_offset <= last < seg.next_offset and first <= last):
            return entries, f"entry {pos // ENTRY_SIZE} ({first}..{last}) does not fit the segment"
        entries.append(AbortedTxn(pid, first, last, lso))
    if whole != len(data):
        return entries, f"torn: {len(data)} bytes, not a multiple of {ENTRY_SIZE}"
    return entries, None


def append_entry(path: Path, entry: AbortedTxn) -> int:
    """Add ``entry`` at the end of the file; returns the file's size before it (for :func:`cut`)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        before = os.fstat(fd).st_size
        data = ENTRY.pack(VERSION, *entry)
        try:
            if os.write(fd, data) != len(data):
                raise OSError(f"short write to {path}")
        except OSError:
            os.ftruncate(fd, before)
            raise
        return before
    finally:
        os.close(fd)


def cut(path: Path, size: int) -> None:
    """Take the file back to ``size`` bytes (an entry whose marker could not be written)."""
    try:
        if size:
            os.truncate(path, size)
        else:
            path.unlink()
    except OSError:  # pragma: no cover - recovery rebuilds the index from the log
        log.exception("could not cut %s back to %d bytes", path, size)


def write_txn_index(path: Path, entries: Iterable[AbortedTxn]) -> None:
    """Replace the file by ``entries`` (no file when there are none)."""
    data = b"".join(ENTRY.pack(VERSION, *e) for e in entries)
    if not data:
        path.unlink(missing_ok=True)
        return
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _keep_known_starts(found: list[AbortedTxn], old: list[AbortedTxn]) -> list[AbortedTxn]:
    """``found`` (a replay), where a transaction begun before the replay (its first offset
    is its marker's) takes the first offset the old index gave it."""
    known = {(e.producer_id, e.last_offset): e for e in old}
    return [
        known.get((e.producer_id, e.last_offset), e) if e.first_offset == e.last_offset else e for e in found
    ]


def replay_aborts(segments: list[LogSegment]) -> list[AbortedTxn]:
    """The aborted transactions whose markers lie in ``segments``, replayed from their batches."""
    txns = PartitionTransactions()
    replay_segments(segments, ProducerStateManager(), txns)
    return txns.aborted


def load_txn_indexes(
    directory: Path,
    names: Iterable[str],
    segments: SegmentMap,
    replayed: list[AbortedTxn] | None,
    replayed_from: int,
) -> list[AbortedTxn]:
    """Every segment's aborted transactions, in marker order; files repaired where needed.

    ``replayed``: the aborts a producer-state rebuild found in the segments
    from index ``replayed_from`` on (None: the state came from the snapshot);
    those segments' files are made to agree with it.  Files of no segment
    are removed.
    """
    bases = set(segments.keys())
    for name in names:
        stem = name[: -len(SUFFIX)]
        if name.endswith(SUFFIX) and stem.isdigit() and int(stem) not in bases:
            (directory / name).unlink(missing_ok=True)
    items = segments.items()
    out: list[AbortedTxn] = []
    for i, (base, seg) in enumerate(items):
        path = txn_index_path(directory, base)
        entries, problem = read_txn_index(path, seg)
        if replayed is not None and i >= replayed_from:
            found = [e for e in replayed if base <= e.last_offset < seg.next_offset]
        elif problem is not None:
            found = replay_aborts([s for _b, s in items[max(0, i - 1) : i + 1]])
            found = [e for e in found if base <= e.last_offset < seg.next_offset]
        else:
            out.extend(entries)
            continue
        found = _keep_known_starts(found, entries)
        if found != entries or problem is not None:
            if problem is not None:
                log.warning("%s: %s; rebuilt from the log (%d entries)", path, problem, len(found))
            write_txn_index(path, found)
        out.extend(found)
    return out
