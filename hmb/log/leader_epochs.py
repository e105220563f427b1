"""A partition's leader epochs and where each began: Kafka's ``leader-epoch-checkpoint``.

Every time a partition gets a new leader its leader epoch grows, and the
leader notes the log end offset where the epoch starts.  A client that read
records of epoch E asks, after a leader change, where E ended
(OffsetForLeaderEpoch); if the log now ends before the client's position,
the log was truncated under it and the client resets.

On one broker the leader never changes: every partition is led in epoch
:data:`LEADER_EPOCH` (0), from the offset its log ended at when the broker
first led it (0 for a new partition), until replication bumps it.  Appended
batches are stamped with it (their ``partitionLeaderEpoch``), as Kafka's
leader stamps them.

The file, in each partition's directory, is Kafka's text layout::

    0               version
    1               how many entries follow
    0 0             "epoch startOffset", epochs increasing

written whole to a temporary file and renamed over the old one, not fsync'd
(CreateTopics makes thousands at once): a file lost or unreadable after a
crash is logged and started afresh at the log end, and the answers for the
current epoch (the only one here) do not depend on where it began.
"""

from __future__ import annotations

import itertools
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

LEADER_EPOCH = 0
CHECKPOINT = "leader-epoch-checkpoint"
UNDEFINED_EPOCH = -1
UNDEFINED_OFFSET = -1
_VERSION = 0


class LeaderEpochCache:
    """The ``(epoch, start offset)`` entries of one partition, in epoch order."""

    __slots__ = ("directory", "entries")

    def __init__(self, directory: Path, entries: list[tuple[int, int]] | None = None) -> None:
        self.directory = directory
        self.entries: list[tuple[int, int]] = entries or []

    @classmethod
    def load(cls, directory: Path) -> LeaderEpochCache:
        """The partition's checkpoint; an absent or unreadable one is empty."""
        path = directory / CHECKPOINT
        try:
            lines = path.read_text().split("\n")
        except FileNotFoundError:
            return cls(directory)
        try:
            version, count = int(lines[0]), int(lines[1])
            if version != _VERSION:
                raise ValueError(f"version {version}")
            entries = [(int(e), int(o)) for e, o in (lines[2 + i].split() for i in range(count))]
            if any(a[0] >= b[0] or a[1] > b[1] for a, b in itertools.pairwise(entries)):
                raise ValueError("entries out of order")
        except (ValueError, IndexError) as exc:
            log.warning("ignoring %s (%s): leader epochs start afresh", path, exc)
            return cls(directory)
        return cls(directory, entries)

    @property
    def latest_epoch(self) -> int:
        return self.entries[-1][0] if self.entries else UNDEFINED_EPOCH

    def assign(self, epoch: int, start_offset: int, *, fresh: bool = False) -> None:
        """Epoch ``epoch`` starts at ``start_offset`` (an older or equal epoch is no news);
        ``fresh``: see :meth:`write`."""
        if epoch <= self.latest_epoch:
            return
        self.entries.append((epoch, start_offset))
        self.write(fresh=fresh)

    def truncate_from_start(self, log_start_offset: int) -> None:
        """The log now starts at ``log_start_offset`` (retention, DeleteRecords): epochs that
        began before it go, except the last of them, which now begins there (as Kafka's)."""
        before = [e for e in self.entries if e[1] < log_start_offset]
        if not before:
            return
        after = [e for e in self.entries if e[1] >= log_start_offset]
        if not after or after[0][1] > log_start_offset:
            after.insert(0, (before[-1][0], log_start_offset))
        self.entries = after
        self.write()

    def truncate_from_end(self, log_end_offset: int) -> None:
        """The log now ends at ``log_end_offset`` (a follower cut its divergent tail): epochs
        that began at or past it go, as Kafka's ``truncateFromEnd``."""
        kept = [e for e in self.entries if e[1] < log_end_offset]
        if len(kept) < len(self.entries):
            self.entries = kept
            self.write()

    def end_offset_for(self, epoch: int, log_end_offset: int) -> tuple[int, int]:
        """``(epoch, end offset)`` OffsetForLeaderEpoch answers for ``epoch``, as Kafka's cache:
        the latest epoch ends at the log end; an older one where the next epoch starts
        (reported with the largest known epoch not above it); an unknown newer one is
        undefined."""
        if epoch == UNDEFINED_EPOCH or not self.entries:
            return UNDEFINED_EPOCH, UNDEFINED_OFFSET
        if epoch == self.latest_epoch:
            return epoch, log_end_offset
        higher = next(((e, o) for e, o in self.entries if e > epoch), None)
        if higher is None:
            return UNDEFINED_EPOCH, UNDEFINED_OFFSET
        floor = [e for e, _o in self.entries if e <= epoch]
        return (floor[-1] if floor else epoch), higher[1]

    def write(self, *, fresh: bool = False) -> None:
        """Replace the checkpoint file with the entries (atomically).

        ``fresh``: the partition's directory was just made, no older file can be
        half-replaced: written in place (CreateTopics makes thousands).
        """
        text = (
            "\n".join([str(_VERSION), str(len(self.entries)), *(f"{e} {o}" for e, o in self.entries)]) + "\n"
        )
        path = os.path.join(self.directory, CHECKPOINT)
        target = path if fresh else path + ".tmp"
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                os.write(fd, text.encode())
            finally:
                os.close(fd)
            if not fresh:
                os.replace(target, path)
        except OSError as exc:  # a full disk: the answers come from memory; the next start retries
            log.warning("could not write %s: %s", path, exc)
