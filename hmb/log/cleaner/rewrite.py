"""The file work of one cleaning, done off the partition's lock: reading segments into the
key map, and writing a group of segments as one cleaned segment beside them.

Rules of this module:

* Only segments that are no longer written are read (never the active one),
  each pinned by the caller, so that retention or a topic deletion meanwhile
  leaves the descriptors valid; whether the result may still be swapped in is
  decided under the lock (:mod:`hmb.log.cleaner.cleaner`).
* A cleaned segment is written to ``B.log.cleaned`` with its offset index in
  ``B.index.cleaned`` (one entry per ``index.interval.bytes``, as appends
  write them), fsynced and given the newest modification time of the
  segments it replaces, as Kafka does, so that time retention and
  ``offsets_before`` see the age the records had.
* Every byte read and written passes the shared :class:`Throttle`
  (``log.cleaner.io.max.bytes.per.second``), and a stop request ends the work
  at the next entry (:class:`CleanerStoppedError`), leaving ``.cleaned`` files for
  the caller to remove.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from hmb.log.cleaner import swap
from hmb.log.cleaner.offset_map import OffsetMap
from hmb.log.cleaner.rules import RetentionRules
from hmb.log.index import OffsetIndex
from hmb.log.segment import LogSegment
from kproto.records.compact import NO_HORIZON, entry_info, entry_records, filter_entry
from kproto.records.entry import ENTRY_HEAD, LOG_OVERHEAD, last_offset

READ_CHUNK = 1 << 20
WRITE_CHUNK = 1 << 20
MAX_RELATIVE_OFFSET = 2**31 - 1  # an index entry holds an offset relative to its segment's base


class CleanerStoppedError(Exception):
    """The broker is stopping: the cleaning was abandoned half-way."""


class Throttle:
    """At most ``rate`` bytes per second across every cleaner thread (sleeping the caller)."""

    WINDOW_S = 1.0

    def __init__(self, rate: float, stop: threading.Event | None = None) -> None:
        self.rate = rate
        self.stop = stop or threading.Event()
        self._lock = threading.Lock()
        self._start = time.monotonic()
        self._bytes = 0.0

    def __call__(self, nbytes: int) -> None:
        if self.stop.is_set():
            raise CleanerStoppedError
        if self.rate >= 1e300:  # the default: no limit
            return
        with self._lock:
            now = time.monotonic()
            if now - self._start > self.WINDOW_S:
                self._start, self._bytes = now, 0.0
            self._bytes += nbytes
            wait = self._bytes / self.rate - (now - self._start)
        if wait > 0:
            self.stop.wait(wait)  # pacing real I/O: wall time, not the broker's clock


def read_entries(seg: LogSegment, throttle: Throttle, start: int = 0) -> Iterator[bytes]:
    """The entries of ``seg`` from byte ``start``, each as its own bytes, read in chunks."""
    pos, size, fd = start, seg.size, seg.fd
    while pos < size:
        buf = os.pread(fd, min(READ_CHUNK, size - pos), pos)
        used = 0
        while len(buf) - used >= LOG_OVERHEAD:
            n = LOG_OVERHEAD + ENTRY_HEAD.unpack_from(buf, used)[1]
            if n <= LOG_OVERHEAD or used + n > len(buf):
                break
            yield buf[used : used + n]
            used += n
        if used == 0:  # an entry larger than the chunk, or a bad size
            n = LOG_OVERHEAD + ENTRY_HEAD.unpack_from(buf, 0)[1] if len(buf) >= LOG_OVERHEAD else 0
            if n <= LOG_OVERHEAD or pos + n > size:
                return  # recovery cut torn tails at load: nothing sensible lies past this
            yield os.pread(fd, n, pos)
            used = n
        pos += used
        throttle(used)


def build_offset_map(
    segments: list[LogSegment],
    first_dirty: int,
    end: int,
    offsets: OffsetMap,
    throttle: Throttle,
    aborted: Callable[[int, int], bool],
) -> int:
    """Put the keys of the records in ``[first_dirty, end)`` into ``offsets``; where it stopped.

    Returns ``end`` when every record fit, else the offset after the last one
    the map took (the cleaning then covers only up to there).  Control
    batches and records of aborted transactions name no key.
    """
    for seg in segments:
        pos = seg.find_position(first_dirty) if seg.base_offset < first_dirty else 0
        if pos is None:
            continue
        for entry in read_entries(seg, throttle, pos):
            info = entry_info(entry)
            if info.last_offset < first_dirty or info.control:
                continue
            if info.base_offset >= end:
                return end
            for record in entry_records(entry):
                if record.offset < first_dirty or record.key is None:
                    continue
                if record.offset >= end:
                    return end
                if info.transactional and aborted(info.producer_id, record.offset):
                    continue
                if offsets.full and offsets.get(record.key) < 0:
                    return offsets.latest_offset + 1
                offsets.put(record.key, record.offset)
    return end


def group_segments(
    segments: list[LogSegment], max_bytes: int, max_index_bytes: int
) -> list[list[LogSegment]]:
    """Consecutive segments merged into one cleaned segment each, as Kafka groups them: at
    most ``segment.bytes`` of log and ``segment.index.bytes`` of index, offsets within an
    index entry's reach of the group's base."""
    groups: list[list[LogSegment]] = []
    i = 0
    while i < len(segments):
        group = [segments[i]]
        size, index = segments[i].size, segments[i].index.entries * 8
        i += 1
        while i < len(segments):
            seg = segments[i]
            if (
                size + seg.size > max_bytes
                or index + seg.index.entries * 8 > max_index_bytes
                or (seg.next_offset - 1) - group[0].base_offset > MAX_RELATIVE_OFFSET
            ):
                break
            group.append(seg)
            size += seg.size
            index += seg.index.entries * 8
            i += 1
        groups.append(group)
    return groups


@dataclass
class GroupResult:
    """What cleaning one group of segments read and wrote."""

    base: int
    bytes_read: int = 0
    bytes_written: int = 0
    records_read: int = 0
    records_kept: int = 0


def write_cleaned(
    directory: Path,
    group: list[LogSegment],
    rules: RetentionRules,
    throttle: Throttle,
    index_interval_bytes: int,
    index_max_bytes: int,
) -> GroupResult:
    """Write ``group``'s kept records as ``B.log.cleaned`` / ``B.index.cleaned`` and commit
    them to ``.swap`` (see :mod:`hmb.log.cleaner.swap`); the caller swaps them in."""
    base = group[0].base_offset
    result = GroupResult(base)
    log_path = swap.cleaned_path(directory, base, "log")
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    index = OffsetIndex(swap.cleaned_path(directory, base, "index"), base, index_max_bytes, new=True)
    try:
        pending = bytearray()
        position = 0
        since_index = 0
        for seg in group:
            rules.segment_modified_ms = int(seg.last_modified * 1000)
            for entry in read_entries(seg, throttle):
                result.bytes_read += len(entry)
                out = _clean_entry(entry, rules, result)
                if not out:
                    continue
                if since_index > index_interval_bytes and not index.full:
                    index.append(last_offset(out), position)
                    since_index = 0
                pending += out
                position += len(out)
                since_index += len(out)
                if len(pending) >= WRITE_CHUNK:
                    _write_all(fd, pending)
                    throttle(len(pending))
                    pending.clear()
        _write_all(fd, pending)
        throttle(len(pending))
        result.bytes_written = position
        os.fsync(fd)
    finally:
        os.close(fd)
        index.close()
    index_fd = os.open(index.path, os.O_RDONLY)
    try:
        os.fsync(index_fd)
    finally:
        os.close(index_fd)
    newest = max(seg.last_modified for seg in group)
    os.utime(log_path, (newest, newest))
    throttle(0)  # a stop requested meanwhile: never commit
    swap.commit_cleaned(directory, base, [seg.base_offset for seg in group])
    return result


def _clean_entry(entry: bytes, rules: RetentionRules, result: GroupResult) -> bytes:
    info = entry_info(entry)
    if info.control:
        result.records_read += 1
        if rules.keep_control(info):
            result.records_kept += 1
            return entry
        return b""
    keep = rules.record_keeper(info)
    horizon = rules.new_horizon_ms if info.magic >= 2 else NO_HORIZON
    out, kept = filter_entry(
        entry, _counting(keep, result), keep_empty=rules.keep_empty(info), new_horizon_ms=horizon
    )
    result.records_kept += kept
    if out and info.magic >= 2:
        rules.note_kept(info, entry_info(out).delete_horizon_ms)
    return out


def _counting(keep: Callable[..., bool], result: GroupResult) -> Callable[..., bool]:
    def counted(record: object) -> bool:
        result.records_read += 1
        return keep(record)

    return counted


def _write_all(fd: int, data: bytearray) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
