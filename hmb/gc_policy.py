"""Python's cyclic garbage collector in a process that runs a broker and nothing else.

Rules of this module:

* Only a process the broker owns applies it: ``hmb serve`` (both entry
  points call :func:`pause` before importing the broker).  An embedded
  broker lives in someone else's process, whose collector is theirs:
  :func:`settle` does nothing unless :func:`pause` ran first.
* While the broker starts, the collector is off.  Start-up creates modules,
  classes, functions and the property table, all living as long as the
  process; collecting while they are being made found nothing and cost a
  tenth of the time to the first answer.
* Once the broker listens, what start-up made is frozen (``gc.freeze``): no
  later collection scans it again.
* The youngest generation is collected every :data:`THRESHOLD` allocations,
  not CPython's 700.  Every open connection holds some fifty tracked objects
  (its tasks, their coroutines, cancel scopes, the socket); opening ten
  thousand with the default triggered full collections over all the others,
  seven tenths of the broker's CPU per connection opened.  Collections stay
  automatic: a cycle still goes, a little later.
"""

from __future__ import annotations

import gc

THRESHOLD = (20_000, 20, 10)
"""Allocations before a young collection; young collections before a middle one; middle before full."""

_paused = False


def pause() -> None:
    """Turn the collector off while a broker process starts (its entry point calls this first)."""
    global _paused
    _paused = True
    gc.disable()


def settle() -> None:
    """The broker listens: freeze what start-up made, then collect with :data:`THRESHOLD`.

    Does nothing in a process that did not :func:`pause` (an embedded broker's host).
    """
    global _paused
    if not _paused:
        return
    _paused = False
    gc.freeze()
    gc.set_threshold(*THRESHOLD)
    gc.enable()
