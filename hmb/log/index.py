"""The sparse offset index of one segment: Kafka's ``.index`` file.

Layout (Kafka's ``OffsetIndex``): entries of 8 bytes, big-endian
``(relative offset u32, file position u32)``; relative to the segment's base
offset.  One entry is written whenever more than ``log.index.interval.bytes``
were appended since the previous one, so a lookup lands within a few KiB of
the wanted message and the rest is a short scan of message headers.

The file is preallocated to ``log.index.size.max.bytes``, memory-mapped as
Kafka maps it, and trimmed to its entries on close
(:mod:`hmb.log.mapped_index`, shared with the time index).
numpy is imported on first use, not with this module: an empty index (what
a fresh broker's start creates) needs none, and numpy's import would be a
third of ``hmb serve``'s start-up.  ``hmb serve`` imports it from a worker
thread once it listens (:func:`load_numpy`), before a first entry needs it.
Searching a big-endian map with ``searchsorted`` would copy it on every call,
so a native-endian mirror of the keys is kept in memory for lookups.

Rules: an index is only a hint.  Whatever it says is checked against the log
when loaded (``sane()``); a doubtful index is rebuilt from the log, never
trusted.
"""

from __future__ import annotations

import array
import importlib
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hmb.log.mapped_index import MappedIndexFile

if TYPE_CHECKING:
    import numpy as np
else:

    class _LazyNumpy:
        """``np`` until numpy is first needed; then the module itself replaces it."""

        def __getattr__(self, name: str) -> Any:
            import numpy

            globals()["np"] = numpy
            return getattr(numpy, name)

    np = _LazyNumpy()


def load_numpy() -> None:
    """Import numpy now, from a worker thread of ``hmb serve`` once it listens.

    Otherwise the first index entry of the process imports it on the event
    loop: 40-60 ms in which no connection is answered, under load too (a
    thousand producers crossing their first ``log.index.interval.bytes``).
    From a thread, the import shares the interpreter in switch intervals.
    """
    globals()["np"] = importlib.import_module("numpy")


ENTRY_SIZE = 8
_BE = ">u4"  # big-endian u32, the file's layout
_ENTRY = struct.Struct(">II")
# shared, never written: the first append grows a numpy array (numpy is not imported before)
_NO_ENTRIES: Any = array.array("I")


def _grown(array: np.ndarray, used: int) -> np.ndarray:
    """A copy of ``array[:used]`` with room for as many entries again (at least 16)."""
    out = np.zeros(max(16, 2 * used), dtype=np.uint32)
    out[:used] = array[:used]
    return out


