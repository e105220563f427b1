"""Python's cyclic garbage collector in a process that runs a broker and nothing else.

Rules of this module:

* Only a process the broker owns applies it: ``hmb serve`` (both entry
  points call :func:`pause` before importing the broker).  An embedded
  broker lives in someone else's process, whose collector is theirs:
  :func:`keep_imports` and :func:`resume` do nothing unless :func:`pause`
  ran first.
* While the broker starts, the collector is off.  The imports create
  modules, classes, functions and the property table, all living as long as
  the process; collecting while they were made found nothing and cost a
  tenth of the time to the first answer.
* What the imports made is frozen (``gc.freeze``) before the broker is
  built: no later collection scans it again.  Nothing the broker builds is
  frozen (a partition loaded at start may be deleted later, and frozen
  cycles would never be freed).
* Once the broker listens, the youngest generation is collected every
  ``THRESHOLD[0]`` allocations, not CPython's 700.  Every open connection
  holds some fifty tracked objects (its tasks, their coroutines, cancel
  scopes, the socket); opening ten thousand with the default threshold ran
  full collections over all the others, seven tenths of the broker's CPU
  per connection opened.  Collections stay automatic: a cycle still goes,
  a little later.
"""

from __future__ import annotations

import gc
import logging

log = logging.getLogger(__name__)

THRESHOLD = (20_000, 20, 10)
"""Allocations before a young collection; young collections before a middle one; middle before full."""

_paused = False


def pause() -> None:
    """Turn the collector off while a broker process starts (its entry point calls this first)."""
    global _paused
    _paused = True
    gc.disable()


def keep_imports() -> None:
    """The imports are done: what they made stays for good, so no collection scans it again."""
    if _paused:
        gc.freeze()
        log.debug("garbage collector: %d objects made by the imports frozen", gc.get_freeze_count())


def resume() -> None:
    """The broker listens: collect again, every ``THRESHOLD[0]`` allocations."""
    global _paused
    if not _paused:
        return
    _paused = False
    gc.set_threshold(*THRESHOLD)
    gc.enable()
    log.debug("garbage collector: on, thresholds %s", THRESHOLD)
