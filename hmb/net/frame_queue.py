"""The bounded queue of frames between a connection's watcher (its reader) and its task.

Rules of this module:

* One reader puts, one handler takes, in order; at most ``limit`` frames
  wait (``queued.max.requests``): a reader that finds the queue full waits
  for the handler to take one, so a fast client cannot make the broker
  buffer without limit.
* Taking from a non-empty queue and putting into one with room are not
  trips through the scheduler; waiting (the handler on an empty queue, the
  reader on a full one) is, and is cancellable.
* The reader ends the stream with :meth:`FrameQueue.close`: the handler
  takes what is queued, then gets ``None``.  A handler that stops calls
  :meth:`FrameQueue.abandon`: the reader's next put raises
  ``trio.BrokenResourceError``.

Only a connection whose handler waited on the client has one
(:mod:`hmb.net.connection`).  Why not a trio memory channel: this is the
same contract for exactly one task on each side, and a channel (its state,
a deque block and two task tables) was a tenth of the memory of an idle
connection; this is a list and two slots.
"""

from __future__ import annotations

import trio


class FrameQueue:
    __slots__ = ("_abandoned", "_closed", "_frames", "_limit", "_putter", "_taker")

    def __init__(self, limit: int) -> None:
        self._frames: list[bytes] = []
        self._limit = max(1, limit)
        self._closed = False  # the reader has no more frames
        self._abandoned = False  # the handler takes no more frames
        self._taker: trio.lowlevel.Task | None = None  # the handler, while it waits for a frame
        self._putter: trio.lowlevel.Task | None = None  # the reader, while it waits for room

    def put_nowait(self, frame: bytes) -> bool:
        """Queue ``frame`` if there is room; whether it was queued."""
        if self._abandoned:
            raise trio.BrokenResourceError("the handler has stopped")
        if len(self._frames) >= self._limit:
            return False
        self._frames.append(frame)
        if self._taker is not None:
            task, self._taker = self._taker, None
            trio.lowlevel.reschedule(task)
        return True

    async def put(self, frame: bytes) -> None:
        """Queue ``frame``, waiting while the queue is full."""
        while not self.put_nowait(frame):
            self._putter = trio.lowlevel.current_task()
            await trio.lowlevel.wait_task_rescheduled(self._abort_put)

    def take_nowait(self) -> bytes | None:
        """The next frame, or ``None`` when none is queued."""
        if not self._frames:
            return None
        frame = self._frames.pop(0)
        if self._putter is not None:
            task, self._putter = self._putter, None
            trio.lowlevel.reschedule(task)
        return frame

    async def take(self) -> bytes | None:
        """The next frame, waiting for one; ``None`` once the reader closed and all are taken."""
        while (frame := self.take_nowait()) is None:
            if self._closed:
                return None
            self._taker = trio.lowlevel.current_task()
            await trio.lowlevel.wait_task_rescheduled(self._abort_take)
        return frame

    def close(self) -> None:
        """The reader is done: the handler finishes what is queued."""
        self._closed = True
        if self._taker is not None:
            task, self._taker = self._taker, None
            trio.lowlevel.reschedule(task)

    def abandon(self) -> None:
        """The handler is done: the reader stops at its next put."""
        self._abandoned = True
        if self._putter is not None:
            task, self._putter = self._putter, None
            trio.lowlevel.reschedule(task)

    def _abort_put(self, _: object) -> trio.lowlevel.Abort:
        self._putter = None
        return trio.lowlevel.Abort.SUCCEEDED

    def _abort_take(self, _: object) -> trio.lowlevel.Abort:
        self._taker = None
        return trio.lowlevel.Abort.SUCCEEDED