class OffsetIndex(MappedIndexFile):
    """Sparse offset -> position index of one segment."""

    ENTRY_SIZE = ENTRY_SIZE
    RESERVE_STEP = 64 * 1024

    __slots__ = ("_keys", "_last_key", "_misaligned", "_positions", "entries")

    def __init__(
        self,
        path: Path,
        base_offset: int,
        max_bytes: int = 10 * 1024 * 1024,
        *,
        new: bool = False,
        directory: str | None = None,
    ) -> None:
        super().__init__(path, base_offset, max_bytes, new=new, directory=directory)
        existing = 0 if new else path.stat().st_size
        entries = existing // ENTRY_SIZE
        # in-memory mirrors; an index with no entry shares one empty array (10,000 partitions)
        self._keys = _NO_ENTRIES
        self._positions = _NO_ENTRIES
        self.entries = 0
        if entries:
            self._keys = np.zeros(entries, dtype=np.uint32)
            self._positions = np.zeros(entries, dtype=np.uint32)
            raw = np.fromfile(path, dtype=_BE, count=entries * 2).reshape(-1, 2)
            keys = raw[:, 0].astype(np.uint32)
            positions = raw[:, 1].astype(np.uint32)
            self.entries = _valid_prefix(keys, positions)
            self._keys[: self.entries] = keys[: self.entries]
            self._positions[: self.entries] = positions[: self.entries]
        self._last_key = int(self._keys[self.entries - 1]) if self.entries else -1
        self._allocated = self.entries * ENTRY_SIZE
        self._misaligned = existing % ENTRY_SIZE != 0

    # ------------------------------------------------------------------ writing

    def _count(self) -> int:
        return self.entries

    def append(self, offset: int, position: int) -> None:
        """Record that the message(s) starting at ``offset`` begin at ``position``."""
        rel = offset - self.base_offset
        if rel <= self._last_key:
            return  # keys stay strictly increasing; a repeat adds nothing
        n = self.entries
        if n >= self.capacity:
            raise IndexError("offset index is full")
        if (n + 1) * ENTRY_SIZE > self._allocated:
            # the write below goes to a mapped page: without a block behind it a full
            # disk is SIGBUS; reserve() turns it into OSError(ENOSPC) (rebuilds reach here)
            self.reserve()
        if n == len(self._keys):
            self._keys = _grown(self._keys, n)
            self._positions = _grown(self._positions, n)
        # packed straight into the mapped bytes: a numpy row assignment through the memmap
        # subclass costs several times a struct.pack_into
        _ENTRY.pack_into(self._bytes or self._map(), n * ENTRY_SIZE, rel, position)
        self._keys[n] = rel
        self._positions[n] = position
        self.entries = n + 1
        self._last_key = rel

    def truncate_to_position(self, position: int) -> None:
        """Drop entries pointing at or beyond ``position`` (after a log truncation)."""
        keep = int(np.searchsorted(self._positions[: self.entries], np.uint32(position), side="left"))
        if keep < self.entries:
            self._zero(keep, self.entries)
            self.entries = keep
            self._last_key = int(self._keys[keep - 1]) if keep else -1

    def reset(self) -> None:
        """Forget every entry (before a rebuild)."""
        self._zero(0, self.entries)
        self.entries = 0
        self._last_key = -1
        self._misaligned = False

    # ------------------------------------------------------------------ reading

    def lookup(self, offset: int) -> tuple[int, int]:
        """``(offset, position)`` of the last entry at or before ``offset``, else the segment start."""
        rel = offset - self.base_offset
        if rel < 0 or not self.entries:
            return self.base_offset, 0
        if rel >= 1 << 32:
            i = self.entries - 1
        else:
            i = int(np.searchsorted(self._keys[: self.entries], np.uint32(rel), side="right")) - 1
        if i < 0:
            return self.base_offset, 0
        return self.base_offset + int(self._keys[i]), int(self._positions[i])

    def offset_from(self, position: int) -> int | None:
        """The offset of the first entry indexed at or after byte ``position`` (None: none is).

        Every entry that starts before ``position`` holds only smaller offsets.
        """
        if not self.entries:
            return None
        i = int(np.searchsorted(self._positions[: self.entries], np.uint32(position), side="left"))
        return None if i >= self.entries else self.base_offset + int(self._keys[i])

    def last_entry(self) -> tuple[int, int]:
        if not self.entries:
            return self.base_offset, 0
        return self.base_offset + int(self._keys[self.entries - 1]), int(self._positions[self.entries - 1])

    def sane(self, log_size: int) -> bool:
        """Whether the entries can be trusted against a log of ``log_size`` bytes."""
        if self._misaligned:
            return False
        if not self.entries:
            return True
        return int(self._positions[self.entries - 1]) < log_size

    def entries_array(self) -> np.ndarray:
        """A copy of the ``(relative offset, position)`` pairs (for tests and tools)."""
        return np.stack([self._keys[: self.entries], self._positions[: self.entries]], axis=1)


def _valid_prefix(keys: np.ndarray, positions: np.ndarray) -> int:
    """How many leading entries are well-formed: keys and positions strictly increasing.

    A preallocated file that was not trimmed (unclean shutdown) ends in
    zeros; the first entry that does not increase ends the index.
    """
    n = len(keys)
    if n == 0 or positions[0] == 0:
        return 0  # position 0 is never indexed (the segment start needs no entry): padding
    bad = np.nonzero((np.diff(keys.astype(np.int64)) <= 0) | (np.diff(positions.astype(np.int64)) <= 0))[0]
    return int(bad[0]) + 1 if len(bad) else n
