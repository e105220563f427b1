"""The client's I/O thread: one trio event loop behind a blocking API.

Producer, consumer and admin are used from ordinary threads.  Each owns an
:class:`IoThread` running trio; network work lives there in a nursery
(structured: closing the client cancels it and joins the thread).  Crossing
threads costs tens of microseconds, so hot paths avoid it per message: the
producer hands records over through a locked accumulator and wakes the loop
only when a batch is ready (``call_soon``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import trio

log = logging.getLogger(__name__)

T = TypeVar("T")


class IoThread:
    """A daemon thread running a trio loop that client objects submit work to."""

    def __init__(self, name: str = "hmb-client-io") -> None:
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._stop: trio.Event | None = None
        self.nursery: trio.Nursery | None = None
        self._crash: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._crash is not None:
            raise RuntimeError("client I/O thread failed to start") from self._crash

    def _run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:
            self._crash = exc
            log.exception("client I/O thread crashed")
        finally:
            self._ready.set()

    async def _main(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._stop = trio.Event()
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            self._ready.set()
            await self._stop.wait()
            nursery.cancel_scope.cancel()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and self._stop is not None and not self._stop.is_set()

    def run(self, afn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run ``afn(*args)`` in the loop and wait for its result (from another thread)."""
        if not self.alive:
            raise RuntimeError("the client is closed")
        return trio.from_thread.run(afn, *args, trio_token=self._token)

    def call_soon(self, fn: Callable[..., object], *args: Any) -> None:
        """Schedule ``fn(*args)`` in the loop without waiting (cheap; thread-safe)."""
        if self._token is not None:
            try:
                self._token.run_sync_soon(fn, *args)
            except trio.RunFinishedError:
                pass

    def start_task(self, afn: Callable[..., Awaitable[object]], *args: Any) -> None:
        """Start a background task in the loop's nursery."""

        def start() -> None:
            assert self.nursery is not None
            self.nursery.start_soon(afn, *args)

        self.call_soon(start)

    def close(self, timeout: float | None = 10.0) -> None:
        if self._stop is not None and self._thread.is_alive():
            self.call_soon(self._stop.set)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)
