"""What the consumer knows of its assigned partitions, shared by its two threads.

Rules of this module:

* One :class:`PartitionTable` per consumer holds every :class:`PartitionState`
  and the one lock guarding them; its condition variable is what ``poll()``
  waits on.  The caller's thread (``poll``, ``seek``, ``assign``) and the
  I/O thread (fetcher, group member, offset lookup) meet only here.
* Each partition has an *epoch*, bumped by ``seek``/``assign``/resets; an
  answer is kept only if its partition's epoch and fetch offset are still
  those it was requested with, so a seek never sees data of the old position.
* ``position`` is the offset of the next record ``poll()``/iteration returns
  (the committed offset by Kafka's definition: last consumed + 1);
  ``fetch_offset`` is where the fetcher continues (beyond what is buffered).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable
from typing import Any, cast

from hmb_client.errors import IllegalStateError
from hmb_client.structs import ConsumerRecord, OffsetAndMetadata, TopicPartition

COMMITTED = "committed"  # reset strategy of a fresh partition: committed offset, else auto_offset_reset
TIMESTAMPS = {"earliest": -2, "latest": -1}  # ListOffsets special times, by auto_offset_reset
new_record = cast(Any, tuple.__new__)  # tuple.__new__(ConsumerRecord, (...)): the fastest constructor


def concat(pieces: list[list[ConsumerRecord]]) -> list[ConsumerRecord]:
    if len(pieces) == 1:
        return pieces[0]
    return [r for piece in pieces for r in piece]


class PartitionState:
    """One assigned partition (guarded by the table's lock)."""

    __slots__ = (
        "buffered",
        "chunks",
        "epoch",
        "error",
        "fetch_offset",
        "highwater",
        "in_flight",
        "position",
        "reset",
        "resolving",
        "retry_at",
        "tp",
    )

    def __init__(self, tp: TopicPartition) -> None:
        self.tp = tp
        self.position: int | None = None  # next offset to hand to the user
        self.fetch_offset: int | None = None  # next offset to fetch
        self.reset: str = COMMITTED  # how to find a position when there is none
        self.epoch = 0
        self.chunks: deque[list[Any]] = deque()  # [records, next index, bytes]
        self.buffered = 0
        self.error: BaseException | None = None
        self.in_flight = False
        self.resolving = False
        self.retry_at = 0.0  # trio time before which the fetcher leaves it alone
        self.highwater: int | None = None

    def repositioned(self, position: int | None, reset: str = COMMITTED) -> None:
        """Move to ``position`` (None: find one per ``reset``), dropping buffered data and errors."""
        self.epoch += 1
        self.position = self.fetch_offset = position
        self.reset = reset
        self.chunks.clear()
        self.buffered = 0
        self.error = None
        self.retry_at = 0.0


class Taken:
    """Records taken from a partition's buffer by iteration, handed out one at a time."""

    __slots__ = ("epoch", "next", "part", "records")

    def __init__(self, part: PartitionState, records: list[ConsumerRecord]) -> None:
        self.part = part
        self.epoch = part.epoch  # stale once the partition is re-positioned
        self.records = records
        self.next = 0


class PartitionTable:
    """The assignment and its buffers, under one lock (``cond`` is built on it)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.parts: dict[TopicPartition, PartitionState] = {}
        self.order: list[PartitionState] = []  # assignment order, rotated by poll for fairness
        self.turn = 0
        # Records taken from a buffer by iteration but not handed out yet.
        self.pending: Taken | None = None
        # An error of the I/O thread every poll() raises from now on.
        self.fatal: BaseException | None = None

    def part(self, tp: TopicPartition) -> PartitionState:
        p = self.parts.get(TopicPartition(tp[0], tp[1]))
        if p is None:
            raise IllegalStateError(f"{tp[0]}-{tp[1]} is not assigned to this consumer")
        return p

    def install(self, partitions: Iterable[TopicPartition]) -> None:
        """Replace the assignment with fresh partitions (lock held); old responses are dropped."""
        for p in self.parts.values():
            p.epoch += 1
        self.parts = {tp: PartitionState(tp) for tp in partitions}
        self.order = list(self.parts.values())
        self.pending = None
        self.turn = 0

    def reassign(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """``assign()``: exactly ``partitions`` from now on (takes the lock).

        Kept partitions keep their position but drop buffered data; the
        positions of those given up are returned (to be committed).
        """
        removed: dict[TopicPartition, int] = {}
        with self.lock:
            parts: dict[TopicPartition, PartitionState] = {}
            for tp in dict.fromkeys(partitions):
                p = self.parts.get(tp)
                if p is None:
                    p = PartitionState(tp)
                elif p.position is not None:
                    p.repositioned(p.position)
                else:
                    p.repositioned(None, p.reset)
                parts[tp] = p
            for tp, p in self.parts.items():
                if tp not in parts:
                    p.epoch += 1  # responses in flight for it are dropped
                    if p.position is not None:
                        removed[tp] = p.position
            self.parts = parts
            self.order = list(parts.values())
            self.pending = None
        return removed

    def positions(self) -> dict[TopicPartition, OffsetAndMetadata]:
        """The position of every partition that has one (takes the lock)."""
        with self.lock:
            return {p.tp: OffsetAndMetadata(p.position) for p in self.order if p.position is not None}

    def fail(self, exc: BaseException) -> None:
        """Make ``exc`` what every ``poll()`` raises (takes the lock)."""
        with self.cond:
            self.fatal = exc
            self.cond.notify_all()

    def take(self, limit: int, bound: int, advance: bool = True) -> tuple[list[ConsumerRecord], bool]:
        """Up to ``limit`` buffered records, partitions served in turn (lock held), and
        whether a buffer drained below ``bound`` (the fetcher should look again).

        ``advance=False`` (iteration) takes from one partition only and leaves its
        position to be advanced per yielded record.
        """
        out: list[ConsumerRecord] = []
        taken = self.pending
        if taken is not None:
            if taken.part.epoch != taken.epoch:
                self.pending = taken = None
            elif not advance:
                return [], False
            else:
                i = taken.next
                out = taken.records[i : i + limit]
                taken.next = i + len(out)
                if taken.next >= len(taken.records):
                    self.pending = None
                taken.part.position = out[-1].offset + 1
                return out, False
        order = self.order
        n = len(order)
        wake = False
        pieces: list[list[ConsumerRecord]] = []
        room = limit
        for k in range(n):
            p = order[(self.turn + k) % n]
            chunks = p.chunks
            while chunks and room > 0:
                chunk = chunks[0]
                recs, i = chunk[0], chunk[1]
                got = recs if i == 0 and len(recs) <= room else recs[i : i + room]
                pieces.append(got)
                room -= len(got)
                i += len(got)
                if i >= len(recs):
                    chunks.popleft()
                    before = p.buffered
                    p.buffered -= chunk[2]
                    wake = wake or before >= bound > p.buffered
                else:
                    chunk[1] = i
                if advance:
                    p.position = got[-1].offset + 1
            if pieces and not advance:
                self.pending = Taken(p, concat(pieces))
                pieces = []
                break
            if room <= 0:
                break
        self.turn = (self.turn + 1) % n if n else 0
        return concat(pieces), wake

    def next_taken(self) -> ConsumerRecord | None:
        """The next record iteration took from a buffer, if still valid (lock held)."""
        taken = self.pending
        if taken is None:
            return None
        if taken.part.epoch != taken.epoch:  # re-positioned since
            self.pending = None
            return None
        rec = taken.records[taken.next]
        taken.next += 1
        if taken.next >= len(taken.records):
            self.pending = None
        taken.part.position = rec[2] + 1
        return rec
