"""One segment: a ``.log`` file of entries, its ``.index`` and its ``.timeindex``.

Files are named by the segment's base offset as 20 zero-padded digits
(``00000000000000368769.log``), exactly as Kafka names them, so the
directory can be inspected with Kafka's own tools.

Rules of this module:

* An append writes all of its bytes or none: on a failed write (disk full)
  the file is truncated back to where it was, so the log never holds half an
  entry that a reader could see.
* Reads hand out positions within the file for ``os.sendfile``; a segment
  that retention removes while a read is in flight is closed only when the
  last reader unpins it.
* The segment remembers which message formats (magic bytes) which byte
  ranges hold, as runs of positions: a reader that wants an older format
  (a legacy client) asks whether its range needs down-converting without
  reading it.  A range the
  segment cannot vouch for (before the last index entry after a clean
  start, or written by a caller that did not say) answers "unknown", and
  the reader checks the bytes themselves.
"""

from __future__ import annotations

import bisect
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hmb.log.index import OffsetIndex
from hmb.log.scan import BadEntry, Entry, iter_entries
from hmb.log.time_index import TimeIndex
from kproto.records.entry import LOG_OVERHEAD, PEEK, check_entry, entry_size, last_offset

log = logging.getLogger(__name__)

UNKNOWN_MAGIC = -1
# The magic runs most segments have, shared (never written; see LogSegment._note_magic):
# none (empty), or one from the start of the file.
_NO_RUNS: list[int] = []
_AT_ZERO: list[int] = [0]
_ONE_RUN: dict[int, list[int]] = {m: [m] for m in (UNKNOWN_MAGIC, 0, 1, 2)}


def segment_name(base_offset: int) -> str:
    return f"{base_offset:020d}"


def _fsync_dir(directory: Path | str) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class RecoveryReport:
    """What recovery found in one segment."""

    entries: int
    truncated_bytes: int
    reason: str | None
    index_problem: str | None = None  # why the index could not be kept as it was, if it could not


def log_recovery(partition: str, seg: LogSegment, report: RecoveryReport) -> None:
    """Say what recovery did to ``seg`` of ``partition`` (``topic-N``): a warning when it cut
    bytes or found the index damaged, else a note."""
    index = f"index rebuilt ({report.index_problem})" if report.index_problem else "index rebuilt"
    name = seg.log_path.name
    if report.truncated_bytes:
        log.warning(
            "recovered %s segment %s: %d valid entries, truncated %d bytes (%s), %s",
            partition,
            name,
            report.entries,
            report.truncated_bytes,
            report.reason,
            index,
        )
    else:
        (log.warning if report.index_problem else log.info)(
            "recovered %s segment %s: %d valid entries, %s", partition, name, report.entries, index
        )


