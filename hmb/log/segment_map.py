"""A partition's segments by base offset: the little of a sorted map that a log needs.

One list of segments, kept in base-offset order.  A partition nearly always has
one segment or a handful, and a broker may hold 10,000 partitions: a
general-purpose sorted dict (about 1 KiB each, empty) was the largest object
of an idle partition.  Segments are added at the end (a roll) and removed at
the front (retention), so the list stays cheap to keep sorted.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hmb.log.segment import LogSegment


def _base(seg: LogSegment) -> int:
    return seg.base_offset


class SegmentMap:
    """Base offset -> :class:`~hmb.log.segment.LogSegment`, in offset order.

    One list of segments, searched by their ``base_offset`` (a second list of
    the keys cost ~90 bytes of every partition); a segment is always stored
    under its own base offset."""

    __slots__ = ("_segments",)

    def __init__(self, items: Iterable[tuple[int, LogSegment]] = ()) -> None:
        self._segments: list[LogSegment] = []
        for base, seg in items:
            self[base] = seg

    def __len__(self) -> int:
        return len(self._segments)

    def __iter__(self) -> Iterator[int]:
        return iter(self.keys())

    def _find(self, base: int) -> int:
        return bisect.bisect_left(self._segments, base, key=_base)

    def __contains__(self, base: object) -> bool:
        if not isinstance(base, int):
            return False
        i = self._find(base)
        return i < len(self._segments) and self._segments[i].base_offset == base

    def __getitem__(self, base: int) -> LogSegment:
        i = self._find(base)
        if i == len(self._segments) or self._segments[i].base_offset != base:
            raise KeyError(base)
        return self._segments[i]

    def __setitem__(self, base: int, seg: LogSegment) -> None:
        if seg.base_offset != base:
            raise ValueError(f"segment at {seg.base_offset} stored under {base}")
        i = self._find(base)
        if i < len(self._segments) and self._segments[i].base_offset == base:
            self._segments[i] = seg
        else:
            self._segments.insert(i, seg)

    def keys(self) -> list[int]:
        return [seg.base_offset for seg in self._segments]

    def values(self) -> list[LogSegment]:
        """A copy: callers may change the map while walking it."""
        return list(self._segments)

    def items(self) -> list[tuple[int, LogSegment]]:
        return [(seg.base_offset, seg) for seg in self._segments]

    def peekitem(self, index: int = -1) -> tuple[int, LogSegment]:
        seg = self._segments[index]
        return seg.base_offset, seg

    def popitem(self, index: int = -1) -> tuple[int, LogSegment]:
        seg = self._segments.pop(index)
        return seg.base_offset, seg

    def bisect_right(self, base: int) -> int:
        return bisect.bisect_right(self._segments, base, key=_base)

    @property
    def first(self) -> LogSegment:
        return self._segments[0]

    @property
    def last(self) -> LogSegment:
        return self._segments[-1]
