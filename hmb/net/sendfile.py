"""Zero-copy writes of file regions to a trio socket with ``os.sendfile``.

trio's streams have no sendfile, so this works on the stream's socket
directly: the socket is non-blocking, so a full send buffer raises
``BlockingIOError`` and we wait until it is writable, as trio itself does
for ordinary sends.
"""

from __future__ import annotations

import os

import trio


async def sendfile(sock: trio.socket.SocketType, fd: int, offset: int, count: int) -> None:
    """Send ``count`` bytes of ``fd`` starting at ``offset`` to ``sock``."""
    out = sock.fileno()
    while count > 0:
        try:
            sent = os.sendfile(out, fd, offset, count)
        except BlockingIOError:
            await trio.lowlevel.wait_writable(sock)
            continue
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise trio.BrokenResourceError(str(exc)) from exc
        if sent == 0:
            # the file is shorter than announced: never leave the frame short
            raise OSError(f"file ended {count} bytes early during sendfile")
        offset += sent
        count -= sent
    await trio.lowlevel.checkpoint()
