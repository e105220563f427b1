"""The broker's one notion of time, which a test can move forward.

Rules:

* Everything in the broker that expires (group sessions and rebalance
  timeouts, retention by age, commit timestamps) reads time from the
  broker's :class:`Clock`, never from :mod:`time` or trio directly, so one
  call moves all of it at once.
* Two scales, as Kafka has: :meth:`Clock.wall` (epoch seconds, for
  timestamps and file ages) and :meth:`Clock.monotonic` (trio's clock, for
  deadlines).  Both are the real clock plus one ``skew`` that only grows.
* A deadline computed on the broker's monotonic scale is slept on with
  :meth:`Clock.trio_deadline`, which takes the skew back out: after an
  :meth:`advance` the sleeper must be woken (the listeners do that) and
  finds its deadline passed.
* Under trio's ``MockClock`` (the in-process API tests) ``monotonic`` is the
  mock clock, so autojumping keeps working.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import trio


class Clock:
    """Real time plus a forward skew; one per broker."""

    def __init__(self) -> None:
        self.skew = 0.0
        self._listeners: list[Callable[[], None]] = []
        self._advanced: trio.Event | None = None

    def wall(self) -> float:
        """Epoch seconds, as the broker sees them."""
        return time.time() + self.skew

    def wall_ms(self) -> int:
        return int(self.wall() * 1000)

    def monotonic(self) -> float:
        """trio's clock plus the skew: the scale of every deadline the broker keeps."""
        return trio.current_time() + self.skew

    def trio_deadline(self, deadline: float) -> float:
        """``deadline`` (broker scale) on trio's own clock, for ``move_on_at``."""
        return deadline - self.skew

    def on_advance(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` (in the broker's trio thread) after every :meth:`advance`."""
        self._listeners.append(listener)

    def advanced(self) -> trio.Event:
        """An event set by the next :meth:`advance`: a wait on a broker deadline waits for it too."""
        if self._advanced is None:
            self._advanced = trio.Event()
        return self._advanced

    def advance(self, seconds: float) -> None:
        """Move the broker's time forward; sleepers on broker deadlines wake and re-check."""
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        self.skew += seconds
        event, self._advanced = self._advanced, None
        if event is not None:
            event.set()
        for listener in self._listeners:
            listener()
