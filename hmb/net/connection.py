"""One client connection: read frames, handle them in order, write responses.

Two tasks share a bounded channel (``queued.max.requests``): the reader
splits the byte stream into frames and blocks when the handler falls
behind, so a fast client cannot make the broker buffer without limit (HMB's
unbounded ``Chan`` was a known risk).  The handler answers requests one at a
time, so responses leave in request order, as Kafka guarantees per
connection.

A connection that sends something unusable (a bad size prefix, a frame
over ``socket.request.max.bytes``, an unknown api key or version, bytes that
do not parse) is closed with a logged reason; nobody else notices.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, NoReturn

import trio

import kproto
from hmb.api import HANDLERS
from hmb.api.api_versions import unsupported_version_response
from hmb.api.context import CloseConnection, NoResponse, RawResponse, RequestContext
from hmb.log.partition import FileRegion
from hmb.net.sendfile import sendfile
from kproto import ApiKey, DecodeError, KprotoError, UnsupportedVersionError

if TYPE_CHECKING:
    from hmb.broker import Broker

log = logging.getLogger(__name__)

READ_SIZE = 256 * 1024
COALESCE_BYTES = 64 * 1024


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

    async def _reader(self, send: trio.MemorySendChannel[bytes], scope: trio.CancelScope) -> None:
        decoder = kproto.FrameDecoder(self.broker.config.socket_request_max_bytes)
        async with send:
            while True:
                data = await self.stream.receive_some(READ_SIZE)
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
                        await send.send(frame)
                except DecodeError as exc:
                    self._fail(str(exc))
                except trio.BrokenResourceError:
                    return  # the handler stopped: it knows why

    def _fail(self, reason: str) -> NoReturn:
        """Record why this connection ends, then end it."""
        self.close_reason = self.close_reason or reason
        raise CloseConnection(reason)

    async def _handler(self, receive: trio.MemoryReceiveChannel[bytes], scope: trio.CancelScope) -> None:
        # Responses to pipelined requests are coalesced: while more requests are
        # already queued, small responses wait in `pending` and leave in one send.
        # A send per 60-byte Produce response cost as much as the append itself.
        pending = bytearray()
        async with receive:
            async for frame in receive:
                self.requests += 1
                try:
                    reply = await self._dispatch(frame)
                except CloseConnection:
                    if pending:  # earlier requests were fine: they get their answers
                        await self.stream.send_all(pending)
                    raise
                if isinstance(reply, bytes):
                    pending += reply
                elif reply is not None:
                    if pending:
                        await self.stream.send_all(pending)
                        pending = bytearray()
                    await self._write(reply)
                if pending and (
                    receive.statistics().current_buffer_used == 0 or len(pending) >= COALESCE_BYTES
                ):
                    await self.stream.send_all(pending)
                    pending = bytearray()

    async def _dispatch(self, frame: bytes) -> bytes | RawResponse | None:
        try:
            peek = kproto.peek_request(frame)
        except DecodeError as exc:
            self._fail(str(exc))
        handler = HANDLERS.get(peek.api_key)
        if peek.api_key == ApiKey.API_VERSIONS and (handler is None or not handler.supports(peek.version)):
            # a client newer than us: tell it what we have, in the layout every version reads
            return unsupported_version_response(peek.correlation_id)
        if handler is None or not handler.supports(peek.version):
            self._fail(
                f"unsupported request {kproto.ApiKey.name_of(peek.api_key)} v{peek.version}"
                + ("" if handler is None else f" (supported v{handler.min_version}-v{handler.max_version})")
            )
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
        if isinstance(reply, RawResponse):
            return reply
        return kproto.encode_response(peek.api_key, peek.version, peek.correlation_id, reply)

    async def _write(self, reply: RawResponse) -> None:
        with reply.resources:
            pending = bytearray()
            for part in reply.parts:
                if isinstance(part, FileRegion):
                    if part.length <= 4096:  # a syscall per small region costs more than a copy
                        pending += part.read()
                        continue
                    if pending:
                        await self.stream.send_all(pending)
                        pending = bytearray()
                    await sendfile(self.stream.socket, part.fd, part.position, part.length)
                else:
                    pending += part
            if pending:
                await self.stream.send_all(pending)
