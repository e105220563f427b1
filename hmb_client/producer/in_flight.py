"""The limit on Produce requests in flight to one broker (``max_in_flight_requests_per_connection``)."""

from __future__ import annotations

import trio


class InFlight:
    """Produce requests in flight to one broker, at most ``limit``.

    A semaphore whose ``acquire`` does not yield while a permit is free
    (``trio.Semaphore``'s always does: a scheduler pass, and with it a
    chance for the caller's thread to take the GIL; see
    :mod:`hmb_client.connection`).  Only the sender acquires.
    """

    __slots__ = ("_freed", "count", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.count = 0
        self._freed = trio.Event()

    async def acquire(self) -> bool:
        """Take a permit; True when that meant waiting for one."""
        waited = False
        while self.count >= self.limit:
            await self._freed.wait()
            self._freed = trio.Event()
            waited = True
        self.count += 1
        return waited

    def release(self) -> None:
        self.count -= 1
        self._freed.set()
