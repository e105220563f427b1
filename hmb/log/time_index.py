"""The sparse time index of one segment: Kafka's ``.timeindex`` file.

Layout (Kafka's ``TimeIndex``): entries of 12 bytes, big-endian
``(timestamp int64, relative offset int32)``, the offset relative to the
segment's base offset.  An entry ``(T, O)`` says: every record of the segment
up to offset ``O`` has a timestamp of at most ``T``.  Entries are written
together with the offset index's (every ``index.interval.bytes``), only when
the segment's largest timestamp grew since the last one, so both columns
strictly increase; the segment's final largest timestamp is written when it
is rolled or closed, so a closed segment's last entry is its largest
timestamp.

Like the offset index (:mod:`hmb.log.index`), and through the same file
handling (:mod:`hmb.log.mapped_index`), the file is preallocated to
``segment.index.bytes``, memory-mapped, its disk blocks reserved
ahead of a write (a full disk is ``OSError``, not SIGBUS), trimmed to its
entries on close, and only a hint: a file that is missing, torn or points
past the log is rebuilt from the log by the segment's recovery.
"""

from __future__ import annotations

import bisect
import struct
from pathlib import Path
from typing import Any

from hmb.log.index import np
from hmb.log.mapped_index import MappedIndexFile

ENTRY_SIZE = 12
_ENTRY = struct.Struct(">qi")
_FILE_DTYPE = [("timestamp", ">i8"), ("offset", ">i4")]
_NO_ENTRIES: list[int] = []  # the entries of every empty time index (see TimeIndex.__init__)


class TimeIndex(MappedIndexFile):
    """Sparse largest-timestamp -> offset index of one segment."""

    ENTRY_SIZE = ENTRY_SIZE
    RESERVE_STEP = 12 * 1024  # 1,024 entries: a time index is written as rarely as the offset index

    SUFFIX = ".timeindex"

    __slots__ = ("_offsets", "_timestamps", "misaligned")

    def __init__(
        self,
        path: Path,
        base_offset: int,
        max_bytes: int,
        *,
        new: bool = False,
        directory: str | None = None,
    ) -> None:
        super().__init__(path, base_offset, max_bytes, new=new, directory=directory)
        existing = 0 if new else path.stat().st_size
        self.misaligned = existing % ENTRY_SIZE != 0
        # shared while empty, never appended to: the first entry makes the index its own lists
        self._timestamps: list[int] = _NO_ENTRIES
        self._offsets: list[int] = _NO_ENTRIES  # relative
        if existing >= ENTRY_SIZE:
            raw = np.fromfile(path, dtype=_FILE_DTYPE, count=existing // ENTRY_SIZE)
            stamps, offsets = raw["timestamp"].astype(np.int64), raw["offset"].astype(np.int64)
            n = _valid_prefix(stamps, offsets)  # an untrimmed file is mostly zeros: cut before listing
            self._timestamps, self._offsets = stamps[:n].tolist(), offsets[:n].tolist()
        self._allocated = len(self._timestamps) * ENTRY_SIZE

    # ------------------------------------------------------------------ state

    @property
    def entries(self) -> int:
        return len(self._timestamps)

    @property
    def full(self) -> bool:
        """No room for another interval entry: the last slot is kept for the final one."""
        return self.entries >= max(1, self.capacity - 1)

    def last_entry(self) -> tuple[int, int]:
        """``(timestamp, offset)`` of the last entry; ``(-1, base offset)`` when there is none."""
        if not self._timestamps:
            return -1, self.base_offset
        return self._timestamps[-1], self.base_offset + self._offsets[-1]

    def sane(self, next_offset: int) -> bool:
        """Whether the entries can be trusted against a log whose next offset is ``next_offset``."""
        return not self.misaligned and (
            not self._offsets or self.base_offset + self._offsets[-1] < next_offset
        )

    def entries_list(self) -> list[tuple[int, int]]:
        """The ``(timestamp, absolute offset)`` entries (for tests and tools)."""
        return [(t, self.base_offset + o) for t, o in zip(self._timestamps, self._offsets, strict=True)]

    # ------------------------------------------------------------------ writing

    def _count(self) -> int:
        return len(self._timestamps)

    def maybe_append(self, timestamp: int, offset: int, *, even_if_full: bool = False) -> None:
        """Add ``(timestamp, offset)`` when ``timestamp`` is larger than the last entry's.

        ``even_if_full``: the final entry, written at a roll or close, may take
        the last slot (a :attr:`full` index makes the segment roll first).
        """
        if timestamp < 0 or (self._timestamps and timestamp <= self._timestamps[-1]):
            return
        rel = offset - self.base_offset
        if self._offsets and rel <= self._offsets[-1]:
            return
        n = self.entries
        if n >= self.capacity or (self.full and not even_if_full):
            return
        if (n + 1) * ENTRY_SIZE > self._allocated:
            self.reserve()
        _ENTRY.pack_into(self._map(), n * ENTRY_SIZE, timestamp, rel)
        if self._timestamps is _NO_ENTRIES:
            self._timestamps, self._offsets = [], []
        self._timestamps.append(timestamp)
        self._offsets.append(rel)

    def reset(self) -> None:
        """Forget every entry (before a rebuild)."""
        self._zero(0, self.entries)
        self._timestamps = self._offsets = _NO_ENTRIES
        self.misaligned = False
        self.missing = False

    # ------------------------------------------------------------------ reading

    def offset_before(self, timestamp: int) -> int | None:
        """The largest indexed offset all of whose records (and all before it) are older than
        ``timestamp``; None when no entry is (the search starts at the segment's start)."""
        i = bisect.bisect_left(self._timestamps, timestamp) - 1
        return None if i < 0 else self.base_offset + self._offsets[i]


def _valid_prefix(stamps: Any, offsets: Any) -> int:
    """How many leading entries are well-formed (both columns strictly increasing).

    A preallocated file that was not trimmed (an unclean shutdown) ends in
    zeros: the first entry that does not increase ends the index.
    """
    n = len(stamps)
    if n == 0 or (stamps[0] == 0 and offsets[0] == 0):
        return 0  # zero padding
    bad = np.nonzero((np.diff(stamps) <= 0) | (np.diff(offsets) <= 0))[0]
    return int(bad[0]) + 1 if len(bad) else n
