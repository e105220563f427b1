"""Long-polls that end when the client does.

JoinGroup and SyncGroup can wait minutes for other members.  A client that
hangs up meanwhile must not keep its request (and its member's keep-alive)
around: the wait is cancelled when the connection reports EOF, and the
coordinator then treats the member like any other silent one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import trio

T = TypeVar("T")


async def unless_gone(gone: trio.Event, wait: Callable[[], Awaitable[T]]) -> T | None:
    """``await wait()``, or None as soon as ``gone`` is set."""
    result: list[T] = []

    async def run(cancel: trio.CancelScope) -> None:
        result.append(await wait())
        cancel.cancel()

    async def watch(cancel: trio.CancelScope) -> None:
        await gone.wait()
        cancel.cancel()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run, nursery.cancel_scope)
        nursery.start_soon(watch, nursery.cancel_scope)
    return result[0] if result else None
