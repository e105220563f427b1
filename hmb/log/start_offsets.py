"""Log start offsets moved by DeleteRecords, kept in Kafka's ``log-start-offset-checkpoint``.

A partition's log starts at its first segment's base offset, unless records
were deleted up to an offset inside that segment (DeleteRecords): then the
start is that offset, and it must survive a restart.  Each log dir keeps the
moved starts of its partitions in Kafka's checkpoint format::

    0                      the format version
    2                      how many lines follow
    orders 0 1500          topic partition start-offset
    orders 3 42

Only partitions whose start is above their first segment's base need a line;
the file is replaced whole (written beside, fsynced, renamed) each time a
start moves and at a clean shutdown.  A file that cannot be read is
reported and ignored: the starts then fall back to the first segments, which
shows deleted records again but loses nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from hmb.log.meta import write_durably

log = logging.getLogger(__name__)

FILE_NAME = "log-start-offset-checkpoint"
VERSION = 0


def read(log_dir: Path, name: str = FILE_NAME) -> dict[tuple[str, int], int]:
    """(topic, partition) -> start offset, from ``log_dir``'s checkpoint (empty when none).

    ``name``: another checkpoint of the same format (the cleaner's ``cleaner-offset-checkpoint``)."""
    path = log_dir / name
    if not path.exists():
        return {}
    try:
        lines = path.read_text().splitlines()
        if int(lines[0]) != VERSION:
            raise ValueError(f"version {lines[0]}")
        count = int(lines[1])
        starts = {}
        for line in lines[2 : 2 + count]:
            topic, partition, offset = line.rsplit(" ", 2)
            starts[(topic, int(partition))] = int(offset)
        return starts
    except (OSError, ValueError, IndexError) as exc:
        log.error("ignoring %s: cannot read it (%s)", path, exc)
        return {}


def write(log_dir: Path, starts: Iterable[tuple[str, int, int]], name: str = FILE_NAME) -> None:
    """Replace ``log_dir``'s checkpoint with ``(topic, partition, start)`` lines."""
    rows = sorted(starts)
    text = f"{VERSION}\n{len(rows)}\n" + "".join(f"{t} {p} {o}\n" for t, p, o in rows)
    write_durably(log_dir / name, text)
