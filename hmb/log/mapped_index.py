"""The file side of a segment's index: preallocated, memory-mapped, blocks reserved ahead.

Both of a segment's indexes (:mod:`hmb.log.index`, :mod:`hmb.log.time_index`)
keep fixed-size entries in a file handled the same way, as Kafka's
``AbstractIndex`` handles them; what an entry means is each index's own
business.  Rules of this module:

* Every segment has its index files, as in Kafka, even before an entry: the
  file is created empty when the index is.
* For writing, the file is grown (sparse) to its capacity, ``max_bytes``
  rounded down to whole entries, and memory-mapped; entries are packed
  straight into the mapped bytes (lookups read the indexes' numpy mirrors,
  never the map).
* The map is advised ``MADV_RANDOM``: the first touch of a fresh index is a
  fault on a hole, and the kernel's readahead for it zeroed a large run of
  pages, 2-6 ms of the event loop for the first entry of every new index,
  two per segment, back to back when many partitions reach their first
  entries together.  Entries are written a page at a time, so readahead
  never helped; without it the fault costs ~10 µs.
* A mapped page with no disk block behind it kills the process with SIGBUS
  when the disk is full, instead of raising: :meth:`MappedIndexFile.reserve`
  allocates blocks ahead of the next entry (in ``RESERVE_STEP`` steps), so a
  full disk is ``OSError(ENOSPC)`` before anything is written.
* On close the file is trimmed to its entries (Kafka trims on close); a file
  about to be removed is only unmapped.
* A broker holds an index pair per segment of every partition, thousands of
  them mostly empty: the classes have ``__slots__``, and an index of a segment
  (:meth:`MappedIndexFile.of_segment`) keeps no path of its own but makes it
  from the partition's directory when asked.  Nothing is mapped (no page
  touched) before the first entry is written.
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path
from typing import Self


class MappedIndexFile:
    """The file of one index: subclasses set ``ENTRY_SIZE`` and ``RESERVE_STEP``, and say how
    many entries they hold (:meth:`_count`)."""

    ENTRY_SIZE = 8
    RESERVE_STEP = 64 * 1024
    SUFFIX = ".index"  # of the file in a segment's directory (see of_segment)

    __slots__ = ("_allocated", "_bytes", "_directory", "_max_bytes", "_mm", "_path", "base_offset", "missing")

    def __init__(
        self, path: Path, base_offset: int, max_bytes: int, *, new: bool, directory: str | None = None
    ) -> None:
        """``new``: the segment is being created, so there is no file to read yet.

        ``directory``: ``path`` is this index's usual file in it (see :meth:`of_segment`),
        and is not kept."""
        self._directory = directory
        self._path = None if directory is not None else path
        self.base_offset = base_offset
        self._max_bytes = max_bytes  # the setting's own int, shared: capacity is derived from it
        self.missing = not new and not path.exists()
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))
        self._mm: mmap.mmap | None = None
        self._bytes: memoryview | None = None
        self._allocated = 0  # bytes known to have disk blocks: set by the subclass once it has read

    @property
    def capacity(self) -> int:
        """How many entries the file holds at most: ``max_bytes`` in whole entries."""
        return max(1, self._max_bytes // self.ENTRY_SIZE)

    @classmethod
    def of_segment(cls, directory: str, base_offset: int, max_bytes: int, *, new: bool) -> Self:
        """The index of the segment at ``base_offset`` in ``directory`` (the partition's, shared)."""
        return cls(
            Path(directory, cls.file_name(base_offset)), base_offset, max_bytes, new=new, directory=directory
        )

    @classmethod
    def file_name(cls, base_offset: int) -> str:
        """The index's file name in a segment's directory, as Kafka names it."""
        return f"{base_offset:020d}{cls.SUFFIX}"

    @property
    def path(self) -> Path:
        if self._path is not None:
            return self._path
        assert self._directory is not None
        return Path(self._directory, self.file_name(self.base_offset))

    def _count(self) -> int:  # pragma: no cover - every index defines it
        raise NotImplementedError

    @property
    def full(self) -> bool:
        return self._count() >= self.capacity

    def _map(self) -> memoryview:
        """The file's bytes, mapped for writing (grown to capacity first)."""
        if self._bytes is None:
            size = self.capacity * self.ENTRY_SIZE
            with open(self.path, "r+b") as f:
                if f.seek(0, os.SEEK_END) < size:
                    f.truncate(size)
                self._mm = mmap.mmap(f.fileno(), size)
            self._mm.madvise(mmap.MADV_RANDOM)  # see the module header
            self._bytes = memoryview(self._mm)
        return self._bytes

    def _unmap(self) -> None:
        if self._bytes is not None:
            self._bytes.release()
            self._bytes = None
        if self._mm is not None:
            self._mm.close()
            self._mm = None

    def _zero(self, first: int, end: int) -> None:
        """Overwrite entries ``[first, end)`` with zeros (a truncation or a reset)."""
        if end > first:
            view = self._map()
            view[first * self.ENTRY_SIZE : end * self.ENTRY_SIZE] = bytes((end - first) * self.ENTRY_SIZE)

    def reserve(self) -> None:
        """Make sure the next entry has real disk blocks behind it (see the module header)."""
        needed = (self._count() + 1) * self.ENTRY_SIZE
        if needed <= self._allocated or self.full:
            return
        end = min(self.capacity * self.ENTRY_SIZE, max(needed, self._allocated + self.RESERVE_STEP))
        fd = os.open(self.path, os.O_RDWR)
        try:
            os.posix_fallocate(fd, self._allocated, end - self._allocated)
        finally:
            os.close(fd)
        self._allocated = end

    def flush(self) -> None:
        if self._mm is not None:
            self._mm.flush()

    def close(self) -> None:
        """Flush, unmap and trim the file to its entries."""
        self.flush()
        self._unmap()
        if self.path.exists():
            with open(self.path, "r+b") as f:
                f.truncate(self._count() * self.ENTRY_SIZE)

    def discard(self) -> None:
        """Unmap without msync or trim: the file is about to be removed."""
        self._unmap()

    def delete(self) -> None:
        self._unmap()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
