"""An MVar for trio: a box that is either full or empty, as in Haskell.

HMB guarded each partition's state with an ``MVar``: whoever *takes* the
value has exclusive use of it until they *put* one back.  In trio the same
discipline gives us atomic "assign offsets, append, publish" sequences even
when they contain await points (an fsync handed to a thread, say), without a
separate lock next to the data it protects.

Rules: ``take``/``put`` block; ``*_nowait`` twins raise ``trio.WouldBlock``;
``modify()`` is the safe form (the value is put back even on error or
cancellation).  Fair, as Haskell's MVar and ``trio.Lock`` are: blocked tasks
are served first come, first served, and a value put while takers wait is
handed to the first of them (a task arriving in between cannot barge in and
starve it); the same for puts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Generic, TypeVar

import trio

T = TypeVar("T")

_EMPTY = object()


@dataclass(frozen=True)
class MVarStatistics:
    """A snapshot of an MVar, as ``trio.Lock.statistics()`` gives one: for tests and debugging."""

    full: bool
    tasks_waiting_take: int
    tasks_waiting_put: int


class MVar(Generic[T]):
    """A synchronising variable holding at most one value (slotted: one per partition)."""

    __slots__ = ("_next_putter", "_next_taker", "_putters", "_takers", "_value")

    def __init__(self, value: T) -> None:
        self._value: object = value
        # made at the first wait: a broker holds one MVar per partition, mostly never contended
        self._takers: trio.lowlevel.ParkingLot | None = None
        self._putters: trio.lowlevel.ParkingLot | None = None
        # The task that a put (take) has just woken: the next take (put) is reserved for it.
        self._next_taker: trio.lowlevel.Task | None = None
        self._next_putter: trio.lowlevel.Task | None = None

    @property
    def full(self) -> bool:
        return self._value is not _EMPTY

    def take_nowait(self) -> T:
        if self._value is _EMPTY or self._next_taker not in (None, trio.lowlevel.current_task()):
            raise trio.WouldBlock
        value = self._value
        self._value = _EMPTY
        self._next_taker = None
        if self._putters:
            (self._next_putter,) = self._putters.unpark(count=1)
        return value  # type: ignore[return-value]

    async def take(self) -> T:
        await trio.lowlevel.checkpoint_if_cancelled()
        try:
            value = self.take_nowait()
        except trio.WouldBlock:
            if self._takers is None:
                self._takers = trio.lowlevel.ParkingLot()
            await self._takers.park()
            return self.take_nowait()  # put_nowait() reserved the value for this task
        await trio.lowlevel.cancel_shielded_checkpoint()
        return value

    def put_nowait(self, value: T) -> None:
        if self._value is not _EMPTY or self._next_putter not in (None, trio.lowlevel.current_task()):
            raise trio.WouldBlock
        self._value = value
        self._next_putter = None
        if self._takers:
            (self._next_taker,) = self._takers.unpark(count=1)

    async def put(self, value: T) -> None:
        await trio.lowlevel.checkpoint_if_cancelled()
        try:
            self.put_nowait(value)
        except trio.WouldBlock:
            if self._putters is None:
                self._putters = trio.lowlevel.ParkingLot()
            await self._putters.park()
            self.put_nowait(value)  # take_nowait() reserved the empty slot for this task
            return
        await trio.lowlevel.cancel_shielded_checkpoint()

    def read_nowait(self) -> T:
        """The value without taking it (raises ``trio.WouldBlock`` while taken)."""
        if self._value is _EMPTY:
            raise trio.WouldBlock
        return self._value  # type: ignore[return-value]

    @asynccontextmanager
    async def modify(self) -> AsyncIterator[T]:
        """Take the value for the duration of the block; it is put back afterwards.

        The value is usually a mutable state object; the block mutates it.
        """
        value = await self.take()
        try:
            yield value
        finally:
            self.put_nowait(value)

    def statistics(self) -> MVarStatistics:
        return MVarStatistics(
            full=self.full,
            tasks_waiting_take=self._takers.statistics().tasks_waiting if self._takers else 0,
            tasks_waiting_put=self._putters.statistics().tasks_waiting if self._putters else 0,
        )
