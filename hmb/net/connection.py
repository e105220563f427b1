"""One client connection: read frames, answer them in order, write the answers.

Rules this module keeps, and nothing more (what a frame *means* is the
dispatcher's business, :mod:`hmb.api.dispatch`):

* Back-pressure.  Two tasks share a bounded queue (``queued.max.requests``,
  :mod:`hmb.net.frame_queue`):
  the reader splits the byte stream into frames and blocks when the handler
  falls behind, so a fast client cannot make the broker buffer without limit
  (HMB's unbounded ``Chan`` was a known risk).
* Order.  The handler answers requests one at a time, so responses leave in
  request order, as Kafka guarantees per connection.
* Coalescing.  While more requests are already queued, small responses wait
  and leave in one write: a send per 60-byte Produce response cost as much as
  the append itself.
* Fairness.  Per request the costs that matter are trips through trio's
  scheduler, not bytes: a queued frame is taken without one, and every few
  queued requests the handler yields anyway so other connections get a turn.
* Isolation.  A connection that sends something unusable is closed with a
  logged reason; nobody else notices, and a bug while serving one connection
  ends that connection, never the broker.

The bytes move through a :class:`hmb.net.transport.Transport`, so TLS can
replace plain TCP without changing any of this.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, NoReturn

import trio

import kproto
from hmb.api.context import CloseConnection, RawResponse, Session
from hmb.log.region import FileRegion
from hmb.net.frame_queue import FrameQueue
from kproto import DecodeError

if TYPE_CHECKING:
    from hmb.api.dispatch import Dispatcher
    from hmb.net.transport import Transport

log = logging.getLogger(__name__)

COALESCE_BYTES = 64 * 1024
SMALL_REGION = 4096  # a sendfile per region this small costs more than a copy
_YIELD_EVERY = 16  # queued requests handled back to back before the handler yields regardless


class Connection:
    def __init__(
        self,
        transport: Transport,
        dispatcher: Dispatcher,
        *,
        session: Session | None = None,
        queued_max_requests: int,
        max_frame_size: int,
    ) -> None:
        self.transport = transport
        self.dispatcher = dispatcher
        self.queued_max_requests = queued_max_requests
        self.max_frame_size = max_frame_size
        self.peer = transport.peer
        self.session = Session(peer=self.peer) if session is None else session
        self.requests = 0
        self.close_reason: str | None = None

    async def run(self) -> None:
        queue = FrameQueue(self.queued_max_requests)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._handler, queue)
                await self._reader(queue)  # in this task: one task less per connection
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
                await self.transport.aclose()

    async def _reader(self, queue: FrameQueue) -> None:
        decoder = kproto.FrameDecoder(self.max_frame_size)
        try:
            while True:
                data = await self.transport.receive_some()
                if not data:
                    # Requests already read are still handled (an acks=0 produce is
                    # appended), but nothing may wait for a client that is gone.
                    self.session.client_gone.set()
                    if decoder.buffered:
                        log.info(
                            "%s disconnected in the middle of a request (%d bytes)",
                            self.peer,
                            decoder.buffered,
                        )
                    return
                decoder.feed(data)
                del data  # an idle connection holds no old bytes
                try:
                    while (frame := decoder.next_frame()) is not None:
                        if not queue.put_nowait(frame):
                            await queue.put(frame)  # the handler is behind: wait for room
                except DecodeError as exc:
                    self._fail(str(exc))
                except trio.BrokenResourceError:
                    return  # the handler stopped: it knows why
        finally:
            queue.close()

    def _fail(self, reason: str) -> NoReturn:
        """Record why this connection ends, then end it."""
        self.close_reason = self.close_reason or reason
        raise CloseConnection(reason)

    async def _handler(self, queue: FrameQueue) -> None:
        pending = bytearray()  # small responses waiting to leave together
        since_yield = 0
        send_all = self.transport.send_all
        try:
            while True:
                frame = queue.take_nowait()
                if frame is None:
                    # nothing queued: answer what is pending, then wait (a checkpoint)
                    if pending:
                        await send_all(pending)
                        pending = bytearray()
                    reply = None  # an idle connection holds no old answer
                    frame = await queue.take()
                    if frame is None:  # the reader is done and everything is answered
                        return
                    since_yield = 0
                else:
                    since_yield += 1
                    if since_yield >= _YIELD_EVERY:
                        since_yield = 0
                        await trio.lowlevel.checkpoint()
                self.requests += 1
                try:
                    reply = await self.dispatcher.dispatch(frame, self.session)
                except CloseConnection as exc:
                    if pending:  # earlier requests were fine: they get their answers
                        await send_all(pending)
                    self._fail(str(exc))
                if self.session.close_after_reply is not None:
                    # this answer is the last (a failed authentication): send it, then close
                    if isinstance(reply, bytes):
                        pending += reply
                    if pending:
                        await send_all(pending)
                    self._fail(self.session.close_after_reply)
                if isinstance(reply, bytes):
                    pending += reply
                    if len(pending) >= COALESCE_BYTES:
                        await send_all(pending)
                        pending = bytearray()
                elif reply is not None:
                    if pending:
                        await send_all(pending)
                        pending = bytearray()
                    await self._write(reply)
        finally:
            queue.abandon()

    async def _write(self, reply: RawResponse) -> None:
        with reply.resources:
            pending = bytearray()
            for part in reply.parts:
                if isinstance(part, FileRegion):
                    if part.length <= SMALL_REGION:
                        pending += part.read()
                        continue
                    if pending:
                        await self.transport.send_all(pending)
                        pending = bytearray()
                    await self.transport.send_file(part.fd, part.position, part.length)
                else:
                    pending += part
            if pending:
                await self.transport.send_all(pending)