class LogSegment:
    """A ``.log`` file and its two indexes, starting at ``base_offset``.

    Slotted, and its file paths are made when asked for: a broker holds one per
    partition at least, thousands of them."""

    __slots__ = (
        "_bytes_since_index",
        "_deleted",
        "_dir_synced",
        "_directory",
        "_pins",
        "_run_magics",
        "_run_starts",
        "base_offset",
        "created",
        "fd",
        "index",
        "index_interval_bytes",
        "max_timestamp",
        "next_offset",
        "size",
        "time_index",
    )

    def __init__(
        self,
        directory: Path | str,
        base_offset: int,
        *,
        index_interval_bytes: int = 4096,
        index_max_bytes: int = 10 * 1024 * 1024,
        new: bool = False,
    ) -> None:
        """``new``: create the files of a segment that does not exist yet (nothing to read)."""
        # the partition's str, shared (a Path per segment was ~0.2 KiB): see the directory property
        self._directory = directory = os.fspath(directory)
        self.base_offset = base_offset
        log_path = os.path.join(directory, segment_name(base_offset) + ".log")
        self.index_interval_bytes = index_interval_bytes
        # a file created here needs its directory fsync'd
        self._dir_synced = not new and os.path.exists(log_path)
        self.fd = os.open(log_path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        self.size = 0 if new else os.fstat(self.fd).st_size
        # A log without its index file (deleted, lost) gets it rebuilt at load, as in Kafka.
        # OffsetIndex creates the file with the segment, so a healthy segment always has one.
        self.index = OffsetIndex.of_segment(directory, base_offset, index_max_bytes, new=new)
        self.time_index = TimeIndex.of_segment(directory, base_offset, index_max_bytes, new=new)
        self.next_offset = base_offset  # set properly by load_tail() / recover()
        self._bytes_since_index = 0
        self._pins = 0
        self._deleted = False
        self.created = time.time()
        # The largest record timestamp in the segment (-1: none yet); kept on every append,
        # learned at load from the time index's last entry and the walk of the tail.
        self.max_timestamp = -1
        # Runs of equal (maximum) magic: run i covers [_run_starts[i], _run_starts[i+1]).
        # Shared while the segment has no run or one (see _note_magic).
        self._run_starts: list[int] = _NO_RUNS
        self._run_magics: list[int] = _NO_RUNS
        if self.size:
            self._note_magic(0, UNKNOWN_MAGIC)

    # Paths are made when asked for, not kept: two per segment were ~0.5 KiB of every partition.
    @property
    def log_path(self) -> Path:
        return Path(self._directory, segment_name(self.base_offset) + ".log")

    @property
    def directory(self) -> Path:
        return Path(self._directory)

    @property
    def index_path(self) -> Path:
        return self.index.path

    @property
    def index_missing(self) -> bool:
        """The ``.index`` file was not there when the segment was opened (it is rebuilt)."""
        return self.index.missing

    # ---------------------------------------------------------------- loading

    def _index_problem(self) -> str | None:
        """What is wrong with the index as loaded, judged from the file sizes alone."""
        if self.index_missing and self.size:
            return "index file missing"
        if self.index._misaligned:
            return "index file size not a multiple of 8 (torn entry)"
        if not self.index.sane(self.size):
            return "index entry points past the end of the log"
        if self.time_index.missing and self.size:
            return "time index file missing"
        if self.time_index.misaligned:
            return "time index file size not a multiple of 12 (torn entry)"
        return None

    def recover(self, max_entry: int) -> RecoveryReport:
        """Validate every entry, truncate a torn or corrupt tail, rebuild the index.

        The repaired file is fsync'd: what is served after a recovery must not
        disappear at the next power loss (its offsets would be handed out again).
        """
        problem = self._index_problem()
        loaded = self.index.entries_array().tolist()
        loaded_times = self.time_index.entries_list()
        self.index.reset()
        self.time_index.reset()
        self.max_timestamp = -1
        self._bytes_since_index = 0
        self._run_starts = self._run_magics = _NO_RUNS
        entries = 0
        good_end = 0
        reason = None
        last = self.base_offset - 1
        no_room: OSError | None = None
        for item in iter_entries(self.fd, 0, self.size, validate=True, max_entry=max_entry):
            if isinstance(item, BadEntry):
                reason = item.reason
                break
            if item.last_offset < self.base_offset:
                reason = f"offset {item.last_offset} below segment base {self.base_offset}"
                break
            if no_room is None:
                try:
                    self._index_entry(item.last_offset, item.position, item.size, item.max_timestamp)
                except OSError as exc:  # a full disk: the index stops here, reads scan on from it
                    no_room = exc
            else:
                self._bytes_since_index += item.size
                self.max_timestamp = max(self.max_timestamp, item.max_timestamp)
            self._note_magic(item.position, item.magic)
            entries += 1
            good_end = item.position + item.size
            last = item.last_offset
        truncated = self.size - good_end
        if truncated:
            os.ftruncate(self.fd, good_end)
            self.size = good_end
        os.fsync(self.fd)
        self.next_offset = last + 1
        rebuilt = self.index.entries_array().tolist()
        kept = [e for e in loaded if e[1] < good_end]  # entries into a cut tail go with it
        if problem is None and kept != rebuilt[: len(kept)]:
            problem = f"{len(kept)} index entries did not match the log, {len(rebuilt)} rebuilt"
        kept_times = [e for e in loaded_times if e[1] <= last]
        rebuilt_times = self.time_index.entries_list()
        if problem is None and kept_times[: len(rebuilt_times)] != rebuilt_times[: len(kept_times)]:
            problem = f"{len(kept_times)} time index entries did not match the log, rebuilt"
        if no_room is not None:
            problem = (
                f"{problem + '; ' if problem else ''}no room to rebuild the index past "
                f"{len(rebuilt)} entries ({no_room.strerror}): lookups scan the log from there"
            )
        return RecoveryReport(entries, truncated, reason if truncated else None, problem)

    def load_tail(self, max_entry: int) -> RecoveryReport | None:
        """Cheap load after a clean shutdown: trust the index, walk from its last entry.

        Returns ``None`` when that worked, or falls back to :meth:`recover`
        (and returns its report) when the index or the tail look wrong.
        """
        times = self.time_index
        if not self.index.sane(self.size) or (self.index_missing and self.size):
            return self.recover(max_entry)
        if times.misaligned or (times.missing and self.size):
            return self.recover(max_entry)
        _off, pos = self.index.last_entry()
        last = self.base_offset - 1
        largest = times.last_entry()[0]  # the final entry of a closed segment: its largest timestamp
        # The walk covers about one index interval: checking CRCs there costs nothing and
        # keeps a corrupt tail from being served even when the marker says "clean".
        for item in iter_entries(self.fd, pos, self.size, validate=True, max_entry=max_entry):
            if isinstance(item, BadEntry):
                return self.recover(max_entry)
            last = item.last_offset
            largest = max(largest, item.max_timestamp)
            self._note_magic(item.position, item.magic)
        if not times.sane(last + 1):
            return self.recover(max_entry)
        self.next_offset = last + 1
        self.max_timestamp = largest
        self._bytes_since_index = self.size - pos
        return None

    # ---------------------------------------------------------------- writing

    def _index_entry(self, last_offset: int, position: int, size: int, max_timestamp: int) -> None:
        """Note an entry; past ``index.interval.bytes`` since the last, index it in both files."""
        if max_timestamp > self.max_timestamp:
            self.max_timestamp = max_timestamp
        if self._bytes_since_index > self.index_interval_bytes and not self.index.full:
            self.index.append(last_offset, position)
            if not self.time_index.full:
                self.time_index.maybe_append(self.max_timestamp, last_offset)
            self._bytes_since_index = 0
        self._bytes_since_index += size

    def append(
        self,
        data: bytes | bytearray | memoryview,
        last_offset: int,
        magic: int = UNKNOWN_MAGIC,
        max_timestamp: int | None = None,
    ) -> int:
        """Append entries ending at ``last_offset``; returns their file position.

        ``magic`` is the highest magic among the entries (``UNKNOWN_MAGIC`` if
        the caller does not know), ``max_timestamp`` their largest timestamp
        (None: read from their headers).  All or nothing: on ``OSError`` the
        file is cut back and the error re-raised for the caller to turn into
        an error code.
        """
        position = self.size
        if max_timestamp is None:
            max_timestamp = _headers_max_timestamp(data)
        if self._bytes_since_index > self.index_interval_bytes:  # this append writes index entries:
            self.index.reserve()  # a full disk fails here, before the log is touched
            self.time_index.reserve()
        size = len(data)
        try:
            written = os.write(self.fd, data)
            if written < size:  # a short write (signal, nearly full disk): write the rest
                view = memoryview(data)
                while written < size:
                    written += os.write(self.fd, view[written:])
        except OSError:
            try:
                os.ftruncate(self.fd, position)
            except OSError:  # pragma: no cover - nothing better to do; recovery will cut it
                log.exception("could not truncate %s after a failed append", self.log_path)
            raise
        self.size += written
        self._index_entry(last_offset, position, written, max_timestamp)
        self._note_magic(position, magic)
        self.next_offset = last_offset + 1
        return position

    def _note_magic(self, position: int, magic: int) -> None:
        """Entries of (at most) ``magic`` start at ``position``, after every earlier run."""
        starts, magics = self._run_starts, self._run_magics
        if magics and magics[-1] == magic:
            return
        if starts is _NO_RUNS and position == 0 and magic in _ONE_RUN:
            self._run_starts, self._run_magics = _AT_ZERO, _ONE_RUN[magic]  # shared, as most are
            return
        if starts is _NO_RUNS or starts is _AT_ZERO:  # shared lists: the segment's own from now on
            starts, magics = self._run_starts, self._run_magics = list(starts), list(magics)
        if starts and starts[-1] == position:
            magics[-1] = magic
            return
        starts.append(position)
        magics.append(magic)

    def max_magic(self, position: int, length: int) -> int:
        """The highest magic of the entries in ``[position, position + length)``.

        ``UNKNOWN_MAGIC`` when some of the range was not seen entry by entry.
        """
        starts = self._run_starts
        i = bisect.bisect_right(starts, position) - 1
        if i < 0:
            return UNKNOWN_MAGIC
        end = position + length
        best = self._run_magics[i]
        i += 1
        while i < len(starts) and starts[i] < end:
            magic = self._run_magics[i]
            if magic == UNKNOWN_MAGIC or best == UNKNOWN_MAGIC:
                return UNKNOWN_MAGIC
            best = max(best, magic)
            i += 1
        return best

    @property
    def index_full(self) -> bool:
        """Either index is full: the segment must roll (as Kafka rolls on a full time index)."""
        return self.index.full or self.time_index.full

    @property
    def largest_timestamp(self) -> int:
        """What time retention judges the segment by, in ms: its largest record timestamp,
        or, when no record carries one, the file's modification time (as Kafka)."""
        return self.max_timestamp if self.max_timestamp >= 0 else int(self.last_modified * 1000)

    def seal(self) -> None:
        """The segment is no longer the active one (a roll): write the time index's final
        entry (the segment's largest timestamp) and trim both indexes to their entries."""
        try:
            self.time_index.maybe_append(self.max_timestamp, self.next_offset - 1, even_if_full=True)
        except OSError as exc:  # no disk block for it: a later load walks the tail instead
            log.warning("no final time index entry for %s: %s", self.log_path, exc)
        self.index.close()
        self.time_index.close()

    def flush(self) -> None:
        os.fsync(self.fd)
        self.index.flush()
        self.time_index.flush()
        if not self._dir_synced:
            # A new file's name is durable only once its directory is: without this a
            # power loss could take a whole new segment, acknowledged messages and all.
            _fsync_dir(self._directory)
            _fsync_dir(self.directory.parent)  # the partition directory may be new too
            self._dir_synced = True

    # ---------------------------------------------------------------- reading

    def find_position(self, offset: int) -> int | None:
        """File position of the first entry whose last offset is >= ``offset``."""
        _off, pos = self.index.lookup(offset)
        while pos < self.size:
            head = os.pread(self.fd, PEEK, pos)
            if len(head) < LOG_OVERHEAD + 5:
                return None
            if last_offset(head) >= offset:
                return pos
            pos += entry_size(head)
        return None

    def entry_size(self, position: int) -> int:
        """Size of the entry at ``position``, its 12-byte offset/size header included."""
        return entry_size(os.pread(self.fd, LOG_OVERHEAD, position))

    def entries(self) -> Iterator[Entry | BadEntry]:
        """Every entry, checksums unchecked (they were checked when written or recovered)."""
        return iter_entries(self.fd, 0, self.size, validate=False)

    def pin(self) -> None:
        """Keep the file open until the matching :meth:`unpin`, even if the segment is deleted."""
        self._pins += 1

    def unpin(self) -> None:
        self._pins -= 1
        if self._deleted and self._pins == 0:
            self._close_fd()

    @contextmanager
    def pinned(self) -> Iterator[LogSegment]:
        """Keep the file open for the duration of a read."""
        self.pin()
        try:
            yield self
        finally:
            self.unpin()

    @property
    def last_modified(self) -> float:
        try:
            return os.fstat(self.fd).st_mtime
        except OSError:
            return self.created

    # ---------------------------------------------------------------- closing

    def _close_fd(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def close(self) -> None:
        self.seal()
        if self._pins == 0:
            self._close_fd()

    def discard(self) -> None:
        """Close without flushing: the topic is being deleted, its files are about to go.

        An fsync per file (and two per new directory) cost DeleteTopics of
        4,000 partitions six seconds, all of it blocking the event loop.
        """
        self.index.discard()
        self.time_index.discard()
        if self._pins == 0:
            self._close_fd()

    def delete(self) -> None:
        """Remove both files; the descriptor stays valid for pinned readers."""
        self._deleted = True
        self.index.delete()
        self.time_index.delete()
        # the aborted-transaction index (hmb.log.txn_index), when the segment has one
        self.directory.joinpath(segment_name(self.base_offset) + ".txnindex").unlink(missing_ok=True)
        try:
            os.unlink(self.log_path)
        except FileNotFoundError:
            pass
        if self._pins == 0:
            self._close_fd()

    def __repr__(self) -> str:
        return f"<LogSegment {self.log_path.name} size={self.size} next={self.next_offset}>"


def _headers_max_timestamp(data: bytes | bytearray | memoryview) -> int:
    """The largest timestamp the headers of the entries in ``data`` state (-1: none)."""
    best = -1
    pos, end = 0, len(data)
    view = memoryview(data)
    try:
        while end - pos > LOG_OVERHEAD:
            size = entry_size(view, pos)
            found = check_entry(view[pos : pos + size], validate=False)
            if isinstance(found, str):
                break
            best = max(best, found[2])
            pos += size
    finally:
        view.release()
    return best
