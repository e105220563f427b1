"""A file region: what a read of the log hands out, and all the API and network layers see of it.

Rules of this module:

* It imports nothing else of the log: the network layer may import it and
  nothing more (it needs ``fd``, ``position`` and ``length`` for
  ``os.sendfile``).
* Whatever a reader needs from the bytes behind a region (the bytes, the
  whole first entry, the message formats it holds) is a method here, so no
  caller reads log files or looks at segments itself.
* A region is valid while the read that produced it is open (the segment is
  pinned: retention may unlink the file, the descriptor stays open) and
  :meth:`FileRegion.release` lets go of it once.
* A region is one slotted object: a Fetch of thousands of partitions makes
  one per partition.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class RegionSource(Protocol):
    """The open file a region is a slice of (a log segment)."""

    @property
    def fd(self) -> int: ...

    @property
    def log_path(self) -> Path: ...

    def entry_size(self, position: int) -> int: ...

    def max_magic(self, position: int, length: int) -> int: ...

    def unpin(self) -> None: ...


@dataclass(frozen=True, slots=True)
class FileRegion:
    """``length`` bytes at ``position`` of an open segment file."""

    segment: RegionSource
    position: int
    length: int

    @property
    def fd(self) -> int:
        return self.segment.fd

    def read(self) -> bytes:
        """The bytes themselves (when zero-copy is not possible or wanted)."""
        return os.pread(self.segment.fd, self.length, self.position)

    def whole_entry(self) -> bytes:
        """The whole first entry of the region, even where it reaches beyond ``length``."""
        size = self.segment.entry_size(self.position)
        return os.pread(self.segment.fd, size, self.position) if size else b""

    def max_magic(self) -> int | None:
        """The highest message format (magic) in the region, if the log knows it without reading.

        ``None``: some of the range was not seen entry by entry (read the
        bytes and look at the entry headers).
        """
        magic = self.segment.max_magic(self.position, self.length)
        return None if magic < 0 else magic

    def release(self) -> None:
        """Let go of the segment the read pinned for this region (once, when it has been sent)."""
        self.segment.unpin()

    def __str__(self) -> str:
        return f"{self.segment.log_path}@{self.position}+{self.length}"
