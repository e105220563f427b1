"""Retrying a consumer request until a deadline: what every blocking consumer call does.

Recoverable trouble (a broker down, a leader moved, a coordinator away)
is retried with backoff and never surfaces before the deadline; an error
that is not retriable surfaces at once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import trio

from hmb_client.errors import KafkaError, KafkaTimeoutError

log = logging.getLogger(__name__)

T = TypeVar("T")


async def retrying(afn: Callable[[Any], Awaitable[T]], arg: Any, deadline: float, backoff_s: float) -> T:
    """``await afn(arg)``, retrying retriable errors every ``backoff_s`` until ``deadline``
    (``time.monotonic()``); then the last error, or KafkaTimeoutError when none came."""
    last: BaseException | None = None
    started = time.monotonic()
    with trio.move_on_after(max(0.0, deadline - started)):
        while True:
            try:
                return await afn(arg)
            except KafkaError as exc:
                if not exc.retriable:
                    raise
                last = exc
            log.debug("retrying after %s", last)
            await trio.sleep(backoff_s)  # retry backoff
    if last is not None:
        raise last  # the reason it did not succeed in time
    raise KafkaTimeoutError(f"no answer within {(deadline - started) * 1000:.0f} ms")
