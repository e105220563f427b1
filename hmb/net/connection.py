"""One client connection: read frames, answer them in order, write the answers.

Rules this module keeps, and nothing more (what a frame *means* is the
dispatcher's business, :mod:`hmb.api.dispatch`):

* One task per connection.  The connection's task reads, splits the byte
  stream into frames and answers them one at a time, so responses leave in
  request order, as Kafka guarantees per connection, and an idle connection
  is one task waiting for its socket.  A request is answered by the task
  that read it, without a trip through the scheduler to a second task.
* A watcher beside a waiting handler.  A handler that waits on the client
  (a long-polling Fetch, a JoinGroup or SyncGroup held for a rebalance) asks
  for ``client_gone``; from then on a second task reads for the connection
  (:meth:`Connection._watch`), so that the client's leaving is noticed while
  the handler waits.  It reads ahead into a bounded queue
  (``queued.max.requests``, :mod:`hmb.net.frame_queue`) and blocks when the
  handler falls behind, so a fast client cannot make the broker buffer
  without limit.  The watcher stays until the connection ends.
* Back-pressure without a watcher: the task reads only when every frame
  already read is answered.
* Coalescing.  While more requests are already read, small responses wait
  and leave in one write: a send per 60-byte Produce response cost as much as
  the append itself.
* Fairness.  Per request the costs that matter are trips through trio's
  scheduler, not bytes: a frame already read is taken without one.  Before
  the dispatcher sees a frame the task passes the broker's fair gate
  (:mod:`hmb.net.fairness`): it bounds how many requests start between two
  polls for I/O, and lets a connection rarely heard from overtake the busy
  ones, so a heartbeat is not queued behind a thousand producers.
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
from hmb.net.fairness import FairGate, Flow
from hmb.net.frame_queue import FrameQueue
from kproto import DecodeError

if TYPE_CHECKING:
    from hmb.api.dispatch import Dispatcher
    from hmb.net.transport import Transport

log = logging.getLogger(__name__)

COALESCE_BYTES = 64 * 1024
SMALL_REGION = 4096  # a sendfile per region this small costs more than a copy


class _Watcher:
    """The second task of a connection whose handler waits on the client: it reads ahead."""

    __slots__ = ("done", "queue", "scope")

    def __init__(self, limit: int) -> None:
        self.queue = FrameQueue(limit)
        self.scope = trio.CancelScope()  # the connection's end cancels it
        self.done = trio.Event()  # the connection closes its transport only after this


class Connection(Flow):
    def __init__(
        self,
        transport: Transport,
        dispatcher: Dispatcher,
        *,
        nursery: trio.Nursery,
        gate: FairGate,
        session: Session | None = None,
        queued_max_requests: int,
        max_frame_size: int,
    ) -> None:
        self.transport = transport
        self.dispatcher = dispatcher
        self.nursery = nursery  # where a watcher runs, should a handler wait on the client
        self.gate = gate  # shared by every connection of the broker: who is handled next
        self.queued_max_requests = queued_max_requests
        self.peer = transport.peer
        self.session = Session(peer=self.peer) if session is None else session
        self.session.watch_client = self._watch
        self.requests = 0
        self.close_reason: str | None = None
        self._decoder = kproto.FrameDecoder(max_frame_size)
        self._watcher: _Watcher | None = None
        self._ended = False
        self._dispatching = False  # a handler runs: the connection's task is not reading

    async def run(self) -> None:
        try:
            await self._serve()
        except CloseConnection as exc:
            self.close_reason = self.close_reason or str(exc)
        except (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError):
            if self.close_reason is None:
                log.debug("connection from %s broke", self.peer)
        except Exception:
            # a bug in a handler ends this connection, never the broker
            log.exception("internal error serving %s; connection closed", self.peer)
        finally:
            self._ended = True
            self.session.watch_client = None
            if self.close_reason is not None:
                log.warning("closing connection from %s: %s", self.peer, self.close_reason)
            watcher = self._watcher
            if watcher is None and self.transport.closes_at_once:
                # the common end: nothing to wait for (a cancel scope per connection cost
                # a tenth of the CPU of opening one)
                await self.transport.aclose()
            else:
                with trio.CancelScope(shield=True):
                    if watcher is not None:
                        watcher.queue.abandon()
                        watcher.scope.cancel()
                        await watcher.done.wait()  # never close a socket another task may still read
                    await self.transport.aclose()

    def _fail(self, reason: str) -> NoReturn:
        """Record why this connection ends, then end it."""
        self.close_reason = self.close_reason or reason
        raise CloseConnection(reason)

    def _read_frame(self) -> bytes | None:
        """The next frame already read, without waiting; None when there is none."""
        if self._watcher is not None:
            return self._watcher.queue.take_nowait()
        try:
            return self._decoder.next_frame()
        except DecodeError as exc:
            self._fail(str(exc))

    async def _wait_frame(self) -> bytes | None:
        """The next frame, reading (or waiting for the watcher) as needed; None at the end."""
        while True:
            watcher = self._watcher
            if watcher is not None:
                return await watcher.queue.take()
            data = await self.transport.receive_some()
            if not data:
                self._client_left()
                return None
            self._decoder.feed(data)
            del data  # an idle connection holds no old bytes
            frame = self._read_frame()
            if frame is not None:
                return frame

    def _client_left(self) -> None:
        # Requests already read are still handled (an acks=0 produce is appended),
        # but nothing may wait for a client that is gone.
        self.session.client_gone.set()
        if self._decoder.buffered:
            log.info(
                "%s disconnected in the middle of a request (%d bytes)", self.peer, self._decoder.buffered
            )

    async def _serve(self) -> None:
        pending = bytearray()  # small responses waiting to leave together
        send_all = self.transport.send_all
        gate = self.gate
        carries_data = self.dispatcher.carries_data
        while True:
            try:
                frame = self._read_frame()
            except CloseConnection:
                if pending:  # the requests before the unusable bytes get their answers
                    await send_all(pending)
                raise
            if frame is None:
                # nothing read yet: answer what is pending, then wait (a checkpoint)
                if pending:
                    await send_all(pending)
                    pending = bytearray()
                reply = None  # an idle connection holds no old answer
                frame = await self._wait_frame()
                if frame is None:  # the client is done and everything is answered
                    return
            control = not carries_data(frame)
            while not gate.admit_now(self, control):
                if gate.alone(self):
                    # alone at the gate (one busy producer): one poll for I/O renews the
                    # turn; no queue, no gate task, and the answers keep coalescing
                    await trio.lowlevel.checkpoint()
                    continue
                if pending:  # answers already made do not wait for this request's turn
                    await send_all(pending)
                    pending = bytearray()
                await gate.wait_turn(self, control)
                break
            self.requests += 1
            self._dispatching = True
            try:
                reply = await self.dispatcher.dispatch(frame, self.session)
            except CloseConnection as exc:
                if pending:  # earlier requests were fine: they get their answers
                    await send_all(pending)
                self._fail(str(exc))
            finally:
                self._dispatching = False
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

    def _watch(self) -> None:
        """A handler waits on the client: from now on a second task reads for this connection.

        Only while a request is being handled: otherwise the connection's own
        task is the one reading (or about to), and it notices the client leave.
        """
        if self._watcher is not None or self._ended or not self._dispatching:
            return
        watcher = self._watcher = _Watcher(self.queued_max_requests)
        self.nursery.start_soon(self._watcher_task, watcher)

    async def _watcher_task(self, watcher: _Watcher) -> None:
        """Read ahead into the watcher's queue; set ``client_gone`` when the client leaves.

        Never raises (it runs in the server's nursery).  An unusable stream ends
        the connection with the reason recorded: ``client_gone`` ends a handler
        waiting on the client, the closed queue ends the connection's task once
        it has answered the frames read before the unusable bytes.
        """
        queue = watcher.queue
        try:
            with watcher.scope:
                # the connection's task stopped reading mid-handler: what it read is queued first
                while (frame := self._decoder.next_frame()) is not None:
                    if not queue.put_nowait(frame):
                        await queue.put(frame)
                while not self._ended:
                    data = await self.transport.receive_some()
                    if not data:
                        self._client_left()
                        return
                    self._decoder.feed(data)
                    del data
                    while (frame := self._decoder.next_frame()) is not None:
                        if not queue.put_nowait(frame):
                            await queue.put(frame)  # the handler is behind: wait for room
        except DecodeError as exc:
            self.close_reason = self.close_reason or str(exc)
            self.session.client_gone.set()
        except (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError):
            pass  # the connection has ended, or ends at its next write: it knows why
        except Exception:
            log.exception("internal error reading from %s; connection closed", self.peer)
            self.session.client_gone.set()
        finally:
            queue.close()
            watcher.done.set()

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
