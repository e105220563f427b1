"""The listener: accept connections, run each in its own task.

Follows trio's ``serve_listeners``: the server takes ``task_status`` and
reports the bound address once it is listening, so a caller (or a test) can
bind port 0 and learn the real port.
"""

from __future__ import annotations

import errno
import logging
from typing import TYPE_CHECKING

import trio

from hmb.net.connection import Connection

if TYPE_CHECKING:
    from hmb.broker import Broker

log = logging.getLogger(__name__)


async def _handle(broker: Broker, stream: trio.SocketStream) -> None:
    await Connection(broker, stream).run()


async def serve(
    broker: Broker, *, task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED
) -> None:
    listener = broker.config.listener
    try:
        listeners = await trio.open_tcp_listeners(listener.port, host=listener.host, backlog=1024)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise OSError(exc.errno, f"{listener} is already in use: is another broker running?") from None
        raise
    sockname = listeners[0].socket.getsockname()
    async with trio.open_nursery() as nursery:
        await nursery.start(trio.serve_listeners, lambda s: _handle(broker, s), listeners)
        task_status.started((sockname[0], sockname[1]))
