"""One client connection: read frames, handle them in order, write responses.

Two tasks share a bounded channel (``queued.max.requests``): the reader
splits the byte stream into frames and blocks when the handler falls
behind, so a fast client cannot make the broker buffer without limit (HMB's
unbounded ``Chan`` was a known risk).  The handler answers requests one at a
time, so responses leave in request order, as Kafka guarantees per
connection.

Per request the costs that matter are trips through trio's scheduler, not
bytes: a queued frame is taken without one, a response is written with one
non-blocking ``write`` (trio only when the socket buffer is full), a read
that finds data goes on at once, and Produce skips the Construct grammar
(:mod:`kproto.produce_fast`).  Fairness to other connections comes from
waiting (for data, for room) and from a yield every few queued requests.

A connection that sends something unusable (a bad size prefix, a frame
over ``socket.request.max.bytes``, an unknown api key or version, bytes that
do not parse) is closed with a logged reason; nobody else notices.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, NoReturn

import trio

import kproto
from hmb.api import HANDLERS
from hmb.api.api_versions import unsupported_version_response
from hmb.api.context import CloseConnection, NoResponse, RawResponse, RequestContext
from hmb.log.region import FileRegion
from hmb.net.sendfile import sendfile
from kproto import ApiKey, DecodeError, KprotoError, UnsupportedVersionError
from kproto.produce_fast import decode_produce_request

if TYPE_CHECKING:
    from hmb.broker import Broker

log = logging.getLogger(__name__)

READ_SIZE = 256 * 1024
COALESCE_BYTES = 64 * 1024
_YIELD_EVERY = 16  # queued requests handled back to back before the handler yields regardless
_PRODUCE_KEY = ApiKey.PRODUCE.to_bytes(2, "big")


class Connection:
    def __init__(self, broker: Broker, stream: trio.SocketStream) -> None:
        self.broker = broker
        self.stream = stream
        try:
            host, port = stream.socket.getpeername()[:2]
            self.peer = f"{host}:{port}"
        except OSError:
            self.peer = "?"
        self.requests = 0
        self.client_gone = trio.Event()
        self.close_reason: str | None = None
        self._produce = HANDLERS.get(ApiKey.PRODUCE)
        self._sock = stream.socket
        self._fd = stream.socket.fileno()
        self._streaming = False  # the last read found data: the next one that does yields first

    async def run(self) -> None:
        send, receive = trio.open_memory_channel[bytes](self.broker.config.queued_max_requests)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._reader, send, nursery.cancel_scope)
                nursery.start_soon(self._handler, receive, nursery.cancel_scope)
        except* CloseConnection as group:
            self.close_reason = self.close_reason or str(group.exceptions[0])
        except* (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError):
            if self.close_reason is None:
                log.debug("connection from %s broke", self.peer)
        except* Exception:
            # a bug in a handler ends this connection, never the broker
            log.exception("internal error serving %s; connection closed", self.peer)
        finally:
            if self.close_reason is not None:
                log.warning("closing connection from %s: %s", self.peer, self.close_reason)
            with trio.CancelScope(shield=True):
                await self.stream.aclose()

    async def _receive_some(self) -> bytes:
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
                self._streaming = False
                await trio.lowlevel.wait_readable(self._sock)
                continue
            if self._streaming:
                await trio.lowlevel.checkpoint()
            self._streaming = True
            return data

    async def _reader(self, send: trio.MemorySendChannel[bytes], scope: trio.CancelScope) -> None:
        decoder = kproto.FrameDecoder(self.broker.config.socket_request_max_bytes)
        async with send:
            while True:
                data = await self._receive_some()
                if not data:
                    # Requests already read are still handled (an acks=0 produce is
                    # appended), but nothing may wait for a client that is gone.
                    self.client_gone.set()
                    if decoder.buffered:
                        log.info(
                            "%s disconnected in the middle of a request (%d bytes)",
                            self.peer,
                            decoder.buffered,
                        )
                    return
                decoder.feed(data)
                try:
                    while (frame := decoder.next_frame()) is not None:
                        try:
                            send.send_nowait(frame)
                        except trio.WouldBlock:
                            await send.send(frame)  # the handler is behind: wait for room
                except DecodeError as exc:
                    self._fail(str(exc))
                except trio.BrokenResourceError:
                    return  # the handler stopped: it knows why

    async def _send_all(self, data: bytearray) -> None:
        """Write ``data``: what the socket takes at once without a scheduler round trip.

        Only when the socket buffer is full does the rest go through trio (which
        waits until it is writable).  Responses are written by one task at a time.
        """
        try:
            n = os.write(self._fd, data)
        except BlockingIOError:
            n = 0
        if n < len(data):
            with memoryview(data) as view:
                await self.stream.send_all(view[n:])

    def _fail(self, reason: str) -> NoReturn:
        """Record why this connection ends, then end it."""
        self.close_reason = self.close_reason or reason
        raise CloseConnection(reason)

    async def _handler(self, receive: trio.MemoryReceiveChannel[bytes], scope: trio.CancelScope) -> None:
        # Responses to pipelined requests are coalesced: while more requests are
        # already queued, small responses wait in `pending` and leave in one send.
        # A send per 60-byte Produce response cost as much as the append itself.
        # Queued frames are taken without a checkpoint; handlers and sends have theirs,
        # and every _YIELD_EVERY requests the loop yields anyway (fairness to others).
        pending = bytearray()
        since_yield = 0
        async with receive:
            while True:
                try:
                    frame = receive.receive_nowait()
                except (trio.WouldBlock, trio.EndOfChannel):
                    # nothing queued: answer what is pending, then wait (a checkpoint)
                    if pending:
                        await self._send_all(pending)
                        pending = bytearray()
                    try:
                        frame = await receive.receive()
                    except trio.EndOfChannel:
                        return
                    since_yield = 0
                else:
                    since_yield += 1
                    if since_yield >= _YIELD_EVERY:
                        since_yield = 0
                        await trio.lowlevel.checkpoint()
                self.requests += 1
                try:
                    reply = await self._dispatch(frame)
                except CloseConnection:
                    if pending:  # earlier requests were fine: they get their answers
                        await self._send_all(pending)
                    raise
                if isinstance(reply, bytes):
                    pending += reply
                    if len(pending) >= COALESCE_BYTES:
                        await self._send_all(pending)
                        pending = bytearray()
                elif reply is not None:
                    if pending:
                        await self._send_all(pending)
                        pending = bytearray()
                    await self._write(reply)

    async def _dispatch(self, frame: bytes) -> bytes | RawResponse | None:
        # Produce, the request that comes by the thousand, skips the grammar (see
        # kproto.produce_fast); anything that fast path does not read takes the
        # general way below, which also decides what is an error.
        request = decode_produce_request(frame) if frame[4:6] == _PRODUCE_KEY else None
        if request is not None and self._produce is not None and self._produce.supports(request.version):
            handler = self._produce
        else:
            try:
                peek = kproto.peek_request(frame)
            except DecodeError as exc:
                self._fail(str(exc))
            found = HANDLERS.get(peek.api_key)
            if peek.api_key == ApiKey.API_VERSIONS and (found is None or not found.supports(peek.version)):
                # a client newer than us: tell it what we have, in the layout every version reads
                return unsupported_version_response(peek.correlation_id)
            if found is None or not found.supports(peek.version):
                self._fail(
                    f"unsupported request {kproto.ApiKey.name_of(peek.api_key)} v{peek.version}"
                    + ("" if found is None else f" (supported v{found.min_version}-v{found.max_version})")
                )
            handler = found
            try:
                request = kproto.decode_request(frame, max_size=self.broker.config.socket_request_max_bytes)
            except UnsupportedVersionError as exc:
                self._fail(str(exc))
            except KprotoError as exc:
                self._fail(f"malformed request: {exc}")
        ctx = RequestContext(self.broker, request, self.peer, self.client_gone)
        try:
            reply = await handler.handle(ctx)
        except CloseConnection as exc:
            self._fail(str(exc))
        if isinstance(reply, NoResponse):
            return None
        if isinstance(reply, (RawResponse, bytes)):
            return reply
        return kproto.encode_response(request.api_key, request.version, request.correlation_id, reply)

    async def _write(self, reply: RawResponse) -> None:
        with reply.resources:
            pending = bytearray()
            for part in reply.parts:
                if isinstance(part, FileRegion):
                    if part.length <= 4096:  # a syscall per small region costs more than a copy
                        pending += part.read()
                        continue
                    if pending:
                        await self._send_all(pending)
                        pending = bytearray()
                    await sendfile(self.stream.socket, part.fd, part.position, part.length)
                else:
                    pending += part
            if pending:
                await self._send_all(pending)
