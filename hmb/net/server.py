"""The listener: accept connections, run each in its own task.

Follows trio's ``serve_listeners``: the server takes ``task_status`` and
reports the bound address once it is listening, so a caller (or a test) can
bind port 0 and learn the real port.  Every connection gets a transport
(plain TCP here) and the broker's one dispatcher.
"""

from __future__ import annotations

import errno
import logging
from typing import TYPE_CHECKING

import trio

from hmb.net.connection import Connection
from hmb.net.transport import PlainTransport

if TYPE_CHECKING:
    from hmb.api.dispatch import Dispatcher
    from hmb.config import BrokerConfig

log = logging.getLogger(__name__)


async def serve(
    config: BrokerConfig,
    dispatcher: Dispatcher,
    *,
    task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED,
) -> None:
    listener = config.listener
    try:
        listeners = await trio.open_tcp_listeners(listener.port, host=listener.host, backlog=1024)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise OSError(exc.errno, f"{listener} is already in use: is another broker running?") from None
        raise

    async def handle(stream: trio.SocketStream) -> None:
        connection = Connection(
            PlainTransport(stream),
            dispatcher,
            queued_max_requests=config.queued_max_requests,
            max_frame_size=config.socket_request_max_bytes,
        )
        await connection.run()

    sockname = listeners[0].socket.getsockname()
    async with trio.open_nursery() as nursery:
        await nursery.start(trio.serve_listeners, handle, listeners)
        task_status.started((sockname[0], sockname[1]))
