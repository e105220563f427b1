"""Reading a partition: the file region a fetch sends, bounded by what its reader may see.

Rules:

* A consumer reads up to the high watermark (what every in-sync replica
  holds), a read_committed one further bounded by the last stable offset
  (``end_offset``); a follower copying the log (``replica``) reads up to the
  log end.
* Out of range is outside the log (below its start, past its end), as
  Kafka's: a consumer between the high watermark and the log end (a new
  leader's high watermark may lag what the old one had shown) gets nothing
  yet, not OFFSET_OUT_OF_RANGE and a reset.
* The region starts at the entry holding the offset asked for and never
  splits an entry at its start; ``min_one`` makes it hold that whole first
  entry even past ``max_bytes`` so that a reader with a small limit still
  makes progress.
* The segment is pinned while the region is in use: a retention or a
  truncation meanwhile keeps the file open until the reader lets go.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from hmb.log.errors import OffsetOutOfRangeError
from hmb.log.region import FileRegion

if TYPE_CHECKING:
    from hmb.log.partition import PartitionLog


@contextmanager
def read_region(
    plog: PartitionLog,
    offset: int,
    max_bytes: int,
    *,
    min_one: bool = False,
    end_offset: int | None = None,
    replica: bool = False,
) -> Iterator[FileRegion | None]:
    """The file region of ``plog`` starting at the entry holding ``offset``, at most ``max_bytes`` long.

    Yields ``None`` when ``offset`` is at or past the end of what the reader
    may see (nothing yet); raises :class:`OffsetOutOfRangeError` outside the
    log.  The region is valid while
    the context is open.
    """
    log_end = plog.log_end_offset
    if offset < plog.log_start_offset or offset > log_end:
        raise OffsetOutOfRangeError(
            f"offset {offset} outside [{plog.log_start_offset}, {log_end}] of {plog.topic}-{plog.partition}"
        )
    hw = log_end if replica else plog.high_watermark
    stop = hw if end_offset is None else min(hw, end_offset)
    if offset >= stop or (max_bytes <= 0 and not min_one):
        yield None
        return
    segments = plog.segments
    idx = segments.bisect_right(offset) - 1
    while idx < len(segments):
        seg = segments.peekitem(idx)[1]
        pos = seg.find_position(offset)
        if pos is not None:
            end = seg.size
            if stop < seg.next_offset:  # the high watermark, or the LSO, lies inside this segment
                cut_at = seg.find_position(stop)
                end = end if cut_at is None else cut_at
            length = max(0, min(max_bytes, end - pos))
            if min_one:
                length = max(length, min(seg.entry_size(pos), end - pos))
            with seg.pinned():
                yield FileRegion(seg, pos, length)
            return
        idx += 1
    yield None
