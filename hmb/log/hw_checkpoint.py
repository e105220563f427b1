"""High watermarks kept across restarts, in Kafka's ``replication-offset-checkpoint``.

A replica in a cluster learns its high watermark from replication (the
leader's rule, the follower's copy of the leader's); a replica that just
started would otherwise begin at its log start, showing consumers nothing
new until its in-sync followers are heard from.  Each log dir keeps the
high watermarks of its partitions in Kafka's checkpoint format::

    0                      the format version
    2                      how many lines follow
    orders 0 1500          topic partition high-watermark
    orders 3 42

The file is replaced whole (written beside, fsynced, renamed) every
``replica.high.watermark.checkpoint.interval.ms`` and at a clean shutdown,
and read once when replication starts.  A checkpointed value is only ever
below what every in-sync replica held when it was written, so starting from
it never shows a record that a new leader could cut.  A file that cannot be
read is reported and ignored (the log start is used, as without one).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from hmb.log import start_offsets

FILE_NAME = "replication-offset-checkpoint"


def read_all(log_dirs: Iterable[Path]) -> dict[tuple[str, int], int]:
    """(topic, partition) -> high watermark, from every log dir's checkpoint."""
    found: dict[tuple[str, int], int] = {}
    for d in log_dirs:
        found.update(start_offsets.read(d, FILE_NAME))
    return found


def write(log_dir: Path, rows: Iterable[tuple[str, int, int]]) -> None:
    """Replace ``log_dir``'s checkpoint with ``(topic, partition, high watermark)`` lines."""
    start_offsets.write(log_dir, rows, FILE_NAME)
