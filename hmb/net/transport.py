"""The byte pipe under a connection: plain TCP today, TLS later, one interface.

A :class:`Transport` receives bytes, sends bytes, sends a region of a file
and closes.  :class:`PlainTransport` is TCP with the shortcuts that make
small requests cheap: ``os.read``/``os.write`` straight on the non-blocking
socket, falling back to trio only to wait, and ``os.sendfile`` for file
regions (zero copy).  A TLS transport (trio's ``SSLStream``) implements the
same four calls (a file region is read and then encrypted: no sendfile over
TLS), and the connection logic above it does not change.
"""

from __future__ import annotations

import os
from typing import Protocol

import trio

from hmb.net.sendfile import sendfile

READ_SIZE = 256 * 1024


class Transport(Protocol):
    peer: str
    #: ``aclose`` never waits (no checkpoint): the connection need not shield it from cancellation
    closes_at_once: bool

    async def receive_some(self) -> bytes:
        """The next bytes from the peer; ``b""`` at end of stream."""
        ...

    async def send_all(self, data: bytes | bytearray) -> None: ...

    async def send_file(self, fd: int, position: int, length: int) -> None:
        """Send ``length`` bytes of the open file ``fd`` from ``position``."""
        ...

    async def aclose(self) -> None: ...


def peer_of(stream: trio.SocketStream) -> str:
    try:
        host, port = stream.socket.getpeername()[:2]
    except OSError:
        return "?"
    return f"{host}:{port}"


class PlainTransport:
    """TCP, with ``os.read``/``os.write``/``os.sendfile`` on the socket itself."""

    closes_at_once = True

    def __init__(self, stream: trio.SocketStream, peer: str | None = None) -> None:
        self.stream = stream
        self.peer = peer_of(stream) if peer is None else peer  # the caller may know it already
        self._sock = stream.socket
        self._fd = stream.socket.fileno()
        self._streaming = False  # the last read found data: the next one that does yields first

    async def receive_some(self) -> bytes:
        """The next bytes from the socket (``b""`` at end of stream).

        trio's ``receive_some`` yields to the scheduler after every successful
        read; here a read that finds data goes on without a trip through the
        scheduler unless the previous read also found data (a client streaming
        faster than we read), so an idle connection costs one wake-up per burst
        of requests.  Waiting for data, and that periodic yield, are the checkpoints.
        """
        while True:
            try:
                data = os.read(self._fd, READ_SIZE)
            except BlockingIOError:
                data = None  # wait below, outside this block: a waiting connection keeps no exception
            if data is None:
                self._streaming = False
                await trio.lowlevel.wait_readable(self._sock)
                continue
            if self._streaming:
                await trio.lowlevel.checkpoint()
            self._streaming = True
            return data

    async def send_all(self, data: bytes | bytearray) -> None:
        """Write ``data``: what the socket takes at once without a scheduler round trip.

        Only when the socket buffer is full does the rest go through trio (which
        waits until it is writable).  One task at a time writes.
        """
        try:
            n = os.write(self._fd, data)
        except BlockingIOError:
            n = 0
        if n < len(data):
            with memoryview(data) as view:
                await self.stream.send_all(view[n:])

    async def send_file(self, fd: int, position: int, length: int) -> None:
        await sendfile(self._sock, fd, position, length)

    async def aclose(self) -> None:
        """Close the socket at once, without a checkpoint: a cancelled connection still closes it."""
        self._sock.close()
