"""A partition's segments by base offset: the little of a sorted map that a log needs.

Two parallel lists, kept in base-offset order.  A partition nearly always has
one segment or a handful, and a broker may hold 10,000 partitions: a
general-purpose sorted dict (about 1 KiB each, empty) was the largest object
of an idle partition.  Segments are added at the end (a roll) and removed at
the front (retention), so the lists stay cheap to keep sorted.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hmb.log.segment import LogSegment


class SegmentMap:
    """Base offset -> :class:`~hmb.log.segment.LogSegment`, in offset order."""

    __slots__ = ("_bases", "_segments")

    def __init__(self, items: Iterable[tuple[int, LogSegment]] = ()) -> None:
        self._bases: list[int] = []
        self._segments: list[LogSegment] = []
        for base, seg in items:
            self[base] = seg

    def __len__(self) -> int:
        return len(self._bases)

    def __iter__(self) -> Iterator[int]:
        return iter(list(self._bases))

    def __contains__(self, base: object) -> bool:
        if not isinstance(base, int):
            return False
        i = bisect.bisect_left(self._bases, base)
        return i < len(self._bases) and self._bases[i] == base

    def __getitem__(self, base: int) -> LogSegment:
        i = bisect.bisect_left(self._bases, base)
        if i == len(self._bases) or self._bases[i] != base:
            raise KeyError(base)
        return self._segments[i]

    def __setitem__(self, base: int, seg: LogSegment) -> None:
        i = bisect.bisect_left(self._bases, base)
        if i < len(self._bases) and self._bases[i] == base:
            self._segments[i] = seg
        else:
            self._bases.insert(i, base)
            self._segments.insert(i, seg)

    def keys(self) -> list[int]:
        return list(self._bases)

    def values(self) -> list[LogSegment]:
        """A copy: callers may change the map while walking it."""
        return list(self._segments)

    def items(self) -> list[tuple[int, LogSegment]]:
        return list(zip(self._bases, self._segments, strict=True))

    def peekitem(self, index: int = -1) -> tuple[int, LogSegment]:
        return self._bases[index], self._segments[index]

    def popitem(self, index: int = -1) -> tuple[int, LogSegment]:
        return self._bases.pop(index), self._segments.pop(index)

    def bisect_right(self, base: int) -> int:
        return bisect.bisect_right(self._bases, base)

    @property
    def first(self) -> LogSegment:
        return self._segments[0]

    @property
    def last(self) -> LogSegment:
        return self._segments[-1]
